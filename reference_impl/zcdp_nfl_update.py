r"""zCDP-NFL: the one-step closed-form primal update of every client (P2 Algorithm 1, step (7)).

Only this step is implemented here: it is what Lemma I (sensitivity) is about. The noise, the
communication and the dual update of Algorithm 1 are not (see shared/spec/zcdp_nfl.md 2.3).

Given the *released* history of round :math:`n-1` (the perturbed iterates
:math:`\tilde w^{(n-1)}` and the dual variables :math:`\gamma^{(n-1)}`, which are functions of
released messages only), client :math:`k` solves the strongly convex quadratic

.. math::

    w_k^{(n)} = \arg\min_w\; (w - \tilde w_k)^\top g_k + \frac{\lVert w - \tilde w_k\rVert^2}{2\eta_k}
        + w^\top\gamma_k + \rho \sum_{l\in\mathcal N_k}
          \Bigl\lVert w - \tfrac12(\tilde w_k + \tilde w_l)\Bigr\rVert^2

(all superscripts :math:`(n-1)` on :math:`\tilde w, \gamma`, :math:`(n)` on :math:`\eta, g`), whose
stationarity condition gives the closed form

.. math::

    w_k^{(n)} = \frac{\tilde w_k/\eta_k + \rho\,(d_k\tilde w_k + \sum_{l\in\mathcal N_k}\tilde w_l)
                      - \gamma_k - g_k}{1/\eta_k + 2\rho d_k},
    \qquad g_k = \frac{1}{M_k}\sum_{j=1}^{M_k}\ell'(x_{k,j}, y_{k,j}; \tilde w_k) + \frac{\lambda}{K}R'(\tilde w_k).

References
----------
.. [1] seed 004_180cd372987d137b.txt, Publication 2, Algorithm 1 and eq. (7), lines 2002-2006;
   linearised objective eq. (5), line 1983; thesis eqs. (3.6)-(3.8), lines 545-575.
.. [2] shared/spec/zcdp_nfl.md 2.3 step 2. This corrects P2 (A.1)-(A.2) (lines 2243-2249), which
   print :math:`+(\rho/2)\sum(\tilde w_k - \tilde w_l) + \gamma_k/2` (erratum E6); both have the
   same :math:`\partial w/\partial g = -1/(1/\eta + 2\rho d_k)`, so Lemma I is unaffected.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np

__all__ = ["zcdp_nfl_primal_update"]


def _finite_array(name: str, value, ndim_min: int) -> np.ndarray:
    x = np.asarray(value, dtype=np.float64)
    if x.ndim < ndim_min:
        raise ValueError(f"{name} must have at least {ndim_min} dimensions (clients as rows), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite, got non-finite entries in an array of shape {x.shape}")
    return x


def zcdp_nfl_primal_update(
    w_tilde,
    neighbour_sum,
    gamma,
    X,
    y,
    loss_subgradient: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    rho,
    eta,
    degree,
    *,
    regularizer_subgradient: Callable[[np.ndarray], np.ndarray] | None = None,
) -> np.ndarray:
    r"""Closed-form primal update :math:`w_k^{(n)}` of every client (P2 (7)), clients as rows.

    .. math::

        w_k^{(n)} = \frac{\tilde w_k/\eta_k + \rho\,(d_k\tilde w_k + \sum_{l\in\mathcal N_k}\tilde w_l)
                          - \gamma_k - g_k}{1/\eta_k + 2\rho d_k}

    Parameters
    ----------
    w_tilde : array_like, shape (..., K, P)
        Released perturbed iterates :math:`\tilde w_k^{(n-1)}`. Leading axes are batch axes.
    neighbour_sum : array_like, shape (..., K, P)
        :math:`\sum_{l\in\mathcal N_k}\tilde w_l^{(n-1)}` (adjacency times ``w_tilde``): released.
    gamma : array_like, shape (..., K, P)
        Dual variables :math:`\gamma_k^{(n-1)}` (functions of released messages).
    X : array_like, shape (..., K, M, P)
        Features :math:`x_{k,j}` of the :math:`M` samples of every client.
    y : array_like, shape (..., K, M)
        Labels :math:`y_{k,j}`.
    loss_subgradient : callable
        ``loss_subgradient(X, y, w)`` with ``w`` of shape (..., K, P) returns the per-sample
        subgradients :math:`\ell'(x_{k,j}, y_{k,j}; w_k)`, shape (..., K, M, P).
    rho : float
        ADMM penalty :math:`\rho > 0`.
    eta : float or array_like, shape (..., K)
        Step sizes :math:`\eta_k^{(n)} > 0` of this round (finite).
    degree : array_like of int, shape (K,)
        Degrees :math:`d_k = |\mathcal N_k| \ge 0` (consistent with ``neighbour_sum``).
    regularizer_subgradient : callable, optional
        ``regularizer_subgradient(w)`` returns :math:`(\lambda/K) R'(w_k)`, shape (..., K, P); it is
        data independent. Default: no regulariser.

    Returns
    -------
    numpy.ndarray, shape (..., K, P)
        :math:`w^{(n)}`.

    Raises
    ------
    ValueError
        If a parameter is out of range or the shapes disagree.

    Notes
    -----
    Pure and deterministic. The subgradient is evaluated at the client's own *perturbed* iterate
    (Algorithm 1, step 1), so given the released history the update is affine in the data term
    :math:`g_k`, with slope :math:`-1/(1/\eta_k + 2\rho d_k)`: that is Lemma I.

    References
    ----------
    .. [1] seed 004_180cd372987d137b.txt, Publication 2, eq. (7), Algorithm 1, lines 2002-2006;
       closed form: shared/spec/zcdp_nfl.md 2.3 step 2 (erratum E6 for P2 (A.1)).

    Examples
    --------
    The update is the stationary point of the objective of (7): its gradient vanishes there.

    >>> rng = np.random.default_rng(0)
    >>> wt, nb, ga = rng.normal(size=(3, 4, 2))
    >>> X, y = rng.normal(size=(4, 5, 2)), rng.normal(size=(4, 5))
    >>> lad = lambda X, y, w: np.sign(np.einsum("...mp,...p->...m", X, w) - y)[..., None] * X
    >>> deg = np.array([1, 2, 2, 1])
    >>> w = zcdp_nfl_primal_update(wt, nb, ga, X, y, lad, 0.5, 0.1, deg)
    >>> g = lad(X, y, wt).mean(axis=-2)
    >>> grad = g + (w - wt) / 0.1 + ga + 0.5 * (2 * deg[:, None] * w - deg[:, None] * wt - nb)
    >>> bool(np.max(np.abs(grad)) < 1e-12)
    True
    """
    w_tilde = _finite_array("w_tilde", w_tilde, 2)
    neighbour_sum = _finite_array("neighbour_sum", neighbour_sum, 2)
    gamma = _finite_array("gamma", gamma, 2)
    X = _finite_array("X", X, 3)
    y = _finite_array("y", y, 2)
    if neighbour_sum.shape != w_tilde.shape or gamma.shape != w_tilde.shape:
        raise ValueError(f"w_tilde, neighbour_sum and gamma must have one shape (..., K, P), got "
                         f"{w_tilde.shape}, {neighbour_sum.shape}, {gamma.shape}")
    if X.shape[:-2] != w_tilde.shape[:-1] or X.shape[-1] != w_tilde.shape[-1]:
        raise ValueError(f"X must have shape (..., K, M, P) matching w_tilde {w_tilde.shape}, got {X.shape}")
    if y.shape != X.shape[:-1]:
        raise ValueError(f"y must have shape {X.shape[:-1]} (..., K, M), got {y.shape}")
    if X.shape[-2] < 1:
        raise ValueError(f"every client needs M >= 1 samples, got M = {X.shape[-2]}")
    if isinstance(rho, bool) or not isinstance(rho, numbers.Real) or not (0.0 < float(rho) < np.inf):
        raise ValueError(f"rho must be a finite real in (0, inf), got {rho!r}")
    eta = np.asarray(eta, dtype=np.float64)
    if not np.all(np.isfinite(eta) & (eta > 0.0)):
        raise ValueError(f"eta must be finite reals in (0, inf), got {eta!r}")
    try:
        eta_k = np.broadcast_to(eta, w_tilde.shape[:-1])
    except ValueError as exc:
        raise ValueError(f"eta must broadcast to (..., K) = {w_tilde.shape[:-1]}, got shape {eta.shape}") from exc
    degree = np.asarray(degree)
    if degree.shape != (w_tilde.shape[-2],) or not np.issubdtype(degree.dtype, np.integer) or np.any(degree < 0):
        raise ValueError(f"degree must be non-negative integers of shape (K,) = ({w_tilde.shape[-2]},), got {degree!r}")
    rho = float(rho)

    per_sample = np.asarray(loss_subgradient(X, y, w_tilde), dtype=np.float64)
    if per_sample.shape != X.shape:
        raise ValueError(f"loss_subgradient must return shape {X.shape} (..., K, M, P), got {per_sample.shape}")
    g = per_sample.mean(axis=-2)
    if regularizer_subgradient is not None:
        reg = np.asarray(regularizer_subgradient(w_tilde), dtype=np.float64)
        if reg.shape != w_tilde.shape:
            raise ValueError(f"regularizer_subgradient must return shape {w_tilde.shape}, got {reg.shape}")
        g = g + reg
    inv_eta = (1.0 / eta_k)[..., None]
    d = degree.astype(np.float64)[:, None]
    numerator = w_tilde * inv_eta + rho * (d * w_tilde + neighbour_sum) - gamma - g
    return numerator / (inv_eta + 2.0 * rho * d)
