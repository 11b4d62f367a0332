r"""The Gaussian mechanism is :math:`\Delta^2/(2\sigma^2)`-zCDP, checked by numerical integration.

The oracle integrates the Rényi divergence

.. math::

    D_\alpha(P\|Q) = \frac{1}{\alpha-1}\log\int p(x)^\alpha q(x)^{1-\alpha}\,dx,
    \qquad P = \mathcal N(0,\sigma^2),\; Q = \mathcal N(\Delta,\sigma^2),

with ``scipy.integrate.quad`` on log densities from ``scipy.stats.norm`` (no use of the closed
form). The integrand is evaluated relative to its numerically located mode, so large
:math:`\alpha\Delta/\sigma` neither overflows nor underflows. One dimension suffices: for
isotropic Gaussians only the component along :math:`\mu-\nu` differs.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import integrate, optimize

from theory.privacy import gaussian_zcdp
from verify.evidence import result_from_evidence, sample_evidence
from verify.records import CheckContext, CheckResult, Citation, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import QUAD_EPSREL, UNIT_ROUNDOFF, gamma

__all__ = ["CLAIMS", "ORDERS", "check_gaussian_zcdp", "evaluate_gaussian_zcdp", "renyi_divergence_by_quadrature"]

#: Rényi orders at which every instance is checked.
ORDERS = (1.01, 1.5, 2.0, 4.0, 8.0, 32.0, 128.0)
_PROFILE = {"ci": {"batches": 4, "per_batch": 6}, "thorough": {"batches": 16, "per_batch": 25}}


_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _normal_logpdf(x: float, mean: float, sigma: float) -> float:
    """Log density of N(mean, sigma^2) (scalar; scipy.stats' per-call overhead dominates otherwise)."""
    z = (x - mean) / sigma
    return -0.5 * z * z - math.log(sigma) - _LOG_SQRT_2PI


def renyi_divergence_by_quadrature(sensitivity: float, sigma: float, alpha: float) -> tuple[float, float]:
    r"""Numerical :math:`D_\alpha(\mathcal N(0,\sigma^2)\|\mathcal N(\Delta,\sigma^2))` and its error bound.

    Returns
    -------
    (value, error) : tuple of float
        ``error`` bounds the absolute error: quad's own error estimate, the requested relative
        tolerance (``QUAD_EPSREL``, raised to the integrand's own rounding noise when the log
        densities cancel for large :math:`\alpha\Delta/\sigma`), and the rounding of the log
        densities at the mode, divided by :math:`\alpha - 1`. A quadrature warning is an error.
    """

    def log_integrand(x):
        return alpha * _normal_logpdf(x, 0.0, sigma) + (1.0 - alpha) * _normal_logpdf(x, sensitivity, sigma)

    mode = optimize.minimize_scalar(lambda x: -log_integrand(x), bracket=(-sigma, sensitivity + sigma),
                                    tol=1e-12).x
    peak = float(log_integrand(mode))
    # Size of the terms that cancel in the log integrand near its mode: their rounding (about u times
    # this) is noise in the integrand, so no quadrature can be asked for less relative error.
    magnitude = (alpha * abs(_normal_logpdf(mode, 0.0, sigma))
                 + (alpha - 1.0) * abs(_normal_logpdf(mode, sensitivity, sigma)))
    epsrel = max(QUAD_EPSREL, 16.0 * UNIT_ROUNDOFF * magnitude)
    # Integrate exp(log f(mode + sigma t) - peak) sigma dt over the real line.
    with warnings.catch_warnings():
        warnings.simplefilter("error", integrate.IntegrationWarning)  # never accept a degraded integral
        value, abserr = integrate.quad(lambda t: math.exp(log_integrand(mode + sigma * t) - peak),
                                       -math.inf, math.inf, epsabs=0.0, epsrel=epsrel, limit=200)
    log_integral = peak + math.log(sigma * value)
    error = (abserr / value + epsrel + 8.0 * UNIT_ROUNDOFF * (magnitude + abs(log_integral) + 1.0)) / (alpha - 1.0)
    return log_integral / (alpha - 1.0), error


def evaluate_gaussian_zcdp(sensitivity: float, sigma: float, alpha: float, *, rho_fn=gaussian_zcdp) -> Evidence:
    r"""Compare the numerical :math:`D_\alpha` with :math:`\alpha\rho`, :math:`\rho` = ``rho_fn(Δ, σ)``.

    The claim is an equality (the zCDP parameter is exact), so the two independent evaluations
    must agree within the quadrature's error bound plus the closed form's rounding
    (:math:`\gamma_4`); ``measured`` is their gap divided by that allowance.
    """
    numeric, error = renyi_divergence_by_quadrature(sensitivity, sigma, alpha)
    closed = alpha * rho_fn(sensitivity, sigma)
    allowance = error + gamma(4) * abs(closed)
    gap = abs(numeric - closed)
    ratio = gap / allowance
    return Evidence(measured=ratio, bound=1.0, holds=ratio <= 1.0,
                    parameters={"sensitivity": float(sensitivity), "sigma": float(sigma), "alpha": float(alpha),
                                "renyi_numeric": numeric, "alpha_rho": closed})


def _batch(rng: np.random.Generator, count: int, rho_fn) -> list[Evidence]:
    out = []
    for _ in range(count):
        sigma = float(10.0 ** rng.uniform(-2.0, 2.0))
        ratio = float(10.0 ** rng.uniform(-3.0, 0.5))  # Delta / sigma in [1e-3, 3.2]
        out.extend(evaluate_gaussian_zcdp(ratio * sigma, sigma, a, rho_fn=rho_fn) for a in ORDERS)
    return out


def _figure() -> FigureSpec:
    alphas = np.geomspace(1.01, 128.0, 15)
    series = []
    for delta, sigma in ((1.0, 1.0), (1.0, 2.0), (0.3, 1.0)):
        rho = gaussian_zcdp(delta, sigma)
        series.append(Series(label=rf"$\alpha\rho$, $\Delta = {delta:g}$, $\sigma = {sigma:g}$", x=alphas,
                             y=alphas * rho, group=str(delta) + str(sigma)))
        series.append(Series(label=rf"quadrature, $\Delta = {delta:g}$, $\sigma = {sigma:g}$", x=alphas,
                             y=[renyi_divergence_by_quadrature(delta, sigma, a)[0] for a in alphas], style="points",
                             group=str(delta) + str(sigma)))
    return FigureSpec(name="renyi_divergence", title=r"Gaussian mechanism: Rényi divergence vs $\alpha\rho$",
                      xlabel=r"order $\alpha$", ylabel=r"$D_\alpha$", series=tuple(series), xscale="log",
                      yscale="log")


def check_gaussian_zcdp(ctx: CheckContext, *, rho_fn=gaussian_zcdp) -> CheckResult:
    """Random (Δ, σ) on log scales at every order in ORDERS, plus Δ = σ = 1."""
    p = _PROFILE[ctx.profile]
    evidence = sample_evidence(ctx, "dp.gaussian_zcdp", _batch, p["batches"], (p["per_batch"], rho_fn))
    evidence += [evaluate_gaussian_zcdp(1.0, 1.0, a, rho_fn=rho_fn) for a in ORDERS]
    return result_from_evidence(
        "dp.gaussian_zcdp", evidence, ctx=ctx,
        quantity=(r"$\max |D_\alpha^{\mathrm{quad}} - \alpha\Delta^2/(2\sigma^2)|$ / (quadrature error bound + "
                  "rounding)"),
        what=r"$D_\alpha = \alpha\Delta^2/(2\sigma^2)$ at orders " + ", ".join(f"{a:g}" for a in ORDERS),
        figures=[_figure()],
        details={"orders": list(ORDERS), "quad_epsrel": QUAD_EPSREL},
        form="identity",
        form_reason=("an equality (the zCDP parameter of the Gaussian mechanism is exact): quadrature against the "
                     "closed form within the quadrature's error bound, no slack to measure"),
    )


CLAIMS = (
    Claim(
        id="dp.gaussian_zcdp",
        paper="dp",
        title=r"Gaussian mechanism: $\rho = \Delta^2/(2\sigma^2)$-zCDP",
        citations=(
            Citation(external="Bun & Steinke 2016 (arXiv:1605.02065)", label="Proposition 1.6 and Lemma 2.4"),
            Citation(seed="000_133b71fd0aa99eb4.txt", label="PGFL Theorem III", equation="(46)", lines="374-381"),
            Citation(seed="004_180cd372987d137b.txt", label="Chapter 3 Theorem I; Publication 2 App. B",
                     lines="601-604, 2261"),
        ),
        statement=(r"Releasing $q(D) + \mathcal{N}(0, \sigma^2 I)$ for a query of $\ell_2$ sensitivity $\Delta$ is "
                   r"$\rho$-zCDP with $\rho = \Delta^2/(2\sigma^2)$, and this $\rho$ is exact: "
                   r"$D_\alpha(\mathcal{N}(\mu, \sigma^2 I) \,\|\, \mathcal{N}(\nu, \sigma^2 I)) = "
                   r"\alpha \|\mu - \nu\|_2^2/(2\sigma^2)$ for every $\alpha > 1$."),
        hypotheses=(r"$\sigma > 0$", r"$\Delta \ge 0$", r"$\alpha > 1$", "equal, isotropic covariances"),
        check=check_gaussian_zcdp,
        expected=Verdict.CONFIRMED,
        reason=(r"Numerical integration of the Rényi divergence agrees with $\alpha\rho$ within the "
                r"quadrature's error bound at every sampled $(\Delta, \sigma, \alpha)$."),
    ),
)
