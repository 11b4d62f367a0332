r"""The exact privacy profile of the Gaussian mechanism (Balle & Wang 2018, Thm. 8) with mu = sqrt(2 rho):
tight for (adaptive) compositions of Gaussian mechanisms only, and its inverses."""

from __future__ import annotations

import math

import mpmath
from scipy import special

from theory._validate import real_scalar
from theory.privacy.conversions._roots import (
    _MAX_CONDITION,
    _SQRT1_2,
    _conservative_root,
    _step_until_valid,
)
from theory.privacy.conversions.bun_steinke import (
    approx_dp_to_zcdp_bun_steinke,
    zcdp_to_approx_dp_bun_steinke,
)
from theory.privacy.conversions.cks import _increasing_bracket

__all__ = ['gaussian_delta_exact', 'zcdp_to_approx_dp_exact_gaussian', 'approx_dp_to_zcdp_exact_gaussian']


# --------------------------------------------------------------------------------------------------
# Exact privacy profile of the Gaussian mechanism (Balle & Wang 2018)


def _gaussian_profile_candidates(epsilon: float, mu: float) -> tuple[tuple[float, float], tuple[float, float]]:
    r"""Two float evaluations of :math:`\delta_G(\varepsilon;\mu)`, each with its condition number.

    With :math:`a = \mu/2 - \varepsilon/\mu` and :math:`b = a - \mu` (so :math:`b < 0`):

    A. :math:`[\Phi(a) - \Phi(b)] - (e^\varepsilon - 1)\Phi(b)`, the CDF difference by ``erf`` or
       ``erfc``, whichever cancels less. Well conditioned unless :math:`\varepsilon \gg \mu^2`.
    B. :math:`\tfrac12 e^{-a^2/2}[\operatorname{erfcx}(-a/\sqrt2) - \operatorname{erfcx}(-b/\sqrt2)]`,
       exact because :math:`b^2 = a^2 + 2\varepsilon`: the factor :math:`e^\varepsilon` cancels
       analytically. Used for :math:`a < 0`, where A cancels catastrophically.

    The condition number is (sum of the magnitudes of the terms that cancel) / result, so the
    relative rounding error of a candidate is a few ulps times it.
    """
    a = 0.5 * mu - epsilon / mu
    b = a - mu
    phi_b = 0.5 * math.erfc(-b * _SQRT1_2)
    if a >= 0.0:
        diff, cond_diff = 0.5 * (math.erf(a * _SQRT1_2) - math.erf(b * _SQRT1_2)), 1.0  # no cancellation
    else:
        d_erf = 0.5 * (math.erf(a * _SQRT1_2) - math.erf(b * _SQRT1_2))
        d_erfc = 0.5 * (math.erfc(-a * _SQRT1_2) - math.erfc(-b * _SQRT1_2))
        c_erf = abs(math.erf(b * _SQRT1_2)) / (2.0 * d_erf) if d_erf > 0 else math.inf
        c_erfc = math.erfc(-a * _SQRT1_2) / (2.0 * d_erfc) if d_erfc > 0 else math.inf
        diff, cond_diff = (d_erf, c_erf) if c_erf <= c_erfc else (d_erfc, c_erfc)
    if epsilon <= 1.0:
        tail = math.expm1(epsilon) * phi_b
    else:  # (e^eps - 1) Phi(b) <= Phi(a) <= 1 in exact arithmetic, but e^eps alone may overflow
        log_tail = epsilon + math.log1p(-math.exp(-epsilon)) + float(special.log_ndtr(b))
        tail = math.exp(min(log_tail, 0.0))  # > 0 only by rounding; the condition number then rejects A
    value_a = diff - tail
    cond_a = (cond_diff * diff + tail) / value_a if value_a > 0 else math.inf
    cand_a = (math.log(value_a) if value_a > 0 else -math.inf, cond_a)
    if a >= 0.0:
        return cand_a, (-math.inf, math.inf)
    x1 = float(special.erfcx(-a * _SQRT1_2))
    x2 = float(special.erfcx(-b * _SQRT1_2))
    gap = x1 - x2
    if not gap > 0.0:
        return cand_a, (-math.inf, math.inf)
    return cand_a, (-0.5 * a * a + math.log(0.5 * gap), x1 / gap)


