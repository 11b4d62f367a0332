r"""Floating-point rounding-error primitives shared by theory/, reference_impl/ and verify/.

:math:`\gamma_n = nu/(1-nu)` bounds the relative error of ``n`` rounded operations (Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed., Lemma 3.1), :math:`u = \varepsilon/2`. The tolerance policy
built on them lives in :mod:`verify.tolerance`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["EPS", "UNIT_ROUNDOFF", "gamma"]

EPS = float(np.finfo(np.float64).eps)
UNIT_ROUNDOFF = EPS / 2.0


def gamma(n_ops: int) -> float:
    r"""Higham's :math:`\gamma_n = nu/(1-nu)`: relative error bound of ``n_ops`` rounded operations.

    A library function accurate to one ulp (``log1p``, ``expm1``) counts as two operations.

    >>> gamma(1) > UNIT_ROUNDOFF
    True
    """
    if isinstance(n_ops, bool) or not isinstance(n_ops, (int, np.integer)) or n_ops < 0:
        raise ValueError(f"n_ops must be a non-negative integer, got {n_ops!r}")
    nu = int(n_ops) * UNIT_ROUNDOFF
    if nu >= 1.0:
        raise ValueError(f"n_ops must be below 1/u = {1 / UNIT_ROUNDOFF:.3g}, got {n_ops}")
    return nu / (1.0 - nu)
