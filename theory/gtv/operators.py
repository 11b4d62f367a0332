r"""Losses, penalties, their conjugates and proximal maps, objectives, KKT residuals and the gap (34).

docs/papers/gtv.md#problem, docs/papers/gtv.md#operators (seed 002_26677b31336d654c.txt). Everything is vectorised over
nodes (arrays ``(n, d)``) and edges (arrays ``(E, d)``).

Corrections used here: (25) without the spurious factor :math:`\lambda A_e` (erratum E3, docs/papers/gtv.md#erratum-e3);
the dual update (33) in the form :math:`DU^{(e)}\{v\} = \mathrm{prox}_{\sigma_e g_e^*}(v)` with :math:`g_e = \lambda
A_e\phi` (L447, erratum E20 (docs/papers/gtv.md#erratum-e20)); the PSD form :math:`Q(Q + (\sigma_e/\lambda A_e)I)^{-1}v`
of the generalized MOCHA update (erratum E7, docs/papers/gtv.md#erratum-e7).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theory._rounding import gamma
from theory.gtv.instance import GTVInstance

__all__ = [
    "DualEvaluation",
    "dual_norm",
    "dual_objective",
    "dual_update",
    "duality_gap",
    "edge_differences",
    "kkt_residuals",
    "loss_gradients",
    "loss_values",
    "penalty_values",
    "primal_objective",
    "squared_loss_conjugate",
]


def edge_differences(inst: GTVInstance, w: np.ndarray) -> np.ndarray:
    r""":math:`(Dw)^{(e)} = w^{(e_+)} - w^{(e_-)}`, shape (E, d) (6)."""
    w = np.asarray(w, dtype=np.float64)
    return w[inst.edges[:, 0]] - w[inst.edges[:, 1]]


def _margins(inst: GTVInstance, w: np.ndarray) -> np.ndarray:
    return np.einsum("nrj,nj->nr", inst.X, w)


def loss_values(inst: GTVInstance, w: np.ndarray) -> np.ndarray:
    r"""Local losses :math:`L_i(w^{(i)})`, shape (n,); 0 at inaccessible nodes (m_i = 0)."""
    w = np.asarray(w, dtype=np.float64)
    if inst.loss == "squared":
        H, b, c = inst.quadratic
        return 0.5 * np.einsum("nj,njk,nk->n", w, H, w) - np.einsum("nj,nj->n", b, w) + c
    z = _margins(inst, w)
    per = np.where(inst.row_mask, np.logaddexp(0.0, -inst.y * z), 0.0)
    has = inst.m > 0
    return np.where(has, per.sum(axis=1) / np.maximum(inst.m, 1) + 0.5 * inst.gamma * np.sum(w * w, axis=1), 0.0)


def loss_gradients(inst: GTVInstance, w: np.ndarray) -> np.ndarray:
    r""":math:`\nabla L_i(w^{(i)})`, shape (n, d) (docs/papers/gtv.md#operators, (c))."""
    w = np.asarray(w, dtype=np.float64)
    if inst.loss == "squared":
        H, b, _ = inst.quadratic
        return np.einsum("njk,nk->nj", H, w) - b
    z = _margins(inst, w)
    coef = np.where(inst.row_mask, -inst.y * _sigmoid(-inst.y * z), 0.0) / np.maximum(inst.m, 1)[:, None]
    has = (inst.m > 0)[:, None]
    return np.where(has, np.einsum("nr,nrj->nj", coef, inst.X) + inst.gamma * w, 0.0)


def _sigmoid(t):
    return 0.5 * (1.0 + np.tanh(0.5 * t))


def dual_norm(inst: GTVInstance, u: np.ndarray) -> np.ndarray:
    r"""Row-wise dual norm :math:`\lVert u^{(e)}\rVert_*` of a norm penalty: ℓ2 for ``"l2"``, ℓ∞ for ``"l1"``."""
    if inst.penalty == "l2":
        return np.linalg.norm(u, axis=-1)
    if inst.penalty == "l1":
        return np.abs(u).max(axis=-1)
    raise ValueError(f"penalty must be a norm ('l2' or 'l1') for a dual norm, got {inst.penalty!r}")


def penalty_values(inst: GTVInstance, v: np.ndarray) -> np.ndarray:
    r""":math:`\phi(v^{(e)})` row-wise (docs/papers/gtv.md#operators)."""
    v = np.asarray(v, dtype=np.float64)
    if inst.penalty == "l2":
        return np.linalg.norm(v, axis=-1)
    if inst.penalty == "l1":
        return np.abs(v).sum(axis=-1)
    if inst.penalty == "mocha":
        return 0.5 * np.sum(v * v, axis=-1)
    return 0.5 * np.einsum("ej,jk,ek->e", v, inst.Q, v)


def primal_objective(inst: GTVInstance, w: np.ndarray) -> float:
    r"""(16): :math:`\sum_i L_i(w^{(i)}) + \lambda\sum_e A_e\phi(w^{(e_+)} - w^{(e_-)})`."""
    penalty = np.dot(inst.A, penalty_values(inst, edge_differences(inst, w)))
    return float(loss_values(inst, w).sum() + inst.lam * penalty)


def dual_update(inst: GTVInstance, v: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    r"""The dual update (33), :math:`DU^{(e)}\{v\} = \mathrm{prox}_{\sigma_e g_e^*}(v)`, for every edge at once.

    .. math::

        DU^{(e)}\{v\} = \begin{cases}
        v\min(1, \lambda A_e/\lVert v\rVert_2) & \text{nLasso (T}^{(\lambda A_e)}\text{, (1))} \\
        \mathrm{clip}(v, -\lambda A_e, \lambda A_e) & \ell_1 \\
        v/(1 + \sigma_e/(\lambda A_e)) & \text{MOCHA} \\
        Q(Q + (\sigma_e/\lambda A_e) I)^{-1} v & \tfrac12 v^TQv,\ Q \succeq 0 \text{
        (erratum E7, docs/papers/gtv.md#erratum-e7)} \end{cases}

    ``v`` has shape (E, d), ``sigma`` shape (E,) or scalar.

    References
    ----------
    .. [1] seed 002_26677b31336d654c.txt, (33) and the update list at L447-453; docs/papers/gtv.md#operators.

    Examples
    --------
    The nLasso update is the projection onto the ball of radius :math:`\lambda A_e` (Moreau):

    >>> import numpy as np
    >>> from theory.gtv.instance import GTVInstance
    >>> inst = GTVInstance(n=2, edges=[[0, 1]], A=[2.0], X=np.ones((2, 1, 1)), y=np.zeros((2, 1)), m=[1, 1], lam=0.5)
    >>> float(np.linalg.norm(dual_update(inst, np.array([[3.0]]), 0.5)))
    1.0
    """
    v = np.asarray(v, dtype=np.float64)
    cap = inst.lam * inst.A
    sigma = np.broadcast_to(np.asarray(sigma, dtype=np.float64), cap.shape)
    if inst.penalty == "l2":
        norm = np.linalg.norm(v, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(norm > cap, cap / np.where(norm > 0, norm, 1.0), 1.0)
        return v * scale[:, None]
    if inst.penalty == "l1":
        return np.clip(v, -cap[:, None], cap[:, None])
    if inst.penalty == "mocha":
        return v * (cap / (cap + sigma))[:, None]
    ev, V = np.linalg.eigh(inst.Q)
    ev = np.maximum(ev, 0.0)
    coef = ev[None, :] / (ev[None, :] + (sigma / cap)[:, None])
    return ((v @ V) * coef) @ V.T


def _range_projector(inst: GTVInstance):
    """Eigen-pairs of the H_i and the mask of range(H_i); rank by the LAPACK-style threshold d * eps * lambda_max."""
    ev, V = inst.quadratic_eigh
    thresh = inst.d * np.finfo(np.float64).eps * np.maximum(ev[:, -1:], 0.0)
    keep = (ev > thresh).astype(np.float64)
    return ev, V, keep


def squared_loss_conjugate(inst: GTVInstance, s: np.ndarray, range_rtol: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Conjugate of the squared loss, :math:`L_i^*(s^{(i)})`, and the relative out-of-range part of ``s``.

    .. math::

        L_i^*(s) = \tfrac12(s + b_i)^T H_i^+ (s + b_i) - \lVert y_i\rVert^2/m_i \ \text{if } s \in
        \mathrm{range}(X_i^T),\quad +\infty \text{ otherwise}

    (docs/papers/gtv.md#operators; ``m_i = 0``: the indicator of {0}). The domain test is ``rel_i <= range_rtol`` with
    :math:`\mathrm{rel}_i = \lVert P_\perp s\rVert/\max(\lVert s\rVert, \lVert b_i\rVert, 1)`: a tolerance-free
    test (``range_rtol = 0``) would declare almost every floating-point vector out of range
    (erratum E15, docs/papers/gtv.md#erratum-e15), so ``range_rtol`` must be given and be > 0.

    Returns ``(values, rel)`` with ``values[i] = inf`` where the test fails.
    """
    if not (isinstance(range_rtol, float) and 0.0 < range_rtol < 1.0):
        raise ValueError(f"range_rtol must be a float in (0, 1), got {range_rtol!r}")
    if inst.loss != "squared":
        raise ValueError(f"loss must be 'squared' for the closed-form conjugate, got {inst.loss!r}")
    s = np.asarray(s, dtype=np.float64)
    _, b, c = inst.quadratic
    ev, V, keep = _range_projector(inst)
    coords = np.einsum("nji,nj->ni", V, s)                    # s in the eigenbasis of H_i
    perp = np.linalg.norm(coords * (1.0 - keep), axis=1)
    scale = np.maximum(np.maximum(np.linalg.norm(s, axis=1), np.linalg.norm(b, axis=1)), 1.0)
    rel = perp / scale
    t = np.einsum("nji,nj->ni", V, s + b)
    inv = np.where(keep > 0, 1.0 / np.where(keep > 0, ev, 1.0), 0.0)
    val = 0.5 * np.sum(t * t * inv, axis=1) - c
    return np.where(rel <= range_rtol, val, np.inf), rel


@dataclass(frozen=True, kw_only=True)
class DualEvaluation:
    """The dual objective (19)/(24) at ``u``, with the domain diagnostics of
    erratum E15 (docs/papers/gtv.md#erratum-e15)."""

    value: float                 # -inf when outside the domain
    out_of_range: np.ndarray     # (n,) relative component of -s^(i) outside range(X_i^T)
    capacity_excess: float       # max_e ||u_e||_* / (lam A_e) - 1 (norm penalties; 0 otherwise, clipped at 0)
    finite: bool


def dual_objective(inst: GTVInstance, u: np.ndarray, *, range_rtol: float,
                   capacity_rtol: float | None = None) -> DualEvaluation:
    r"""(24): :math:`-\sum_i L_i^*(-s^{(i)}) - \lambda\sum_e A_e\phi^*(u^{(e)}/(\lambda A_e))`, :math:`s = D^Tu`.

    Squared loss only (the logistic conjugate has no closed form). For norm penalties :math:`\phi^*` is the
    indicator of the dual-norm unit ball (26), tested as ``||u_e||_* <= lam A_e (1 + capacity_rtol)``
    (default :math:`\gamma_{d+4}`: the rounding of the norm of a projected row).
    """
    if capacity_rtol is None:
        capacity_rtol = gamma(inst.d + 4)
    u = np.asarray(u, dtype=np.float64)
    s = inst.incidence.T @ u
    conj, rel = squared_loss_conjugate(inst, -s, range_rtol)
    cap = inst.lam * inst.A
    excess = 0.0
    if inst.penalty in ("l2", "l1"):
        excess = max(0.0, float(np.max(dual_norm(inst, u) / cap - 1.0)))
        gstar = 0.0 if excess <= capacity_rtol else np.inf
    elif inst.penalty == "mocha":
        gstar = float(np.sum(np.sum(u * u, axis=1) / (2.0 * cap)))
    else:
        ev, V = np.linalg.eigh(inst.Q)
        keep = ev > inst.d * np.finfo(np.float64).eps * max(ev[-1], 0.0)
        t = u @ V
        if np.any(np.abs(t[:, ~keep]) > range_rtol * np.maximum(np.linalg.norm(u, axis=1), 1.0)[:, None]):
            gstar = np.inf
        else:
            gstar = float(np.sum(np.sum(t[:, keep] ** 2 / ev[keep], axis=1) / (2.0 * cap)))
    value = -float(np.sum(conj)) - gstar
    return DualEvaluation(value=value, out_of_range=rel, capacity_excess=excess, finite=bool(np.isfinite(value)))


def duality_gap(inst: GTVInstance, w: np.ndarray, u: np.ndarray, *, range_rtol: float,
                capacity_rtol: float | None = None) -> float:
    r"""The primal-dual gap (34), :math:`P(\hat w) - \mathrm{Dual}(\hat u)` (``inf`` off the dual domain,
    erratum E15 (docs/papers/gtv.md#erratum-e15))."""
    dual = dual_objective(inst, u, range_rtol=range_rtol, capacity_rtol=capacity_rtol)
    return primal_objective(inst, w) - dual.value


def kkt_residuals(inst: GTVInstance, w: np.ndarray, u: np.ndarray) -> tuple[float, float]:
    r"""KKT residuals of (23)/(25) (corrected, erratum E3 (docs/papers/gtv.md#erratum-e3)), tolerance-free.

    * node: :math:`\max_i \lVert (D^T u)^{(i)} + \nabla L_i(w^{(i)})\rVert_2` (flow conservation);
    * edge: :math:`\max_e \lVert u^{(e)} - \mathrm{prox}_{g_e^*}(u^{(e)} + (Dw)^{(e)})\rVert_2`, which is 0 exactly
      when :math:`(Dw)^{(e)} \in \partial g_e^*(u^{(e)})` (the natural residual of the inclusion, step 1).
    """
    w = np.asarray(w, dtype=np.float64)
    u = np.asarray(u, dtype=np.float64)
    node = inst.incidence.T @ u + loss_gradients(inst, w)
    edge = u - dual_update(inst, u + edge_differences(inst, w), np.ones(inst.n_edges))
    return float(np.linalg.norm(node, axis=1).max()), float(np.linalg.norm(edge, axis=1).max())