def _log_delta_gaussian_mp(epsilon: float, mu: float, digits: int) -> float:
    r"""The profile in ``digits``-digit arithmetic (the float inputs are exact binary numbers).

    The profile is positive for :math:`\mu > 0`; if the difference still cancels to <= 0 the
    precision is doubled (twice), so that a value is never rounded down to 0 for lack of digits.
    """
    for dps in (digits, 2 * digits, 4 * digits):
        with mpmath.workdps(dps):
            e = mpmath.mpf(epsilon)
            m = mpmath.mpf(mu)
            a = m / 2 - e / m
            value = mpmath.ncdf(a) - mpmath.exp(e) * mpmath.ncdf(a - m)
            if value > 0:
                return float(mpmath.log(value))
    return -math.inf


def _log_delta_gaussian(epsilon: float, mu: float) -> float:
    r""":math:`\log\delta_G(\varepsilon;\mu)` (:math:`\mu > 0`), to about 5e-13 relative in :math:`\delta`."""
    (log_a, cond_a), (log_b, cond_b) = _gaussian_profile_candidates(epsilon, mu)
    log_d, cond = (log_a, cond_a) if cond_a <= cond_b else (log_b, cond_b)
    if cond <= _MAX_CONDITION:
        return log_d
    digits = 30 + int(math.log10(cond)) if math.isfinite(cond) else 30 + int(2.0 * abs(math.log10(mu)))
    return _log_delta_gaussian_mp(epsilon, mu, max(30, min(digits, 400)))


def _delta_gaussian(epsilon: float, mu: float) -> float:
    r""":math:`\delta_G(\varepsilon;\mu)` as returned by :func:`gaussian_delta_exact` (:math:`\mu > 0`).

    The converters test admissibility with this value, so ``gaussian_delta_exact(eps, mu) <= delta``
    holds exactly for what they return.
    """
    return math.exp(_log_delta_gaussian(epsilon, mu))


def gaussian_delta_exact(epsilon, mu):
    r"""Exact privacy profile :math:`\delta_G(\varepsilon; \mu)` of the Gaussian mechanism.

    The Gaussian mechanism with :math:`\mu = \Delta/\sigma` is :math:`(\varepsilon, \delta)`-DP
    if and only if :math:`\delta \ge \delta_G(\varepsilon; \mu)`, where

    .. math::

        \delta_G(\varepsilon; \mu) = \Phi\Bigl(\frac{\mu}{2} - \frac{\varepsilon}{\mu}\Bigr)
            - e^{\varepsilon}\,\Phi\Bigl(-\frac{\mu}{2} - \frac{\varepsilon}{\mu}\Bigr) .

    Parameters
    ----------
    epsilon : float
        :math:`\varepsilon \ge 0`.
    mu : float
        :math:`\mu = \Delta/\sigma \ge 0`: :math:`\ell_2` sensitivity over noise standard deviation
        (for a composition of Gaussian mechanisms, :math:`\mu = \sqrt{\sum_i \Delta_i^2/\sigma_i^2}
        = \sqrt{2\rho}`).

    Returns
    -------
    float
        :math:`\delta \in [0, 1)`: 0 when :math:`\mu = 0`; underflows to 0 below about 1e-308.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``mu`` is not in [0, inf).

    Notes
    -----
    :math:`\Phi` is the standard normal CDF. It is the hockey-stick divergence
    :math:`E[(1 - e^{\varepsilon - Z})_+]` with privacy loss :math:`Z \sim \mathcal N(\mu^2/2, \mu^2)`,
    i.e. the :math:`\mu`-GDP trade-off curve (Dong, Roth & Su 2022). Computed in log space without
    overflow: for :math:`\mu/2 - \varepsilon/\mu < 0` through the identity
    :math:`e^{\varepsilon}\Phi(b) = \tfrac12 e^{-a^2/2}\operatorname{erfcx}(-b/\sqrt2)`
    (:math:`a, b` the two arguments), which removes the cancellation between the two terms that the
    form :math:`\exp(\varepsilon + \log\Phi(b))` suffers when :math:`\varepsilon/\mu` is large; otherwise as a
    difference of CDFs. Each evaluation carries its condition number; above 1e3 (tiny :math:`\mu`,
    large :math:`\varepsilon/\mu^2`) the value is recomputed with mpmath at enough digits. The relative error of
    :math:`\delta` is then a few ulps times min(condition, 1e3) plus the unavoidable
    :math:`u\,|\log\delta|` from rounding the arguments: two-sided, below about 5e-13 where
    :math:`|\log\delta| < 700`. The converters built on it decide admissibility on this value
    (``gaussian_delta_exact(...) <= delta`` as evaluated).

    References
    ----------
    .. [1] Balle & Wang 2018 (arXiv:1805.06530), Theorem 8 (analytic Gaussian mechanism).
    .. [2] docs/papers/dp.md#gaussian-profile.

    Examples
    --------
    At :math:`\varepsilon = 0` the profile is the total-variation distance :math:`2\Phi(\mu/2) - 1`,
    and it equals the hockey-stick integral over the privacy loss:

    >>> from scipy import integrate, stats
    >>> abs(gaussian_delta_exact(0.0, 1.3) - math.erf(0.65 / math.sqrt(2))) <= 1e-16
    True
    >>> mu, eps = 1.3, 0.7
    >>> z = stats.norm(mu**2 / 2, mu)
    >>> hockey, _ = integrate.quad(lambda x: -math.expm1(eps - x) * z.pdf(x), eps, math.inf, epsabs=0, epsrel=1e-12)
    >>> abs(gaussian_delta_exact(eps, mu) / hockey - 1) <= 1e-10
    True
    """
    epsilon = real_scalar("epsilon", epsilon, "[0, inf)")
    mu = real_scalar("mu", mu, "[0, inf)")
    if mu == 0.0:
        return 0.0
    return _delta_gaussian(epsilon, mu)


