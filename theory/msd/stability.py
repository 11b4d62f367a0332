r"""Stability of PAO-Fed in mean and mean square: the paper's step-size bounds and exact thresholds.

* Theorem 1 (Ch. (4.22), P4 (22)): "converges in mean iff :math:`0 < \mu < 2/\lambda_{\max}`";
* Theorem 2 (Ch. (4.31), P4 (34)): "stable MSD iff :math:`0 < \mu < 1/\lambda_{\max}`",

with :math:`\lambda_{\max} = \max_{k,i}\lambda_i(R_k)`. The exact criteria are
:math:`\rho(\mathcal M(\mu)) < 1` (mean) and :math:`\rho(\mathcal F(\mu)) < 1` (mean square, for the
seed's truncated :math:`\mathcal F` or the exact one); the thresholds where the spectral radius reaches
one are returned as certified brackets.

References
----------
.. [1] seed 004_180cd372987d137b.txt, Theorem 4.1 (4.22) line 990, Theorem 4.2 (4.31) line 1052;
   P4 Theorem 1 (22) line 2670, Theorem 2 (34) line 2757, proofs lines 2672-2694 and 2759-2770.
.. [2] docs/papers/paofed.md#expectations, docs/papers/paofed.md#mean-square (status of both theorems), 6
       errata E7-E9 (docs/papers/paofed.md#erratum-e7 to #erratum-e9).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from theory.msd.expectations import _moments, expected_A, expected_B, mean_operator
from theory.msd.krylov import arpack_eigs, generic_start
from theory.msd.structured import _check_model, spectral_radius_F

__all__ = [
    "ThresholdBracket",
    "mean_square_threshold",
    "mean_threshold",
    "paper_mean_bound",
    "paper_mean_square_bound",
    "spectral_radius_M",
    "threshold_bracket",
]


def paper_mean_bound(x) -> float:
    r"""Theorem 1's bound :math:`2/\max_{k,i}\lambda_i(R_k)` (Ch. (4.22), P4 (22)).

    Examples
    --------
    >>> from theory.msd.instance import reference_instance
    >>> round(paper_mean_bound(reference_instance()), 5)
    0.64454
    """
    return 2.0 / _moments(x).lambda_max


def paper_mean_square_bound(x) -> float:
    r"""Theorem 2's bound :math:`1/\max_{k,i}\lambda_i(R_k)` (Ch. (4.31), P4 (34)).

    Examples
    --------
    >>> from theory.msd.instance import reference_instance
    >>> round(paper_mean_square_bound(reference_instance()), 5)
    0.32227
    """
    return 1.0 / _moments(x).lambda_max


def spectral_radius_M(x, mu: float | None = None) -> float:
    r""":math:`\rho(\mathcal M(\mu))`, :math:`\mathcal M(\mu) = E[B_e](I - \mu R_e)E[A_e]`.

    If all :math:`R_k` equal :math:`R = U\Lambda U^T`, :math:`\mathcal M` is similar to
    :math:`\bigoplus_i E_B\Lambda_iE_A` with the :math:`N_b \times N_b` scalar matrices
    :math:`E_A, E_B` and :math:`\Lambda_i = \mathrm{diag}(1, (1-\mu\lambda_i)1_K, 1_{Kl_{\max}})`
    (docs/papers/paofed.md#expectations), so :math:`\rho = \max_i\rho(E_B\Lambda_iE_A)` over the distinct
    :math:`\lambda_i`. Otherwise dense eigenvalues for :math:`N \le 2000` and Arnoldi on the sparse :math:`\mathcal M`
    above.

    Examples
    --------
    At :math:`\mu = 0`, :math:`\mathcal M = E[B_e]E[A_e]` is right-stochastic with non-negative
    entries here, so :math:`\rho = 1`:

    >>> from theory.msd.instance import reference_instance
    >>> round(spectral_radius_M(reference_instance(), 0.0), 12)
    1.0
    """
    m = _moments(x)
    mu = m.mu if mu is None else float(mu)
    if not (math.isfinite(mu) and mu >= 0):
        raise ValueError(f"mu must be a finite real >= 0, got {mu!r}")
    if m.K > 1 and np.all(m.R == m.R[0]) and m.D > 1:
        lam = np.unique(np.linalg.eigvalsh(m.R[0]))
        EA = expected_A(m, sparse=True)
        EB = expected_B(m, sparse=True)
        nb = m.n_blocks
        out = 0.0
        for li in lam:
            d = np.ones(nb)
            d[1:m.K + 1] = 1.0 - mu * li
            Mi = EB @ (EA.multiply(d[:, None])).tocsr()
            out = max(out, _rho_sparse(Mi))
        return out
    M = mean_operator(m, mu)
    return _rho_sparse(M)


def _rho_sparse(M) -> float:
    n = M.shape[0]
    if n <= 2000:
        return float(np.max(np.abs(np.linalg.eigvals(M.toarray()))))
    vals = arpack_eigs(M, k=1, which="LM", tol=1e-13, v0=generic_start(n), return_eigenvectors=False, maxiter=20000)
    return float(np.max(np.abs(vals)))


@dataclass(frozen=True)
class ThresholdBracket:
    r"""A certified bracket of a stability threshold :math:`\mu^\star`: :math:`\rho(\mu_{lo}) < 1 \le \rho(\mu_{hi})`.

    ``lo = 0`` means no stable step size was found down to ``hi`` (``rho_lo`` is then NaN).

    Attributes
    ----------
    lo, hi : float
        Step sizes with :math:`\rho < 1` and :math:`\rho \ge 1`.
    tol : float
        Requested half-width (absolute, in units of :math:`\mu`).
    rho_lo, rho_hi : float
        Spectral radii at the ends.
    lambda_max : float
        For reporting :math:`\mu^\star\lambda_{\max}`.
    """

    lo: float
    hi: float
    tol: float
    rho_lo: float
    rho_hi: float
    lambda_max: float

    @property
    def estimate(self) -> float:
        """Midpoint of the bracket."""
        return 0.5 * (self.lo + self.hi)

    def contains(self, mu: float) -> bool:
        """Whether ``mu`` lies in [lo, hi] (the data cannot tell on which side of mu* it lies)."""
        return self.lo <= mu <= self.hi

    def scaled(self) -> tuple[float, float]:
        r"""The bracket in units of :math:`1/\lambda_{\max}`."""
        return self.lo * self.lambda_max, self.hi * self.lambda_max


def threshold_bracket(rho: Callable[[float], float], lambda_max: float, *, start: float, rtol: float = 1e-7,
                      mu_min: float | None = None, max_expansions: int = 60) -> ThresholdBracket:
    r"""Bracket the smallest-found crossing of :math:`\rho(\mu) = 1` above small :math:`\mu`.

    1. ``lo = mu_min`` (default :math:`10^{-4}/\lambda_{\max}`) must have :math:`\rho < 1`; otherwise
       the bracket ``(0, mu_min)`` is returned (no stable step size found).
    2. ``hi`` starts at ``start`` and grows by 1.5 until :math:`\rho(hi) \ge 1`; points passed on the way
       with :math:`\rho < 1` raise ``lo``.
    3. Brent's method (``scipy.optimize.brentq``) on :math:`\rho(\mu) - 1` in [lo, hi] with
       ``xtol = rtol * hi``; the result is certified by evaluating :math:`\rho` on both sides
       (bisection takes over if a side fails).

    Assumes :math:`\rho` continuous; if :math:`\rho - 1` changes sign several times in [lo, hi] the
    bracket holds *a* crossing (spectral radii are continuous in :math:`\mu`).

    Raises
    ------
    ValueError
        If ``rtol`` is not in (0, 0.1), ``lambda_max`` is not positive, or no unstable :math:`\mu` is found.
    """
    if not (0.0 < rtol < 0.1):
        raise ValueError(f"rtol must be in (0, 0.1), got {rtol!r}")
    if not (lambda_max > 0 and math.isfinite(lambda_max)):
        raise ValueError(f"lambda_max must be a finite real > 0, got {lambda_max!r}")
    mu_min = 1e-4 / lambda_max if mu_min is None else float(mu_min)
    r_min = rho(mu_min)
    if not r_min < 1.0:
        return ThresholdBracket(0.0, mu_min, 0.0, float("nan"), r_min, lambda_max)
    lo, r_lo = mu_min, r_min
    hi = max(float(start), mu_min * 1.5)
    r_hi = rho(hi)
    for _ in range(max_expansions):
        if r_hi >= 1.0:
            break
        lo, r_lo = hi, r_hi
        hi *= 1.5
        r_hi = rho(hi)
    else:
        raise ValueError(f"no unstable step size found up to mu = {hi!r}")
    xtol = rtol * hi
    cache: dict[float, float] = {lo: r_lo, hi: r_hi}

    def f(mu: float) -> float:
        if mu not in cache:
            cache[mu] = rho(mu)
        return cache[mu] - 1.0

    if hi - lo > 2 * xtol:
        root = optimize.brentq(f, lo, hi, xtol=xtol, rtol=4 * np.finfo(float).eps)
        a, b = max(lo, root - xtol), min(hi, root + xtol)
        fa, fb = f(a), f(b)
        if fa < 0 <= fb:
            lo, hi = a, b
        else:  # certification failed: plain bisection from the last certified bracket
            while hi - lo > 2 * xtol:
                mid = 0.5 * (lo + hi)
                if f(mid) < 0:
                    lo = mid
                else:
                    hi = mid
    return ThresholdBracket(lo, hi, xtol, cache[lo], cache[hi], lambda_max)


def mean_threshold(x, *, rtol: float = 1e-7) -> ThresholdBracket:
    r"""Exact mean-stability threshold: bracket of :math:`\mu^\star` with :math:`\rho(\mathcal M(\mu^\star)) = 1`.

    Examples
    --------
    The reference instance (docs/papers/paofed.md#instance-reference) is mean-stable beyond Theorem 1's
    :math:`2/\lambda_{\max}`:

    >>> from theory.msd.instance import reference_instance
    >>> inst = reference_instance()
    >>> mean_threshold(inst).lo > paper_mean_bound(inst)
    True
    """
    m = _moments(x)
    return threshold_bracket(lambda mu: spectral_radius_M(m, mu), m.lambda_max, start=2.0 / m.lambda_max, rtol=rtol)


def mean_square_threshold(x, model: str = "seed", *, rtol: float = 1e-7, rho_fn=None) -> ThresholdBracket:
    r"""Exact mean-square threshold: bracket of :math:`\mu^\star` with :math:`\rho(\mathcal F(\mu^\star)) = 1`.

    ``model="seed"`` (truncated :math:`\mathcal F`, Ch. (4.26)) or ``"exact"`` (Gaussian regressors).
    ``rho_fn(moments, model, mu)`` replaces the spectral-radius routine (default: Arnoldi on the
    structured operator, :func:`theory.msd.structured.spectral_radius_F`).
    """
    m = _moments(x)
    _check_model(model)
    fn = rho_fn or (lambda mm, md, mu: spectral_radius_F(mm, md, mu=mu))
    return threshold_bracket(lambda mu: fn(m, model, mu), m.lambda_max, start=0.5 / m.lambda_max, rtol=rtol)
