r"""Conversions between zero-concentrated DP (zCDP) and approximate :math:`(\varepsilon, \delta)`-DP.

Three zCDP :math:`\to (\varepsilon, \delta)` converters, from loosest to tightest, with their inverses:

* Bun & Steinke 2016, Prop. 1.3 (the conversion the papers use: seed 000 eq. (51), seed 004 Chapter 3
  Corollary): valid for every :math:`\rho`-zCDP mechanism, closed form;
* Canonne, Kamath & Steinke 2020, Prop. 12 / Cor. 13: valid for every :math:`\rho`-zCDP mechanism,
  an infimum over the Rényi order, computed numerically;
* the exact privacy profile of the Gaussian mechanism (Balle & Wang 2018, Thm. 8) with
  :math:`\mu = \sqrt{2\rho}`: valid **only** for (adaptive) compositions of Gaussian mechanisms, for
  which it is tight.

Plus the Gaussian-mechanism noise calibrations for :math:`(\varepsilon, \delta)`-DP that fedcheck's
baselines use: classical (Dwork & Roth 2014, Thm. A.1) and analytic (Balle & Wang 2018).

Every numerically computed quantity errs on the safe side: a converter never returns an
:math:`\varepsilon` (or :math:`\delta`, or :math:`\sigma`) below the true value, nor a :math:`\rho`
above it, beyond the rounding of its last floating-point evaluation. Natural logarithms
throughout; ``rho`` is the zCDP parameter (the papers' :math:`\phi` / :math:`\varphi`, see
shared/spec/dp_background.md section 0).

References
----------
.. [BS16] M. Bun and T. Steinke, "Concentrated differential privacy: simplifications, extensions,
   and lower bounds", TCC 2016-B, arXiv:1605.02065, Proposition 1.3.
.. [CKS20] C. Canonne, G. Kamath and T. Steinke, "The discrete Gaussian for differential privacy",
   NeurIPS 2020, arXiv:2004.00010, Proposition 12 and Corollary 13 (Section 2.3).
.. [BW18] B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential privacy:
   analytical calibration and optimal denoising", ICML 2018, arXiv:1805.06530, Theorem 8.
.. [DR14] C. Dwork and A. Roth, *The Algorithmic Foundations of Differential Privacy*, 2014,
   Theorem A.1.
.. [M17] I. Mironov, "Rényi differential privacy", CSF 2017, Proposition 3.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
from scipy import optimize, special

from theory._validate import real_scalar

__all__ = [
    "approx_dp_to_zcdp_bun_steinke",
    "approx_dp_to_zcdp_cks",
    "approx_dp_to_zcdp_exact_gaussian",
    "gaussian_delta_exact",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classical",
    "zcdp_delta_cks",
    "zcdp_to_approx_dp_bun_steinke",
    "zcdp_to_approx_dp_cks",
    "zcdp_to_approx_dp_exact_gaussian",
]

_EPS = 2.0**-52
#: Relative tolerance handed to every root-finder (brentq's smallest admissible value).
_RTOL = 4.0 * _EPS
#: Absolute tolerance handed to brentq: effectively zero, so that ``_RTOL`` governs.
_XTOL = 1e-300
_SQRT1_2 = math.sqrt(0.5)
#: Above this condition number (relative rounding error / u) the Gaussian profile is recomputed
#: with mpmath, so its relative error stays below a few times 1e3 u (~5e-13) everywhere.
_MAX_CONDITION = 1e3


# --------------------------------------------------------------------------------------------------
# Shared numerics


def _log_l(delta: float) -> float:
    """:math:`L = \\log(1/\\delta) > 0` for :math:`\\delta \\in (0, 1)` (log1p near 1)."""
    return -math.log1p(delta - 1.0) if delta > 0.5 else -math.log(delta)


def _brentq(fun: Callable[[float], float], lo: float, hi: float, xtol: float = _XTOL) -> float:
    """brentq for an increasing or decreasing ``fun``; an end is returned if rounding leaves no sign change there."""
    f_lo, f_hi = fun(lo), fun(hi)
    if f_lo == 0.0 or f_lo * f_hi > 0.0:
        return lo if abs(f_lo) <= abs(f_hi) else hi
    if f_hi == 0.0:
        return hi
    return optimize.brentq(fun, lo, hi, xtol=xtol, rtol=_RTOL, maxiter=500)


def _conservative_root(fun: Callable[[float], float], lo: float, hi: float,
                       valid: Callable[[float], bool], toward: int) -> float:
    r"""Root of a continuous monotone ``fun`` on ``[lo, hi]``, moved to the side where ``valid`` holds.

    ``fun(lo)`` and ``fun(hi)`` must have opposite signs; ``valid`` must be true on the side of the
    root given by ``toward`` (+1: at and above the root, -1: at and below) and in particular at
    that end of the bracket. brentq stops within ``_RTOL`` relative; the estimate is then moved
    by 1, 2, 4, ... ulps-sized steps until ``valid`` holds, so the value returned is the
    conservative end of a bracket of the root whose width is a few ulps.
    """
    x = _brentq(fun, lo, hi)
    end = hi if toward > 0 else lo
    step = max(abs(x), _XTOL) * _EPS
    for _ in range(200):
        if (toward > 0 and x >= end) or (toward < 0 and x <= end):
            return end
        if valid(x):
            return x
        x += toward * step
        step *= 2.0
    return end


def _step_until_valid(x: float, valid: Callable[[float], bool], toward: int) -> float:
    """Move ``x > 0`` by 1, 2, 4, ... ulps (``toward`` = +1 up, -1 down, stopping at 0) until ``valid(x)``.

    Used after a final rounding (``exp``, a square, a division) that may cross the boundary of the
    admissible set; the overshoot is at most twice the distance needed.
    """
    step = math.ulp(x)
    while x > 0.0 and not valid(x):
        x = max(0.0, x + toward * step)
        step *= 2.0
    return x


# --------------------------------------------------------------------------------------------------
# Bun & Steinke 2016, Proposition 1.3


def zcdp_to_approx_dp_bun_steinke(rho, delta):
    r""":math:`\varepsilon` of the Bun-Steinke conversion: :math:`\rho`-zCDP implies :math:`(\varepsilon, \delta)`-DP.

    .. math::

        \varepsilon_{\mathrm{BS}}(\rho, \delta) = \rho + 2\sqrt{\rho \log(1/\delta)} .

    Parameters
    ----------
    rho : float
        zCDP parameter :math:`\rho \ge 0` of the mechanism (for a composition: the sum of the
        per-step parameters).
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`\varepsilon \ge 0`; exactly 0 when :math:`\rho = 0`.

    Raises
    ------
    ValueError
        If ``rho`` is not in [0, inf) or ``delta`` is not in (0, 1).

    Notes
    -----
    Hypotheses: the mechanism is :math:`\rho`-zCDP (no approximate-zCDP slack
    :math:`\xi`; for :math:`(\xi, \rho)`-zCDP add :math:`\xi`). Valid for every such mechanism.
    It is Mironov's RDP conversion :math:`\alpha\rho + \log(1/\delta)/(\alpha-1)` [M17] at its
    optimal order :math:`\alpha^\ast = 1 + \sqrt{\log(1/\delta)/\rho}`. Closed form: relative
    rounding error of a few ulps. Equivalent :math:`\delta` form (for
    :math:`\varepsilon \ge \rho`): :math:`\delta = \exp(-(\varepsilon-\rho)^2/(4\rho))`.

    References
    ----------
    .. [1] Bun & Steinke 2016 (arXiv:1605.02065), Proposition 1.3.
    .. [2] seed 000_133b71fd0aa99eb4.txt (PGFL), eq. (51), line 402: the same formula with
       :math:`\rho` the total of Theorem IV (cited there as "[38, Theorem 3]").
    .. [3] seed 004_180cd372987d137b.txt, Chapter 3 Corollary, lines 608-610 (cited as
       "[38, Proposition 1.3]").

    Examples
    --------
    The :math:`\delta` form recovers :math:`\delta`:

    >>> rho, delta = 0.2, 1e-5
    >>> eps = zcdp_to_approx_dp_bun_steinke(rho, delta)
    >>> abs(math.exp(-(eps - rho) ** 2 / (4 * rho)) - delta) <= 1e-14 * delta
    True
    """
    rho = real_scalar("rho", rho, "[0, inf)")
    delta = real_scalar("delta", delta, "(0, 1)")
    if rho == 0.0:
        return 0.0
    return rho + 2.0 * math.sqrt(rho * _log_l(delta))


def approx_dp_to_zcdp_bun_steinke(epsilon, delta):
    r"""Largest :math:`\rho` whose Bun-Steinke conversion gives :math:`(\varepsilon, \delta)`-DP.

    Inverse of :func:`zcdp_to_approx_dp_bun_steinke` in :math:`\rho`, with :math:`L = \log(1/\delta)`:

    .. math::

        \rho_{\mathrm{BS}}(\varepsilon, \delta) = \bigl(\sqrt{L + \varepsilon} - \sqrt{L}\bigr)^2
            = \frac{\varepsilon^2}{\bigl(\sqrt{L + \varepsilon} + \sqrt{L}\bigr)^2} .

    Parameters
    ----------
    epsilon : float
        Target :math:`\varepsilon \ge 0`.
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`\rho \ge 0` (0 when :math:`\varepsilon = 0`).

    Raises
    ------
    ValueError
        If ``epsilon`` is not in [0, inf) or ``delta`` is not in (0, 1).

    Notes
    -----
    The second form is used: it has no cancellation, so the relative rounding error is a few
    ulps. The map :math:`\rho \mapsto \varepsilon_{\mathrm{BS}}` is strictly increasing, so this
    is the largest admissible :math:`\rho`.

    References
    ----------
    .. [1] Bun & Steinke 2016, Proposition 1.3 (solved for :math:`\rho`); shared/spec/dp_background.md 7.4 item 7.

    Examples
    --------
    >>> rho = approx_dp_to_zcdp_bun_steinke(1.0, 1e-5)
    >>> abs(zcdp_to_approx_dp_bun_steinke(rho, 1e-5) - 1.0) <= 1e-15
    True
    """
    epsilon = real_scalar("epsilon", epsilon, "[0, inf)")
    delta = real_scalar("delta", delta, "(0, 1)")
    big_l = _log_l(delta)
    return epsilon**2 / (math.sqrt(big_l + epsilon) + math.sqrt(big_l)) ** 2


# --------------------------------------------------------------------------------------------------
# Canonne, Kamath & Steinke 2020, Proposition 12 / Corollary 13


def _softplus(x: float) -> float:
    r""":math:`\log(1 + e^x)` without overflow or underflow."""
    return x + math.log1p(math.exp(-x)) if x > 0.0 else math.log1p(math.exp(x))


def _log_delta_cks_at(rho: float, epsilon: float, t: float) -> float:
    r""":math:`\log` of the CKS :math:`\delta` bound at order :math:`\alpha = 1 + t` (valid for every :math:`t > 0`)."""
    return t * ((1.0 + t) * rho - epsilon - math.log1p(1.0 / t)) - math.log1p(t)


def _log_delta_cks_at_log(rho: float, epsilon: float, s: float) -> float:
    r"""The same at :math:`t = e^s`, for any real :math:`s` (:math:`t` may underflow: the bound is then 1)."""
    t = math.exp(s)
    return t * ((1.0 + t) * rho - epsilon - _softplus(-s)) - math.log1p(t)


def _eps_cks_at(rho: float, big_l: float, t: float) -> float:
    r"""The CKS :math:`\varepsilon` bound at order :math:`\alpha = 1 + t`, any :math:`t > 0` (may be < 0)."""
    return (1.0 + t) * rho - math.log1p(1.0 / t) + (big_l - math.log1p(t)) / t


def _eps_cks_raw(rho: float, big_l: float) -> float:
    r"""CKS :math:`\varepsilon` at the numerically optimal order, before clipping at 0 (:math:`\rho > 0`).

    The stationarity condition :math:`h(t) = \rho t^2 + \log(1+t) - L = 0` has one root, in
    :math:`[2L/(1+\sqrt{1+4\rho L}),\ \sqrt{L/\rho}]`; it is found in :math:`\log t`.
    """
    t_lo = 2.0 * big_l / (1.0 + math.sqrt(1.0 + 4.0 * rho * big_l))
    t_hi = math.sqrt(big_l) / math.sqrt(rho)
    if t_hi <= t_lo:
        t = t_hi
    else:
        log_rho = math.log(rho)
        s = _brentq(lambda s: math.exp(2.0 * s + log_rho) + _softplus(s) - big_l,
                    math.log(t_lo), math.log(t_hi), xtol=_RTOL)
        t = math.exp(s)
    return _eps_cks_at(rho, big_l, t)


def zcdp_delta_cks(rho, epsilon):
    r""":math:`\delta` of the Canonne-Kamath-Steinke conversion of :math:`\rho`-zCDP at a given :math:`\varepsilon`.

    .. math::

        \delta_{\mathrm{CKS}}(\rho, \varepsilon) = \inf_{\alpha > 1}
            \frac{\exp\bigl((\alpha-1)(\alpha\rho - \varepsilon)\bigr)}{\alpha - 1}
            \Bigl(1 - \frac1\alpha\Bigr)^{\alpha} .

    Parameters
    ----------
    rho : float
        zCDP parameter :math:`\rho \ge 0`.
    epsilon : float
        :math:`\varepsilon \ge 0`.

    Returns
    -------
    float
        :math:`\delta \in [0, 1]`: 0 when :math:`\rho = 0`; may underflow to 0 below about
        1e-308 (the true value is positive there).

    Raises
    ------
    ValueError
        If ``rho`` or ``epsilon`` is not in [0, inf).

    Notes
    -----
    Hypotheses: the mechanism is :math:`\rho`-zCDP (any such mechanism). Every order
    :math:`\alpha > 1` gives a valid :math:`\delta`; the log of the objective is strictly convex in
    :math:`\alpha`, with stationarity condition :math:`(2\alpha-1)\rho - \varepsilon + \log(1-1/\alpha) = 0`,
    solved with brentq in :math:`\log(\alpha - 1)` to relative tolerance :math:`4\epsilon_{mach}`.
    The bound is then **evaluated at the order found**, so the optimisation error makes
    :math:`\delta` larger (conservative); it is second order in the order's error (about
    :math:`10^{-30}` relative). What remains is the rounding of the final evaluation, a few ulps
    of :math:`|\log\delta|`. Everything is computed in :math:`\log(\alpha-1)`, so an optimal
    order within 1e-300 of 1 (:math:`\rho - \varepsilon \gtrsim 700`) is handled: the bound is then
    1 to double precision (trivially valid).

    References
    ----------
    .. [1] Canonne, Kamath & Steinke 2020 (arXiv:2004.00010), Proposition 12 and Corollary 13.
    .. [2] Reference implementation ``cdp2adp.py`` (``cdp_delta``) of the same authors.

    Examples
    --------
    No order does better than the infimum, and it beats Bun-Steinke's
    :math:`\exp(-(\varepsilon-\rho)^2/(4\rho))`:

    >>> rho, eps = 0.025, 1.0
    >>> d = zcdp_delta_cks(rho, eps)
    >>> all(d <= math.exp(_log_delta_cks_at(rho, eps, a - 1.0)) for a in (1.5, 5.0, 20.0, 21.0, 22.0, 100.0))
    True
    >>> d < math.exp(-(eps - rho) ** 2 / (4 * rho))
    True
    """
    rho = real_scalar("rho", rho, "[0, inf)")
    epsilon = real_scalar("epsilon", epsilon, "[0, inf)")
    if rho == 0.0:
        return 0.0
    # Stationarity g(s) = (1 + 2t) rho - eps - log(1 + 1/t), t = e^s, increasing in s. Bracket:
    # g <= (1 + 2t) rho - eps + s, negative at s_lo below; g(s_hi) >= 1 + 3 rho - log 2 > 0.
    if epsilon > rho:
        s_lo = math.log(min(1.0, (epsilon - rho) / (4.0 * rho)))
    else:
        s_lo = epsilon - rho - 1.0 - math.log(max(1.0, 2.0 * rho))
    s_hi = _softplus(math.log(epsilon + 1.0) - math.log(2.0 * rho))  # log((eps + 1)/(2 rho) + 1)

    def stationarity(s: float) -> float:
        return (1.0 + 2.0 * math.exp(s)) * rho - epsilon - _softplus(-s)

    s = _brentq(stationarity, s_lo, s_hi, xtol=_RTOL)
    return min(1.0, math.exp(_log_delta_cks_at_log(rho, epsilon, s)))


def zcdp_to_approx_dp_cks(rho, delta):
    r""":math:`\varepsilon` of the Canonne-Kamath-Steinke conversion of :math:`\rho`-zCDP (tighter than Bun-Steinke).

    .. math::

        \varepsilon_{\mathrm{CKS}}(\rho, \delta) = \max\Bigl\{0,\ \inf_{\alpha > 1}\Bigl[\alpha\rho
            + \frac{\log(1/\delta) + (\alpha - 1)\log(1 - 1/\alpha) - \log\alpha}{\alpha - 1}\Bigr]\Bigr\} .

    Parameters
    ----------
    rho : float
        zCDP parameter :math:`\rho \ge 0`.
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`\varepsilon \ge 0`; 0 when :math:`\rho = 0`, and 0 whenever the infimum is negative
        (tiny :math:`\rho`: then :math:`(0, \delta)`-DP already holds).

    Raises
    ------
    ValueError
        If ``rho`` is not in [0, inf) or ``delta`` is not in (0, 1).

    Notes
    -----
    Hypotheses: the mechanism is :math:`\rho`-zCDP (any such mechanism). With
    :math:`t = \alpha - 1` and :math:`L = \log(1/\delta)` the objective is
    :math:`(1+t)\rho - \log(1 + 1/t) + (L - \log(1+t))/t`, whose derivative has the sign of
    :math:`h(t) = \rho t^2 + \log(1+t) - L`, increasing with one root in
    :math:`[2L/(1+\sqrt{1+4\rho L}), \sqrt{L/\rho}]` (the upper end is the Bun-Steinke order, so
    :math:`\varepsilon_{\mathrm{CKS}} < \varepsilon_{\mathrm{BS}}`). The root is found with brentq in
    :math:`\log t` to relative tolerance :math:`4\epsilon_{mach}` and the objective is **evaluated
    at the order found**: the optimisation error only makes :math:`\varepsilon` larger
    (conservative), by a second-order amount far below 1e-12 relative. Clipping at 0 is exact:
    :math:`(\varepsilon, \delta)`-DP with :math:`\varepsilon < 0` implies :math:`(0, \delta)`-DP.
    The :math:`\delta` form is :func:`zcdp_delta_cks`.

    References
    ----------
    .. [1] Canonne, Kamath & Steinke 2020 (arXiv:2004.00010), Proposition 12 / Corollary 13.
    .. [2] shared/spec/dp_background.md 7.4 item 5.

    Examples
    --------
    Consistent with the :math:`\delta` form, and tighter than Bun-Steinke:

    >>> eps = zcdp_to_approx_dp_cks(0.2, 1e-5)
    >>> abs(zcdp_delta_cks(0.2, eps) / 1e-5 - 1.0) < 1e-12
    True
    >>> eps < zcdp_to_approx_dp_bun_steinke(0.2, 1e-5)
    True
    """
    rho = real_scalar("rho", rho, "[0, inf)")
    delta = real_scalar("delta", delta, "(0, 1)")
    if rho == 0.0:
        return 0.0
    return max(0.0, _eps_cks_raw(rho, _log_l(delta)))


def _increasing_bracket(valid: Callable[[float], bool], start: float) -> tuple[float, float]:
    """``(lo, hi)`` with ``valid(lo)`` true and ``valid(hi)`` false, by halving/doubling from ``start > 0``."""
    lo = hi = start
    if valid(start):
        for _ in range(2100):
            hi *= 2.0
            if not valid(hi):
                return hi / 2.0, hi
        raise ArithmeticError(f"no upper bracket found from {start!r}")
    for _ in range(2100):
        lo /= 2.0
        if lo == 0.0 or valid(lo):
            return lo, lo * 2.0
    raise ArithmeticError(f"no lower bracket found from {start!r}")  # pragma: no cover


def approx_dp_to_zcdp_cks(epsilon, delta):
    r"""Largest :math:`\rho` whose CKS conversion gives :math:`(\varepsilon, \delta)`-DP.

    .. math::

        \rho_{\mathrm{CKS}}(\varepsilon, \delta)
            = \sup\{\rho \ge 0 : \varepsilon_{\mathrm{CKS}}(\rho, \delta) \le \varepsilon\} .

    Parameters
    ----------
    epsilon : float
        Target :math:`\varepsilon \ge 0`.
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`\rho \ge 0`. Positive even at :math:`\varepsilon = 0`: a small enough :math:`\rho`
        gives :math:`(0, \delta)`-DP.

    Raises
    ------
    ValueError
        If ``epsilon`` is not in [0, inf) or ``delta`` is not in (0, 1).

    Notes
    -----
    :math:`\varepsilon_{\mathrm{CKS}}` (unclipped) is continuous and strictly increasing in
    :math:`\rho`. The root is bracketed from :math:`\rho_{\mathrm{BS}}(\varepsilon, \delta)`
    (admissible, because :math:`\varepsilon_{\mathrm{CKS}} \le \varepsilon_{\mathrm{BS}}`; at
    :math:`\varepsilon = 0`, from :math:`10^{-3}/\log(1/\delta)`) by doubling or halving, found by
    brentq in :math:`\log\rho`, and then moved to the end of its few-ulp bracket where
    :math:`\varepsilon_{\mathrm{CKS}}(\rho, \delta) \le \varepsilon` holds as evaluated: the returned
    :math:`\rho` errs toward smaller (conservative) values.

    References
    ----------
    .. [1] Canonne, Kamath & Steinke 2020, Corollary 13 (solved for :math:`\rho`); reference code
       ``cdp2adp.py`` (``cdp_rho``). shared/spec/dp_background.md 7.4 item 7.

    Examples
    --------
    The :math:`\rho` returned is admissible, and 1 ppb more is not:

    >>> rho = approx_dp_to_zcdp_cks(1.0, 1e-5)
    >>> zcdp_to_approx_dp_cks(rho, 1e-5) <= 1.0 < zcdp_to_approx_dp_cks(rho * (1 + 1e-9), 1e-5)
    True
    """
    epsilon = real_scalar("epsilon", epsilon, "[0, inf)")
    delta = real_scalar("delta", delta, "(0, 1)")
    big_l = _log_l(delta)

    def excess(log_rho: float) -> float:
        return _eps_cks_raw(math.exp(log_rho), big_l) - epsilon

    def valid(rho: float) -> bool:
        return rho == 0.0 or _eps_cks_raw(rho, big_l) <= epsilon

    start = approx_dp_to_zcdp_bun_steinke(epsilon, delta)
    if start == 0.0:
        start = 1e-3 / big_l  # epsilon == 0: the admissible rho is positive, bracket it from here
    lo, hi = _increasing_bracket(valid, start)
    if lo == 0.0:
        return 0.0
    log_rho = _conservative_root(excess, math.log(lo), math.log(hi),
                                 lambda s: valid(math.exp(s)), toward=-1)
    return _step_until_valid(math.exp(log_rho), valid, toward=-1)  # exp() may round across the boundary


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
    .. [2] shared/spec/dp_background.md 7.2 item 3.

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
    .. [2] shared/spec/dp_background.md 7.4 item 6.

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
    .. [1] Balle & Wang 2018, Theorem 8; shared/spec/dp_background.md 7.4 item 7.

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


# --------------------------------------------------------------------------------------------------
# Gaussian-mechanism calibrations for (epsilon, delta)-DP


def gaussian_sigma_classical(sensitivity, epsilon, delta):
    r"""Classical Gaussian-mechanism noise for :math:`(\varepsilon, \delta)`-DP (Dwork & Roth, Thm. A.1).

    .. math::

        \sigma = \frac{\Delta\sqrt{2\log(1.25/\delta)}}{\varepsilon}, \qquad \varepsilon \in (0, 1) .

    Parameters
    ----------
    sensitivity : float
        :math:`\ell_2` sensitivity :math:`\Delta \ge 0`.
    epsilon : float
        Target :math:`\varepsilon \in (0, 1)`: the theorem does not cover :math:`\varepsilon \ge 1`.
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`\sigma \ge 0` (0 when :math:`\Delta = 0`).

    Raises
    ------
    ValueError
        If ``sensitivity`` is not in [0, inf), ``epsilon`` not in (0, 1) or ``delta`` not in (0, 1).

    Notes
    -----
    Sufficient, not tight: :func:`gaussian_sigma_analytic` is smaller. Outside
    :math:`\varepsilon < 1` the formula is no theorem (numerically it still gives
    :math:`(\varepsilon,\delta)`-DP up to :math:`\varepsilon \approx 8.42` at :math:`\delta = 10^{-5}`,
    then fails); this function refuses it rather than clamp. Closed form, a few ulps.

    References
    ----------
    .. [1] Dwork & Roth 2014, *The Algorithmic Foundations of Differential Privacy*, Theorem A.1.
    .. [2] shared/spec/dp_background.md 7.2 item 2 (fedcheck's choice for the seed's unspecified
       "(epsilon, delta) rules", DB-9).

    Examples
    --------
    The calibration is (ε, δ)-DP by the exact profile:

    >>> sigma = gaussian_sigma_classical(1.0, 0.5, 1e-5)
    >>> gaussian_delta_exact(0.5, 1.0 / sigma) <= 1e-5
    True
    """
    sensitivity = real_scalar("sensitivity", sensitivity, "[0, inf)")
    epsilon = real_scalar("epsilon", epsilon, "(0, 1)")
    # one definition of the printed formula; this function adds the theorem's condition eps < 1
    from theory.privacy.subsampled import noise_multiplier_fedpdm

    return sensitivity * noise_multiplier_fedpdm(epsilon, delta)


def gaussian_sigma_analytic(sensitivity, epsilon, delta):
    r"""Smallest Gaussian-mechanism noise that is :math:`(\varepsilon, \delta)`-DP (analytic Gaussian mechanism).

    .. math::

        \sigma = \min\{\sigma > 0 : \delta_G(\varepsilon; \Delta/\sigma) \le \delta\}
               = \Delta/\mu^\ast(\varepsilon, \delta) .

    Parameters
    ----------
    sensitivity : float
        :math:`\ell_2` sensitivity :math:`\Delta \ge 0`.
    epsilon : float
        Target :math:`\varepsilon \ge 0` (no upper limit, unlike the classical calibration).
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    float
        :math:`\sigma \ge 0` (0 when :math:`\Delta = 0`).

    Raises
    ------
    ValueError
        If ``sensitivity`` or ``epsilon`` is not in [0, inf) or ``delta`` is not in (0, 1).

    Notes
    -----
    Tight (necessary and sufficient). :math:`\mu^\ast` as in :func:`approx_dp_to_zcdp_exact_gaussian`;
    :math:`\sigma` is then increased by ulps until :math:`\delta_G(\varepsilon; \Delta/\sigma) \le \delta`
    holds as evaluated, so numerical error makes :math:`\sigma` larger (conservative).

    References
    ----------
    .. [1] Balle & Wang 2018 (arXiv:1805.06530), Theorem 8 and Algorithm 1 (solved here by
       root-finding instead of their closed-form reparametrisation).

    Examples
    --------
    Admissible, minimal to 1e-9, and below the classical calibration:

    >>> sigma = gaussian_sigma_analytic(1.0, 0.5, 1e-5)
    >>> gaussian_delta_exact(0.5, 1.0 / sigma) <= 1e-5 < gaussian_delta_exact(0.5, 1.0 / (sigma * (1 - 1e-9)))
    True
    >>> sigma < gaussian_sigma_classical(1.0, 0.5, 1e-5)
    True
    """
    sensitivity = real_scalar("sensitivity", sensitivity, "[0, inf)")
    epsilon = real_scalar("epsilon", epsilon, "[0, inf)")
    delta = real_scalar("delta", delta, "(0, 1)")
    if sensitivity == 0.0:
        return 0.0
    return _step_until_valid(sensitivity / _mu_exact(epsilon, delta),
                             lambda sigma: _delta_gaussian(epsilon, sensitivity / sigma) <= delta, toward=+1)