def zcdp_to_approx_dp_exact_gaussian(rho, delta):
    r"""Smallest :math:`\varepsilon` for Gaussian releases of total zCDP :math:`\rho` (exact, Gaussian-only).

    .. math::

        \varepsilon_{\mathrm{Gauss}}(\rho, \delta) = \min\{\varepsilon \ge 0 :
            \delta_G(\varepsilon; \sqrt{2\rho}) \le \delta\} .

    Parameters
    ----------
    rho : float
        Total zCDP parameter :math:`\rho = \sum_i \Delta_i^2/(2\sigma_i^2) \ge 0` of the Gaussian
        releases.
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`\varepsilon \ge 0`; 0 when :math:`\rho = 0` or when already
        :math:`\delta_G(0; \sqrt{2\rho}) \le \delta`.

    Raises
    ------
    ValueError
        If ``rho`` is not in [0, inf) or ``delta`` is not in (0, 1).

    Notes
    -----
    **Valid only for (adaptive) compositions of Gaussian mechanisms**, whose privacy loss is
    exactly :math:`\mathcal N(\rho, 2\rho)` (Dong, Roth & Su 2022: :math:`\mu_i`-GDP compose to
    :math:`\sqrt{\sum\mu_i^2}`-GDP) — e.g. zCDP-NFL and PGFL, where every release is a Gaussian
    mechanism. It is *not* a valid conversion for an arbitrary :math:`\rho`-zCDP mechanism; use
    :func:`zcdp_to_approx_dp_cks` there. For Gaussians it is tight, hence
    :math:`\varepsilon_{\mathrm{Gauss}} \le \varepsilon_{\mathrm{CKS}} \le \varepsilon_{\mathrm{BS}}`.
    Root-finding (brentq on :math:`\log\delta_G`, bracketed by :math:`[0, \varepsilon_{\mathrm{BS}}]`)
    returns the end of its few-ulp bracket where :math:`\delta_G(\varepsilon) \le \delta` holds as
    evaluated: the error makes :math:`\varepsilon` larger (conservative).

    References
    ----------
    .. [1] Balle & Wang 2018, Theorem 8, with :math:`\mu = \sqrt{2\rho}` (Bun & Steinke 2016, Prop. 1.6).
    .. [2] docs/papers/dp.md#conversions.

    Examples
    --------
    The returned :math:`\varepsilon` meets :math:`\delta` (and a hair less does not):

    >>> rho, delta = 0.2, 1e-5
    >>> eps = zcdp_to_approx_dp_exact_gaussian(rho, delta)
    >>> mu = math.sqrt(2 * rho)
    >>> gaussian_delta_exact(eps, mu) <= delta < gaussian_delta_exact(eps * (1 - 1e-9), mu)
    True
    """
    rho = real_scalar("rho", rho, "[0, inf)")
    delta = real_scalar("delta", delta, "(0, 1)")
    if rho == 0.0:
        return 0.0
    mu = math.sqrt(2.0 * rho)
    log_delta = math.log(delta)

    def excess(eps: float) -> float:
        return _log_delta_gaussian(eps, mu) - log_delta

    def valid(eps: float) -> bool:
        return _delta_gaussian(eps, mu) <= delta

    if valid(0.0):
        return 0.0
    hi = zcdp_to_approx_dp_bun_steinke(rho, delta)
    while not valid(hi):  # never taken when Bun-Steinke is valid for Gaussians (it is)
        hi *= 2.0
    return _conservative_root(excess, 0.0, hi, valid, toward=+1)


