r"""Composition of zCDP over rounds: any schedule, and the geometric schedules the papers use.

zCDP composes additively, also adaptively (Bun & Steinke 2016, Lemma 1.7 and Lemma 2.3): if round
:math:`n` is :math:`\rho^{(n)}`-zCDP given the past, the whole run is :math:`\sum_n \rho^{(n)}`-zCDP.
"""

from __future__ import annotations

import math

from theory._validate import real_scalar, real_vector

__all__ = ["zcdp_compose", "zcdp_total_geometric", "zcdp_total_variance_decay"]


def _rounds(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"rounds must be an integer >= 1, got {value!r}")
    return value


def zcdp_compose(rhos):
    r"""Total zCDP parameter of a sequence of rounds: :math:`\rho = \sum_{n} \rho^{(n)}`.

    Parameters
    ----------
    rhos : array_like of float
        Per-round zCDP parameters :math:`\rho^{(n)} \ge 0` (at least one).

    Returns
    -------
    float
        The exactly rounded sum (``math.fsum``).

    References
    ----------
    .. [1] Bun & Steinke 2016, Lemma 2.3 (adaptive composition); seed 004_180cd372987d137b.txt,
       Theorems 2.3-2.4 and eq. (5.33); seed 003_944125634f6cc0f2.txt, Theorem IV, eq. (48).

    Examples
    --------
    >>> zcdp_compose([0.1, 0.2, 0.3]) == math.fsum([0.1, 0.2, 0.3])
    True
    """
    return math.fsum(real_vector("rhos", rhos, "[0, inf)"))


def zcdp_total_geometric(rho_first, growth, rounds):
    r"""Total zCDP of a geometric schedule :math:`\rho^{(n)} = \rho_1 G^{n-1}`, :math:`n = 1..N`.

    .. math::

        \sum_{n=1}^{N} \rho_1 G^{n-1} = \rho_1 \frac{G^N - 1}{G - 1}
            = \rho_1 \frac{\operatorname{expm1}(N \log G)}{\operatorname{expm1}(\log G)},

    and :math:`N\rho_1` for :math:`G = 1`. The expm1 form has no cancellation for :math:`G \approx 1`.
    Returns ``inf`` when :math:`G^N` exceeds the double range (and :math:`\rho_1 > 0`).

    Parameters
    ----------
    rho_first : float
        :math:`\rho_1 \ge 0`, the zCDP parameter of round 1.
    growth : float
        :math:`G > 0`. Noise variance multiplied by :math:`\zeta` each round gives :math:`G = 1/\zeta`.
    rounds : int
        :math:`N \ge 1`.

    Returns
    -------
    float

    Examples
    --------
    Agrees with the direct sum:

    >>> abs(zcdp_total_geometric(0.5, 1.1, 7) - zcdp_compose([0.5 * 1.1**k for k in range(7)])) < 1e-14
    True
    """
    rho_first = real_scalar("rho_first", rho_first, "[0, inf)")
    growth = real_scalar("growth", growth, "(0, inf)")
    return _geometric_total(rho_first, math.log(growth), _rounds(rounds))


def _geometric_total(rho_first: float, log_growth: float, rounds: int) -> float:
    """sum_{n<N} rho_1 G^n from log G (callers pass an accurately computed log G)."""
    if log_growth == 0.0:
        return rounds * rho_first
    if rounds * log_growth > 709.0:  # G^N overflows a double: the total is +inf
        return 0.0 if rho_first == 0.0 else math.inf
    return rho_first * (math.expm1(rounds * log_growth) / math.expm1(log_growth))


def zcdp_total_variance_decay(rho_initial, zeta, rounds, *, first_release_decayed):
    r"""Total zCDP when the noise variance is multiplied by :math:`\zeta` every round.

    With a fixed sensitivity, :math:`\rho \propto 1/\sigma^2`, so the per-round parameter grows by
    :math:`1/\zeta`. The papers disagree with themselves about which round uses the initial
    variance, so the caller must say:

    * ``first_release_decayed=True`` (PGFL, seed 004 eq. (5.11) and following: the initial variance
      :math:`\delta^{2(0)}` is fixed and :math:`\delta^{2(n)} = \zeta\delta^{2(n-1)}` for the release
      at iteration :math:`n \ge 1`): :math:`\rho^{(n)} = \rho^{(0)}\zeta^{-n}` and

      .. math:: \rho_{\text{total}}(N) = \rho^{(0)} \frac{\zeta^{-N} - 1}{1 - \zeta}.

    * ``first_release_decayed=False`` (round 1 uses the initial variance; seed 000 eq. (51)
      bracket): :math:`\rho^{(n)} = \rho^{(1)}\zeta^{1-n}` and
      :math:`\rho_{\text{total}}(N) = \rho^{(1)}(1-\zeta^N)/(\zeta^{N-1}-\zeta^N)`.

    Parameters
    ----------
    rho_initial : float
        :math:`\rho^{(0)}` (first convention) or :math:`\rho^{(1)}` (second): the zCDP parameter the
        initial variance would give, :math:`\Delta^2/(2\delta^{2(0)})`.
    zeta : float
        Variance decay factor :math:`\zeta \in (0, 1]`.
    rounds : int
        Number of releases :math:`N \ge 1`.
    first_release_decayed : bool
        Keyword-only; see above.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, eqs. (5.11)-(5.12), Theorems 5.3-5.4 (lines 1283-1487);
       seed 000_133b71fd0aa99eb4.txt, eq. (51); closed forms in docs/papers/pgfl.md#theorem-4.

    Examples
    --------
    The two conventions differ by one factor :math:`1/\zeta`:

    >>> a = zcdp_total_variance_decay(1e-3, 0.99, 300, first_release_decayed=True)
    >>> b = zcdp_total_variance_decay(1e-3, 0.99, 300, first_release_decayed=False)
    >>> abs(a - b / 0.99) <= 1e-13 * a
    True
    """
    rho_initial = real_scalar("rho_initial", rho_initial, "[0, inf)")
    zeta = real_scalar("zeta", zeta, "(0, 1]")
    if not isinstance(first_release_decayed, bool):
        raise TypeError(f"first_release_decayed must be True or False, got {first_release_decayed!r}")
    rounds = _rounds(rounds)
    rho_first = rho_initial / zeta if first_release_decayed else rho_initial
    # log G = -log(zeta) directly: forming G = 1/zeta first would cost u/|log zeta| relative accuracy.
    return _geometric_total(rho_first, -math.log(zeta), rounds)
