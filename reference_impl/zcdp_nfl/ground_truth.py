r"""Ground truth of zCDP-NFL: the centralised problem :math:`\min_w F(w)` in CVXPY, with a certificate.

References
----------
.. [1] seed 004_180cd372987d137b.txt, thesis line 750, Publication 2 line 2216 (w_c "from CVX").
.. [2] docs/papers/zcdp_nfl.md (the ground truth and its validation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reference_impl.zcdp_nfl.problem import NFLProblem
from theory._validate import readonly

__all__ = ["GroundTruth", "centralized_optimum"]


@dataclass(frozen=True, kw_only=True)
class GroundTruth:
    """The centralised optimum :math:`w_c`, :math:`F^* = F(w_c)` and the certificate of the solve."""

    w_c: np.ndarray
    F_star: float
    certificate: str
    residual: float
    solver_status: str


def centralized_optimum(problem: NFLProblem, *, tol: float = 1e-10) -> GroundTruth:
    r"""Solve :math:`\min_w F(w)` with CVXPY/Clarabel (tolerance ``tol``) and certify the solution.

    Certificates: ridge, the closed form
    :math:`(\sum_k X_k^\top X_k/M + \lambda I)^{-1}\sum_k X_k^\top y_k/M` (``residual`` = distance to it);
    elastic net, the KKT residual :math:`\mathrm{dist}(0, \partial F(w_c))` (the returned point is the
    closed-form refinement on the solver's support and signs when that has a smaller residual);
    LAD, the relative duality gap of the LP (Clarabel's own, ``residual``).

    Raises
    ------
    ArithmeticError
        If the solver does not report an optimal status.
    """
    import cvxpy as cp

    K, M, P = problem.K, problem.M, problem.P
    Xs, ys = problem.X.reshape(K * M, P), problem.y.reshape(K * M)
    w = cp.Variable(P)
    residual = Xs @ w - ys
    if problem.objective == "lad":
        obj = cp.norm1(residual) / M
    elif problem.objective == "ridge":
        obj = cp.sum_squares(residual) / M + problem.lam * cp.sum_squares(w)
    else:
        obj = (cp.sum_squares(residual) / M
               + problem.lam * (problem.lam1 * cp.norm1(w) + problem.lam2 * cp.sum_squares(w)))
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol, max_iter=500)
    if prob.status != cp.OPTIMAL or w.value is None:
        raise ArithmeticError(f"CVXPY/Clarabel solve of the centralised {problem.objective} problem ended with "
                              f"status {prob.status}")
    w_c = np.asarray(w.value, dtype=np.float64)
    gram, lin = Xs.T @ Xs / M, Xs.T @ ys / M
    if problem.objective == "ridge":
        exact = np.linalg.solve(gram + problem.lam * np.eye(P), lin)
        res, cert = float(np.linalg.norm(w_c - exact)), "distance to the closed form"
        w_c = exact
    elif problem.objective == "elastic_net":
        w_c, res = _elastic_net_refine(problem, w_c, gram, lin)
        cert = "KKT residual dist(0, dF(w_c))"
    else:
        w_c, res = _lad_vertex(problem, w_c, Xs, ys)
        cert = "LP optimality: excess of the basic dual multipliers over [-1, 1] (0: w_c is an exact minimiser)"
    w_c = readonly(w_c, np.float64)
    return GroundTruth(w_c=w_c, F_star=float(problem.centralized_objective(w_c)), certificate=cert, residual=res,
                       solver_status=str(prob.status))


def _elastic_net_kkt(problem: NFLProblem, w, gram, lin) -> float:
    smooth = 2.0 * (gram @ w - lin) + 2.0 * problem.lam * problem.lam2 * w
    t = problem.lam * problem.lam1
    nz = w != 0.0
    res = np.where(nz, smooth + t * np.sign(w), np.maximum(np.abs(smooth) - t, 0.0))
    return float(np.linalg.norm(res))


def _elastic_net_refine(problem: NFLProblem, w, gram, lin) -> tuple[np.ndarray, float]:
    """Solve the KKT system exactly on the solver's support (coordinates with |w| > 1e-8) and keep the better point."""
    support = np.abs(w) > 1e-8
    candidate = np.zeros_like(w)
    if support.any():
        H = 2.0 * gram + 2.0 * problem.lam * problem.lam2 * np.eye(problem.P)
        b = 2.0 * lin - problem.lam * problem.lam1 * np.sign(w)
        candidate[support] = np.linalg.solve(H[np.ix_(support, support)], b[support])
    if np.array_equal(np.sign(candidate), np.sign(w) * support):
        r_candidate, r_solver = (_elastic_net_kkt(problem, candidate, gram, lin),
                                 _elastic_net_kkt(problem, w, gram, lin))
        if r_candidate <= r_solver:
            return candidate, r_candidate
    return w, _elastic_net_kkt(problem, w, gram, lin)


def _lad_vertex(problem: NFLProblem, w, Xs, ys) -> tuple[np.ndarray, float]:
    r"""Snap the interior-point LAD solution to the vertex through its P smallest residuals and certify it.

    At a vertex :math:`X_B w = y_B` (:math:`|B| = P`), :math:`0 \in \partial F(w)` iff the basic multipliers
    :math:`s_B = -X_B^{-\top}X_N^\top\operatorname{sign}(r_N)` lie in :math:`[-1, 1]^P`; the returned residual is
    :math:`\max(0, \max|s_B| - 1)` (0: an exact minimiser; :math:`\max|s_B| < 1`: the unique one). Falls back to
    the solver's point with an infinite residual if the basis is singular or the vertex is worse.
    """
    r = Xs @ w - ys
    basis = np.argsort(np.abs(r))[: problem.P]
    XB = Xs[basis]
    if np.linalg.matrix_rank(XB) < problem.P:
        return w, float("inf")
    vertex = np.linalg.solve(XB, ys[basis])
    if problem.centralized_objective(vertex) > problem.centralized_objective(w) + 1e-9:
        return w, float("inf")
    rv = Xs @ vertex - ys
    others = np.ones(rv.size, dtype=bool)
    others[basis] = False
    s_basic = np.linalg.solve(XB.T, -Xs[others].T @ np.sign(rv[others]))
    return vertex, float(max(0.0, np.max(np.abs(s_basic)) - 1.0))


