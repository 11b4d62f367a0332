r"""Canonne, Kamath & Steinke 2020, Prop. 12 / Cor. 13: the tightest conversion valid for every rho-zCDP
mechanism (an infimum over the Renyi order), and its inverse."""

from __future__ import annotations

import math
from collections.abc import Callable

from theory._validate import real_scalar
from theory.privacy.conversions._roots import (
    _RTOL,
    _brentq,
    _conservative_root,
    _log_l,
    _step_until_valid,
)
from theory.privacy.conversions.bun_steinke import (
    approx_dp_to_zcdp_bun_steinke,
)

__all__ = ['zcdp_delta_cks', 'zcdp_to_approx_dp_cks', 'approx_dp_to_zcdp_cks']


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
    .. [2] docs/papers/dp.md#conversions.

    Examples
    --------
    Consistent with the :math:`\delta` form, and tighter than Bun-Steinke:

    >>> eps = zcdp_to_approx_dp_cks(0.2, 1e-5)
    >>> abs(zcdp_delta_cks(0.2, eps) / 1e-5 - 1.0) < 1e-12
    True
    >>> from theory.privacy.conversions import zcdp_to_approx_dp_bun_steinke
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
       ``cdp2adp.py`` (``cdp_rho``). docs/papers/dp.md#conversions.

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
