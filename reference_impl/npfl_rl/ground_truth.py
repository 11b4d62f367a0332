r"""Ground truths of NPFL-RL (docs/papers/npfl_rl.md): :func:`per_component_ridge` (K2, docs/papers/npfl_rl.md#k2),
:func:`global_ridge` (K3, docs/papers/npfl_rl.md#k3),
:func:`coupled_fixed_point` and :func:`symmetric_fixed_point_cvxpy` (K4, docs/papers/npfl_rl.md#k4); each carries a
certificate.

References
----------
.. [1] seed 004_180cd372987d137b.txt, thesis Chapter 6, eqs. (6.5)-(6.14), Algorithm 6, lines 1637-1722;
   Publication 7, eqs. (5)-(14), Algorithm 1, lines 3489-3562.
.. [2] docs/papers/npfl_rl.md: the algorithm as fedcheck runs it, errata D1-D4 (docs/papers/npfl_rl.md#erratum-d1 to
       #erratum-d4) and errata D11-D14 (docs/papers/npfl_rl.md#erratum-d11 to #erratum-d14), readings C-npfl-1..9.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reference_impl.npfl_rl.config import one_blas_thread
from reference_impl.npfl_rl.data import NPFLProblem

__all__ = ["GroundTruth", "coupled_fixed_point", "global_ridge", "per_component_ridge", "ridge_groups",
           "symmetric_fixed_point_cvxpy"]


@dataclass(frozen=True, kw_only=True)
class GroundTruth:
    """Per-client ground-truth models (K, d) with the certificate of how they were obtained."""

    w: np.ndarray
    certificate: float
    method: str


def _cvxpy_ridge(Xs, ys, Ds, reg, tol):
    import cvxpy as cp

    d = Xs[0].shape[1]
    w = cp.Variable(d)
    obj = sum(cp.sum_squares(X @ w - y) / D for X, y, D in zip(Xs, ys, Ds, strict=True)) + reg * cp.sum_squares(w)
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol, max_iter=500)
    if prob.status != cp.OPTIMAL or w.value is None:
        raise ArithmeticError(f"CVXPY/Clarabel ridge solve ended with status {prob.status!r}")
    return np.asarray(w.value)


@one_blas_thread
def ridge_groups(problem: NPFLProblem, groups: np.ndarray, reg: np.ndarray, method: str, tol: float) -> GroundTruth:
    """argmin sum_{k in g} (1/D_k)||y_k - X_k w||^2 + reg_g ||w||^2 for every group g; certificate: max relative
    gradient residual of the normal equations (both methods)."""
    if method not in ("cvxpy", "normal"):
        raise ValueError(f"method must be 'cvxpy' or 'normal', got {method!r}")
    G = int(groups.max()) + 1
    d = problem.d
    out = np.empty((G, d))
    worst = 0.0
    for g in range(G):  # ground truth, once per group (not an iteration)
        idx = np.flatnonzero(groups == g)
        Hs = problem.H[idx].sum(axis=0) + reg[g] * np.eye(d)
        bs = problem.b[idx].sum(axis=0)
        if method == "normal":
            x = np.linalg.solve(Hs, bs)
        else:
            x = _cvxpy_ridge([problem.X[k] for k in idx], [problem.y[k] for k in idx], problem.D[idx], reg[g], tol)
        worst = max(worst, float(np.linalg.norm(Hs @ x - bs) / max(np.linalg.norm(bs), 1e-300)))
        out[g] = x
    return GroundTruth(w=out[groups], certificate=worst, method=method)


def per_component_ridge(problem: NPFLProblem, *, method: str = "cvxpy", tol: float = 1e-10) -> GroundTruth:
    r"""K2 (docs/papers/npfl_rl.md#k2): for every component :math:`c` of every :math:`G_q`,
    :math:`w_c^* = \arg\min\sum_{k\in c}\frac1{D_k}\|y_k - X_k w\|^2 + \frac{\lambda|c|}{|C_{(q)}|}\|w\|^2`.

    The limit of NPFL with :math:`\tau = 0` (K2, erratum D12 (docs/papers/npfl_rl.md#erratum-d12)). ``certificate``:
    relative residual of the normal equations at the returned point.
    """
    comp = problem.components
    sizes = np.bincount(comp)
    cq = np.bincount(problem.labels)[problem.labels]
    reg = np.zeros(sizes.size)
    reg[comp] = problem.lam * sizes[comp] / cq
    return ridge_groups(problem, comp, reg, method, tol)


def global_ridge(problem: NPFLProblem, *, method: str = "cvxpy", tol: float = 1e-10) -> GroundTruth:
    r"""K3 (docs/papers/npfl_rl.md#k3): :math:`w^* = \arg\min\sum_k\frac1{D_k}\|y_k - X_k w\|^2 + \lambda\|w\|^2` (G
    connected), for every client."""
    return ridge_groups(problem, np.zeros(problem.K, dtype=np.int64), np.array([problem.lam]), method, tol)


@one_blas_thread
def coupled_fixed_point(problem: NPFLProblem, tau, *, convention: str = "E0") -> GroundTruth:
    r"""K4 (docs/papers/npfl_rl.md#k4): the fixed point of NPFL with fixed :math:`\tau_k \ge 0`, one unknown :math:`w_c`
    per component.

    .. math::

        \sum_{k\in c}\Bigl[(H_k + \tfrac{\lambda}{|C_{(q)}|} I)w_c - b_k
            + \tau_k\sum_{r}\omega_{k,r}\bigl(w_c - \tfrac{1}{|N_k^{(r)}|}\sum_{l\in N_k^{(r)}} w_{c(l)}\bigr)\Bigr] = 0

    (the corrected dual makes :math:`L_{in}w = 0` at a fixed point, and :math:`\gamma \in \mathrm{range}(L_{in})`
    cancels when the stationarity conditions of a component are summed). Solved as one stacked linear system;
    ``certificate`` is its relative residual.
    """
    tau = np.broadcast_to(np.asarray(tau, dtype=np.float64), (problem.K,))
    if not np.all(np.isfinite(tau)) or np.any(tau < 0):
        raise ValueError(f"tau must be finite and >= 0, got {tau!r}")
    comp = problem.components
    C, d = int(comp.max()) + 1, problem.d
    om, Bm = problem.inter_cluster_weights(convention)
    S = np.eye(C)[comp]  # (K, C) membership
    lam_q = problem.lam / problem.cluster_sizes
    diag = problem.H + (lam_q + tau * om.sum(axis=1))[:, None, None] * np.eye(d)  # (K, d, d)
    M = np.einsum("kc,kij->cij", S, diag)  # block diagonal part (C, d, d)
    coupling = (S.T * tau) @ (Bm @ S)  # (C, C): sum_k in c tau_k sum_l B_kl [c(l) = c'], Bm sparse (no K x K)
    big = np.kron(-coupling, np.eye(d))
    for c in range(C):  # assemble the diagonal blocks
        big[c * d:(c + 1) * d, c * d:(c + 1) * d] += M[c]
    rhs = (S.T @ problem.b).reshape(-1)
    x = np.linalg.solve(big, rhs)
    res = float(np.linalg.norm(big @ x - rhs) / max(np.linalg.norm(rhs), 1e-300))
    return GroundTruth(w=x.reshape(C, d)[comp], certificate=res, method="stacked linear system")


def symmetric_fixed_point_cvxpy(problem: NPFLProblem, tau, *, tol: float = 1e-10) -> GroundTruth:
    r"""K4 (docs/papers/npfl_rl.md#k4) symmetric case: :math:`W^* = \arg\min\sum_q\Phi_q(w_q)/T_q +
    \frac{1}{Q-1}\sum_{q<r}\|w_q - w_r\|^2`.

    Requires every :math:`G_q` connected, every :math:`N_k^{(r)} \ne\emptyset` and :math:`T_q = \sum_{k\in C_{(q)}}
    \tau_k > 0`; :math:`\Phi_q(w) = \sum_{k\in C_{(q)}}\frac1{D_k}\|y_k - X_k w\|^2 + \lambda\|w\|^2`. Its stationarity
    conditions are those of :func:`coupled_fixed_point` (K4; the raw-:math:`\tau` (6.1) is not,
    erratum D14 (docs/papers/npfl_rl.md#erratum-d14)). ``certificate``: relative stationarity residual of the returned
    point.
    """
    import cvxpy as cp

    tau = np.broadcast_to(np.asarray(tau, dtype=np.float64), (problem.K,))
    Q, d = problem.Q, problem.d
    if np.unique(problem.components).size != Q:
        raise ValueError("symmetric case needs every intra-cluster graph G_q connected")
    counts = problem.neighbour_counts()
    if np.any((counts == 0) & (np.arange(Q)[None, :] != problem.labels[:, None])):
        raise ValueError("symmetric case needs every N_k^(r) non-empty")
    T = np.bincount(problem.labels, weights=tau, minlength=Q)
    if np.any(T <= 0):
        raise ValueError(f"symmetric case needs T_q = sum of tau_k over C_q > 0, got {T.tolist()}")
    W = cp.Variable((Q, d))
    obj = 0
    for q in range(Q):  # ground truth, once per cluster
        idx = np.flatnonzero(problem.labels == q)
        phi = sum(cp.sum_squares(problem.X[k] @ W[q] - problem.y[k]) / problem.D[k] for k in idx)
        obj = obj + (phi + problem.lam * cp.sum_squares(W[q])) / T[q]
    obj = obj + sum(cp.sum_squares(W[q] - W[r]) for q in range(Q) for r in range(q + 1, Q)) / (Q - 1)
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol, max_iter=500)
    if prob.status != cp.OPTIMAL or W.value is None:
        raise ArithmeticError(f"CVXPY/Clarabel symmetric fixed-point solve ended with status {prob.status!r}")
    Wv = np.asarray(W.value)
    grads = []
    for q in range(Q):
        idx = np.flatnonzero(problem.labels == q)
        g = (problem.H[idx].sum(0) + problem.lam * np.eye(d)) @ Wv[q] - problem.b[idx].sum(0)
        g = g + T[q] / (Q - 1) * sum(Wv[q] - Wv[r] for r in range(Q) if r != q)
        grads.append(np.linalg.norm(g) / max(np.linalg.norm(problem.b[idx].sum(0)), 1e-300))
    return GroundTruth(w=Wv[problem.labels], certificate=float(max(grads)), method="cvxpy (symmetric case)")
