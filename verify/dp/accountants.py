r"""Independent oracles for composed Gaussian mechanisms: dp-accounting's PLD and RDP accountants.

For :math:`N` Gaussian rounds the run is exactly one Gaussian mechanism with
:math:`\mu = \sqrt{2\rho_{\text{total}}}`, so fedcheck's exact-Gaussian conversion must agree with a
PLD accountant (up to the accountant's value discretisation, pessimistic by design), and the CKS
conversion must lie at or below the RDP accountant (which optimises CKS over a finite grid of orders).
"""

from __future__ import annotations

import numpy as np

from theory.privacy.accounting import account_rounds, rho_schedule_constant
from verify.evidence import result_from_evidence, sample_evidence
from verify.records import CheckContext, CheckResult, Citation, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import RDP_GRID_RTOL, gamma

__all__ = ["CLAIMS", "PLD_DISCRETIZATION", "check_accountants_agree", "evaluate_accountants"]

#: dp-accounting's PLD value discretisation interval used here (its own accuracy parameter).
PLD_DISCRETIZATION = 1e-4
_PROFILE = {"ci": {"batches": 1, "per_batch": 2}, "thorough": {"batches": 8, "per_batch": 4}}


def evaluate_accountants(noise_multiplier: float, rounds: int, delta: float, *, account=account_rounds) -> Evidence:
    r"""Exact-Gaussian vs PLD and CKS vs RDP for ``rounds`` Gaussian rounds with std/sensitivity ``z``.

    ``measured`` is the largest of :math:`(\varepsilon_{\text{exact}} - \varepsilon_{\text{PLD}})^+ /
    (\gamma\,\varepsilon_{\text{PLD}})`, :math:`(\varepsilon_{\text{PLD}} - \varepsilon_{\text{exact}})/d`
    (:math:`d` the PLD discretisation),
    :math:`(\varepsilon_{\text{CKS}} - \varepsilon_{\text{RDP}})^+/(\gamma\varepsilon)` and
    :math:`(\varepsilon_{\text{RDP}}/\varepsilon_{\text{CKS}} - 1)/0.01`; it must be at most 1.
    """
    acc = account(rho_schedule_constant(1.0, noise_multiplier, rounds), delta)
    e = acc.epsilon
    slack = gamma(4096)  # rounding of fedcheck's own evaluations (helper solves, log-space profile)
    # The PLD accountant sums over its discretised privacy-loss PMF: about (mean + 10 std) / d points on
    # each side of zero for a Gaussian loss N(rho, 2 rho); its rounding is gamma of that count.
    mu = float(np.sqrt(2.0 * acc.rho_total))
    pld_slack = gamma(int(np.ceil(2.0 * (acc.rho_total + 10.0 * mu) / PLD_DISCRETIZATION)) + 4096)
    ratios = [
        max(0.0, e["exact_gaussian"] - e["pld_accountant"]) / ((slack + pld_slack) * e["pld_accountant"]),
        max(0.0, e["pld_accountant"] - e["exact_gaussian"]) / PLD_DISCRETIZATION,
        max(0.0, e["cks"] - e["rdp_accountant"]) / (slack * e["rdp_accountant"]),
        max(0.0, e["rdp_accountant"] / e["cks"] - 1.0) / RDP_GRID_RTOL,
    ]
    measured = max(ratios)
    return Evidence(measured=measured, bound=1.0, holds=measured <= 1.0,
                    parameters={"noise_multiplier": noise_multiplier, "rounds": rounds, "delta": delta,
                                "rho_total": acc.rho_total, **{f"epsilon_{k}": v for k, v in e.items()}})


def _batch(rng: np.random.Generator, count: int, account) -> list[Evidence]:
    return [evaluate_accountants(float(10 ** rng.uniform(0.0, 1.3)), int(rng.integers(1, 301)),
                                 float(10 ** rng.uniform(-10, -2)), account=account) for _ in range(count)]


def _figure(delta: float = 1e-5, noise_multiplier: float = 5.0) -> FigureSpec:
    rounds = np.array([1, 3, 10, 30, 100, 300])
    accounts = [account_rounds(rho_schedule_constant(1.0, noise_multiplier, int(n)), delta) for n in rounds]
    names = ("bun_steinke", "cks", "rdp_accountant", "exact_gaussian", "pld_accountant")
    styles = ("line", "line", "points", "line", "points")
    return FigureSpec(
        name="epsilon_vs_rounds",
        title=rf"$\varepsilon$ after $N$ Gaussian rounds ($\sigma/S = {noise_multiplier:g}$, $\delta = {delta:g}$)",
        xlabel=r"rounds $N$", ylabel=r"$\varepsilon$", xscale="log", yscale="log",
        series=tuple(Series(label=name, x=rounds, y=[a.epsilon[name] for a in accounts], style=style)
                     for name, style in zip(names, styles, strict=True)))


def check_accountants_agree(ctx: CheckContext, *, account=account_rounds) -> CheckResult:
    """Random (z, N, delta) plus the issue's vector (z = 2, N = 100, delta = 1e-5)."""
    p = _PROFILE[ctx.profile]
    evidence = sample_evidence(ctx, "dp.accountants_agree", _batch, p["batches"], (p["per_batch"], account))
    evidence.append(evaluate_accountants(2.0, 100, 1e-5, account=account))
    return result_from_evidence(
        "dp.accountants_agree", evidence, ctx=ctx,
        quantity=r"max normalised disagreement (exact vs PLD, CKS vs RDP); $\le 1$ means agreement",
        what=(r"exact-Gaussian = PLD within discretisation, $\varepsilon_{\mathrm{CKS}} \le "
              r"\varepsilon_{\mathrm{RDP}} \le (1 + 10^{-2})\,\varepsilon_{\mathrm{CKS}}$"),
        figures=[_figure()], details={"pld_value_discretization": PLD_DISCRETIZATION},
        form="identity",
        form_reason=("agreement of two independent implementations (fedcheck's conversions and dp-accounting's "
                     "accountants) within the accountants' own grids, not a bound of the paper"))


CLAIMS = (
    Claim(
        id="dp.accountants_agree",
        paper="dp",
        title="Composed Gaussian rounds: fedcheck's conversions agree with dp-accounting's PLD and RDP accountants",
        citations=(Citation(external="Balle & Wang 2018 (arXiv:1805.06530)", label="Theorem 8"),
                   Citation(external="Canonne, Kamath & Steinke 2020 (arXiv:2004.00010)", label="Proposition 12"),
                   Citation(external="Google dp-accounting (PLD and RDP accountants)", label="independent oracle"),
                   Citation(seed="004_180cd372987d137b.txt", label="Chapter 3 Corollary", lines="608-610")),
        statement=(r"For $N$ Gaussian rounds the exact-Gaussian $\varepsilon$ equals the PLD accountant's within its "
                   r"value discretisation (never above it), and the CKS $\varepsilon$ lies at or below the RDP "
                   "accountant's, within 1% of it."),
        hypotheses=("every round is a Gaussian mechanism", r"$\delta \in (0, 1)$", "add-or-remove accounting units "
                    r"with sensitivity 1 equal to the replace-one $\ell_2$ sensitivity"),
        check=check_accountants_agree,
        expected=Verdict.CONFIRMED,
        reason="Two independent implementations agree; the PLD and RDP gaps are those of the accountants' grids.",
    ),
)
