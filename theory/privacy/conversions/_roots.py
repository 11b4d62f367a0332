"""Shared numerics of the conversions: tolerances, logarithms and conservative root-finding."""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy import optimize

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
