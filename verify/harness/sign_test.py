r"""Exact sign-test statistics of a median paired difference: one-sided bounds, p-values and the sample size
that gives a sign test a stated power.

For i.i.d. :math:`d_1, \dots, d_n` with median :math:`\theta`, the number of :math:`d_i` below :math:`\theta` is
:math:`\mathrm{Bin}(n, 1/2)` (at most that, with ties), which makes order statistics exact confidence bounds for
:math:`\theta` at every :math:`n`, with no assumption on the distribution (Hahn & Meeker, *Statistical Intervals*,
1991, section 5.2).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

__all__ = ["POWER", "check_alpha", "critical_count", "needed_replicates", "p_median_above", "p_median_below",
           "sign_bounds"]

#: Power at which the replicates "that would decide" an undecided statement are estimated.
POWER = 0.8


def check_alpha(alpha: float) -> float:
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return float(alpha)


def sign_bounds(d, alpha: float) -> tuple[float, float]:
    r"""One-sided lower and upper confidence bounds, each at level ``alpha``, for the median of ``d``.

    .. math:: L = d_{(k)},\quad U = d_{(n+1-k)},\quad k = \max\{k \ge 1 : P(\mathrm{Bin}(n, \tfrac12) \le k-1)
              \le \alpha\}

    (:math:`-\infty, +\infty` when no such :math:`k` exists, i.e. :math:`2^{-n} > \alpha`). Exact for continuous
    distributions and conservative with ties (Hahn & Meeker 1991, §5.2); :math:`[L, U]` is a two-sided
    interval of level :math:`1 - 2\alpha`.

    Examples
    --------
    >>> lo, hi = sign_bounds(np.arange(1.0, 21.0), 0.05)
    >>> lo <= np.median(np.arange(1.0, 21.0)) <= hi
    True
    """
    x = np.sort(np.asarray(d, dtype=np.float64).ravel())
    if x.size < 1 or not np.all(np.isfinite(x)):
        raise ValueError(f"d must hold at least one finite value, got {x.size} values")
    check_alpha(alpha)
    n = x.size
    k = int(stats.binom.ppf(alpha, n, 0.5))  # smallest j with cdf(j) >= alpha
    while k >= 0 and stats.binom.cdf(k, n, 0.5) > alpha:
        k -= 1
    # now cdf(k) <= alpha (or k = -1): the bound is the (k + 1)-th order statistic
    if k < 0:
        return -math.inf, math.inf
    return float(x[k]), float(x[n - 1 - k])


def p_median_below(d: np.ndarray, c: float) -> float:
    """Exact sign-test p-value of H0: median >= c against H1: median < c (ties at c count against H1)."""
    n_below = int(np.sum(d < c))
    return float(stats.binom.sf(n_below - 1, d.size, 0.5))


def p_median_above(d: np.ndarray, c: float) -> float:
    return float(stats.binom.sf(int(np.sum(d > c)) - 1, d.size, 0.5))


def critical_count(n: int, alpha: float) -> int:
    """Smallest count k with P(Bin(n, 1/2) >= k) <= alpha (n + 1 if none)."""
    k = int(stats.binom.isf(alpha, n, 0.5)) + 1
    while k > 0 and stats.binom.sf(k - 2, n, 0.5) <= alpha:
        k -= 1
    while k <= n and stats.binom.sf(k - 1, n, 0.5) > alpha:
        k += 1
    return k


def needed_replicates(fraction: float, alpha: float, *, power: float = POWER, cap: int = 1_000_000) -> int | None:
    """Replicates at which a sign test at level ``alpha`` has ``power`` when a share ``fraction`` of the
    replicates lies on the tested side; None when ``fraction`` <= 1/2 (no direction to detect) or beyond ``cap``."""
    check_alpha(alpha)
    if not fraction > 0.5:
        return None

    def power_at(n: int) -> float:
        return float(stats.binom.sf(critical_count(n, alpha) - 1, n, min(fraction, 1.0)))

    hi = 2
    while power_at(hi) < power:
        hi *= 2
        if hi > cap:
            return None
    lo = hi // 2
    while hi - lo > 1:  # power is not monotone in n (discreteness); the bisection finds a crossing
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if power_at(mid) >= power else (mid, hi)
    return hi
