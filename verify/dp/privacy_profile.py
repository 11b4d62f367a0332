r"""The exact privacy profile of the Gaussian mechanism, checked by Monte Carlo.

For :math:`P = N(0, 1)`, :math:`Q = N(\mu, 1)` (the Gaussian mechanism with :math:`\mu = \Delta/\sigma`)
the hockey-stick divergence is :math:`\delta(\varepsilon) = E_{Y\sim P}[(1 - e^{\varepsilon - Z})_+]`,
:math:`Z = \log p(Y) - \log q(Y)`. Balle & Wang (2018) give it in closed form,
:func:`theory.privacy.gaussian_delta_exact`; the check estimates it from samples of :math:`Y` and the two
log densities (``scipy.stats.norm.logpdf``), without using the law of :math:`Z`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from theory.privacy import gaussian_delta_exact
from verify.evidence import declare_form
from verify.executor import map_seeded
from verify.records import CheckContext, CheckResult, Citation, Claim, FigureSpec, MonteCarlo, Series, Verdict
from verify.tolerance import MC_ALPHA, bonferroni

__all__ = ["CLAIMS", "check_privacy_profile", "hockey_stick_moments"]

#: (mu, epsilons): epsilons chosen so that delta is in [1e-3, 0.6], where Monte Carlo has relative power.
GRID = ((0.5, (0.05, 0.2, 0.5)), (1.0, (0.1, 0.5, 1.0, 1.5)), (2.0, (0.5, 1.5, 3.0)), (3.0, (1.0, 3.0, 5.0)))


def hockey_stick_moments(rng: np.random.Generator, n: int, grid=GRID) -> np.ndarray:
    """Sums of (1 - e^{eps - Z})_+ and of its square over n samples, for every (mu, eps) of ``grid``."""
    y = rng.standard_normal(n)
    rows = []
    for mu, epsilons in grid:
        z = stats.norm.logpdf(y, 0.0, 1.0) - stats.norm.logpdf(y, mu, 1.0)
        for eps in epsilons:
            v = -np.expm1(np.minimum(eps - z, 0.0))   # (1 - e^{eps - Z})_+ without overflow
            rows.append((v.sum(), (v * v).sum()))
    return np.array(rows)


def check_privacy_profile(ctx: CheckContext, *, delta_fn=gaussian_delta_exact) -> CheckResult:
    batches, per_batch = (8, 250_000) if ctx.profile == "ci" else (40, 1_000_000)
    seed = ctx.seed_sequence("dp.gaussian_privacy_profile")
    sums = np.sum(map_seeded(ctx.executor, hockey_stick_moments, seed, batches, (per_batch,)), axis=0)
    n = batches * per_batch
    points = [(mu, eps) for mu, epsilons in GRID for eps in epsilons]
    z_crit = stats.norm.ppf(1.0 - bonferroni(MC_ALPHA, len(points)) / 2.0)
    rows, worst = [], None
    for (mu, eps), (s1, s2) in zip(points, sums, strict=True):
        mean = s1 / n
        se = math.sqrt(max(s2 / n - mean * mean, 0.0) / (n - 1))
        exact = delta_fn(eps, mu)
        score = abs(mean - exact) / (z_crit * se)
        rows.append({"mu": mu, "epsilon": eps, "delta_mc": mean, "standard_error": se, "delta_exact": exact,
                     "gap_over_ci_halfwidth": score})
        if worst is None or score > worst["gap_over_ci_halfwidth"]:
            worst = rows[-1]
    holds = worst["gap_over_ci_halfwidth"] <= 1.0
    series = []
    for mu, epsilons in GRID:
        grid = np.linspace(0.0, max(epsilons) * 1.2, 40)
        series.append(Series(label=rf"exact, $\mu = {mu:g}$", x=grid, y=[delta_fn(float(e), mu) for e in grid],
                             group=str(mu)))
        pts = [r for r in rows if r["mu"] == mu]
        series.append(Series(label=rf"Monte Carlo, $\mu = {mu:g}$", x=[r["epsilon"] for r in pts],
                             y=[r["delta_mc"] for r in pts], style="points", group=str(mu)))
    figure = FigureSpec(name="privacy_profile", title=r"Gaussian mechanism privacy profile $\delta(\varepsilon)$",
                        xlabel=r"$\varepsilon$", ylabel=r"$\delta$", yscale="log", series=tuple(series))
    result = CheckResult(
        claim_id="dp.gaussian_privacy_profile", verdict=Verdict.CONFIRMED if holds else Verdict.REFUTED,
        summary=(rf"{len(points)} $(\mu, \varepsilon)$ points, $n = {n}$: worst |MC $-$ exact| = "
                 f"{worst['gap_over_ci_halfwidth']:.3f} of the {1 - MC_ALPHA:.3%} simultaneous CI half-width"),
        quantity=r"$|\delta_{\mathrm{MC}} - \delta_{\mathrm{exact}}|$ / CI half-width (two-sided, Bonferroni)",
        measured=worst["gap_over_ci_halfwidth"], bound=1.0, margin=1.0 - worst["gap_over_ci_halfwidth"],
        counterexample=None if holds else dict(worst), monte_carlo=MonteCarlo(n=n, alpha=MC_ALPHA, seed=ctx.seed),
        seed=ctx.seed, figures=(figure,), details={"points": rows})
    return declare_form(result, "identity", "an equality (the closed-form profile is exact): a two-sided agreement "
                                            "of Monte-Carlo hockey-stick divergences with it, no slack to measure")


CLAIMS = (
    Claim(
        id="dp.gaussian_privacy_profile", paper="dp",
        title=r"Gaussian mechanism: the exact $(\varepsilon, \delta)$ profile of Balle & Wang",
        citations=(Citation(external="Balle & Wang 2018 (arXiv:1805.06530)", label="Theorem 8"),
                   Citation(seed="004_180cd372987d137b.txt", label="Section 2.4 (the (eps, delta)-DP definition used)",
                            lines="453-464")),
        statement=(r"The Gaussian mechanism with $\mu = \Delta/\sigma$ is $(\varepsilon, \delta)$-DP exactly for "
                   r"$\delta \ge \Phi(\mu/2 - \varepsilon/\mu) - e^{\varepsilon}\,\Phi(-\mu/2 - \varepsilon/\mu)$, "
                   r"the hockey-stick divergence of $\mathcal{N}(0, 1)$ from $\mathcal{N}(\mu, 1)$."),
        hypotheses=(r"$\ell_2$ sensitivity $\Delta$, noise $\mathcal{N}(0, \sigma^2 I)$",
                    r"standard additive-$\delta$ definition"),
        check=check_privacy_profile, expected=Verdict.CONFIRMED,
        reason="Monte-Carlo hockey-stick divergences agree with the closed form within simultaneous 99.9% intervals.",
    ),
)
