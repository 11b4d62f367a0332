r"""The one tolerance policy of fedcheck.

* Deterministic arithmetic: multiples of machine epsilon, from the standard forward-error
  bound :math:`\gamma_n = n u / (1 - n u)` (Higham, *Accuracy and Stability of Numerical
  Algorithms*, 2nd ed., Lemma 3.1), :math:`u = \varepsilon/2`.
* Iterative solvers and quadrature: the tolerance handed to the solver, plus its own error
  estimate where it returns one.
* Monte Carlo: a one-sided confidence limit at failure probability ``alpha``, split across the
  checks of a run with :func:`bonferroni`.

A bound is checked one-sided (the upper confidence limit of the measured quantity against the
bound); an identity between two independent evaluations is checked against the sum of their
error bounds.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from theory._rounding import EPS, UNIT_ROUNDOFF, gamma  # one definition, shared with theory/ and reference_impl/

__all__ = [
    "EPS",
    "QUAD_EPSREL",
    "UNIT_ROUNDOFF",
    "bonferroni",
    "gamma",
    "mean_upper_confidence_limit",
    "relative_gap",
]

#: Relative tolerance requested from adaptive quadrature (scipy.integrate.quad). Integrands built
#: from differences of large log densities carry ~1e-12 relative noise, so 1e-12 is not reachable.
QUAD_EPSREL = 1e-10


def relative_gap(a, b):
    r"""Elementwise :math:`|a - b| / \max(|a|, |b|)`, with 0 where both are 0."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    scale = np.maximum(np.abs(a), np.abs(b))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(scale > 0, np.abs(a - b) / np.where(scale > 0, scale, 1.0), 0.0)


def bonferroni(alpha: float, n_checks: int) -> float:
    """Per-check failure probability so that ``n_checks`` checks fail jointly with probability <= alpha."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if isinstance(n_checks, bool) or not isinstance(n_checks, int) or n_checks < 1:
        raise ValueError(f"n_checks must be an integer >= 1, got {n_checks!r}")
    return alpha / n_checks


def mean_upper_confidence_limit(samples, alpha: float) -> float:
    r"""One-sided upper confidence limit of a mean from i.i.d. samples (Student t).

    .. math:: \bar x + t_{1-\alpha,\,n-1}\, s/\sqrt n

    Errs toward a larger value. Asymptotic (CLT) for non-normal samples, so use it with
    ``n`` in the hundreds at least; the run records ``n`` and ``alpha``.
    """
    x = np.asarray(samples, dtype=np.float64).ravel()
    if x.size < 2:
        raise ValueError(f"samples must hold at least 2 values, got {x.size}")
    if not np.all(np.isfinite(x)):
        raise ValueError("samples must be finite")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    t = stats.t.ppf(1.0 - alpha, df=x.size - 1)
    return float(x.mean() + t * x.std(ddof=1) / math.sqrt(x.size))