def _mu_exact(epsilon: float, delta: float) -> float:
    r"""Largest :math:`\mu` with :math:`\delta_G(\varepsilon;\mu) \le \delta` (conservative: errs smaller)."""
    log_delta = math.log(delta)

    def excess(log_mu: float) -> float:
        return _log_delta_gaussian(epsilon, math.exp(log_mu)) - log_delta

    def valid(mu: float) -> bool:
        return mu == 0.0 or _delta_gaussian(epsilon, mu) <= delta

    if epsilon == 0.0:
        # delta_G(0; mu) = erf(mu / (2 sqrt 2)): closed form, then nudged to the admissible side.
        return _step_until_valid(2.0 * math.sqrt(2.0) * float(special.erfinv(delta)), valid, toward=-1)
    start = math.sqrt(2.0 * approx_dp_to_zcdp_bun_steinke(epsilon, delta))
    if not start > 0.0:
        # Bun-Steinke's rho underflows to 0 at a tiny epsilon (1e-300): start from epsilon = 0's closed form instead,
        # which is admissible at every epsilon > 0 (delta_G decreases in epsilon); the bracket used to stay at 0
        start = 2.0 * math.sqrt(2.0) * float(special.erfinv(delta))
    lo, hi = _increasing_bracket(valid, start)
    if lo == 0.0:
        return 0.0
    log_mu = _conservative_root(excess, math.log(lo), math.log(hi), lambda s: valid(math.exp(s)), toward=-1)
    return _step_until_valid(math.exp(log_mu), valid, toward=-1)


def approx_dp_to_zcdp_exact_gaussian(epsilon, delta):
    r"""Largest total :math:`\rho` of Gaussian releases that is :math:`(\varepsilon, \delta)`-DP.

    .. math::

        \rho_{\mathrm{Gauss}}(\varepsilon, \delta) = \tfrac12\mu^{\ast 2}, \qquad
        \mu^\ast = \max\{\mu \ge 0 : \delta_G(\varepsilon; \mu) \le \delta\} .

    Parameters
    ----------
    epsilon : float
        Target :math:`\varepsilon \ge 0`.
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`\rho \ge 0`; at :math:`\varepsilon = 0` it is :math:`4\,\mathrm{erf}^{-1}(\delta)^2`.

    Raises
    ------
    ValueError
        If ``epsilon`` is not in [0, inf) or ``delta`` is not in (0, 1).

    Notes
    -----
    Valid only for compositions of Gaussian mechanisms (see
    :func:`zcdp_to_approx_dp_exact_gaussian`). :math:`\delta_G` is increasing in :math:`\mu`;
    :math:`\mu^\ast` is bracketed from the Bun-Steinke value, found by brentq in :math:`\log\mu`
    and moved to the admissible end of its few-ulp bracket; :math:`\rho` is then decreased by
    ulps until :math:`\delta_G(\varepsilon; \sqrt{2\rho}) \le \delta` holds as evaluated. The error
    makes :math:`\rho` smaller (conservative).

    References
    ----------
    .. [1] Balle & Wang 2018, Theorem 8; docs/papers/dp.md#conversions.

    Examples
    --------
    >>> rho = approx_dp_to_zcdp_exact_gaussian(1.0, 1e-5)
    >>> zcdp_to_approx_dp_exact_gaussian(rho, 1e-5) <= 1.0
    True
    >>> gaussian_delta_exact(1.0, math.sqrt(2 * rho * (1 + 1e-9))) > 1e-5
    True
    """
    epsilon = real_scalar("epsilon", epsilon, "[0, inf)")
    delta = real_scalar("delta", delta, "(0, 1)")
    return _step_until_valid(0.5 * _mu_exact(epsilon, delta) ** 2,
                             lambda rho: _delta_gaussian(epsilon, math.sqrt(2.0 * rho)) <= delta, toward=-1)
