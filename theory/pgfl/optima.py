r"""PGFL's closed forms (shared/spec/pgfl.md sections 2.5 and 2.8): the cluster optima (Pa), their spread
:math:`\eta` (seed 000 eq. (28)) and the tau = 0 fixed point (Pc) of the implemented iteration.

The iteration-dependent quantities for tau > 0 (the affine map, r(T), its fixed point) are built from the
reference step and live in :mod:`reference_impl.pgfl`.
"""

from __future__ import annotations

import numpy as np

from theory._validate import readonly
from theory.pgfl.problem import PGFLProblem

__all__ = ["cluster_gradient_norm", "cluster_optima", "eta_cluster_distance", "fixed_point_tau0"]


def cluster_optima(problem: PGFLProblem) -> np.ndarray:
    r"""(Pa): :math:`w^\star_{(q)} = \arg\min_w \sum_{k\in C_{(q)}} f_k(w)` for every cluster, shape (Q, d).

    Ridge: the linear system :math:`\sum_k (H_k + 2\lambda/|C_{s(k)}|\,I) w = \sum_k h_k`. Logistic: CVXPY
    (Clarabel) on the same objective, certified by the gradient norm at the returned point.
    """
    if problem.loss == "logistic":
        return _cluster_optima_logistic(problem)
    Q, d = problem.n_clusters, problem.d
    optima = np.empty((Q, d))
    eye = np.eye(d)
    for q in range(Q):
        members = problem.client_cluster == q
        if not members.any():
            raise ValueError(f"cluster {q} has no client: its optimum is undefined")
        lhs = (problem.hessians[members] + problem.ridge_weights[members, None, None] * eye).sum(axis=0)
        optima[q] = np.linalg.solve(lhs, problem.linear_terms[members].sum(axis=0))
    return readonly(optima)


def _cluster_optima_logistic(problem: PGFLProblem) -> np.ndarray:
    """CVXPY (Clarabel, default tolerances) for each cluster, then Newton polishing to ||grad|| <= 1e-12.

    The exponential-cone solve is the independent ground truth; its accuracy (about 1e-7 in the gradient)
    is then driven to rounding level by Newton steps on the same objective, which certify the result.
    """
    import cvxpy as cp

    optima = np.empty((problem.n_clusters, problem.d))
    eye = np.eye(problem.d)
    for q in range(problem.n_clusters):
        members = np.flatnonzero(problem.client_cluster == q)
        if members.size == 0:
            raise ValueError(f"cluster {q} has no client: its optimum is undefined")
        w = cp.Variable(problem.d)
        terms = []
        for k in members:
            z = problem.X[k] @ w
            terms.append(cp.sum(cp.logistic(z) - cp.multiply(problem.y[k], z)) / problem.samples[k]
                         + 0.5 * problem.ridge_weights[k] * cp.sum_squares(w))
        prob = cp.Problem(cp.Minimize(cp.sum(terms)))
        prob.solve(solver=cp.CLARABEL)
        if prob.status != cp.OPTIMAL or w.value is None:
            raise ArithmeticError(f"CVXPY solve of cluster {q}'s optimum ended with status {prob.status}")
        x = np.asarray(w.value, dtype=np.float64)
        for _ in range(50):
            grad, hess = np.zeros(problem.d), np.zeros((problem.d, problem.d))
            for k in members:
                xk, D = problem.X[k], problem.samples[k]
                p = 0.5 * (1.0 + np.tanh(0.5 * (xk @ x)))
                grad += xk.T @ (p - problem.y[k]) / D + problem.ridge_weights[k] * x
                hess += (xk.T * (p * (1.0 - p))) @ xk / D + problem.ridge_weights[k] * eye
            if np.linalg.norm(grad) <= 1e-12:
                break
            x = x - np.linalg.solve(hess, grad)
        else:   # never stored uncertified: the docstring promises ||grad|| <= 1e-12
            raise ArithmeticError(f"Newton polishing of cluster {q}'s optimum did not reach ||grad|| <= 1e-12")
        optima[q] = x
    return readonly(optima)


def cluster_gradient_norm(problem: PGFLProblem, q: int, w: np.ndarray) -> float:
    """||sum_{k in C_(q)} grad f_k(w)||: the certificate of an optimum of (Pa) (both losses)."""
    if problem.loss == "cvxpy":
        raise ValueError("cluster_gradient_norm needs loss 'ridge' or 'logistic' (no gradient of a generic CVXPY loss)")
    total = np.zeros(problem.d)
    for k in np.flatnonzero(problem.client_cluster == q):
        xk, yk, D = problem.X[k], problem.y[k], problem.samples[k]
        if problem.loss == "ridge":
            total += 2.0 / D * xk.T @ (xk @ w - yk)
        else:
            total += xk.T @ (0.5 * (1.0 + np.tanh(0.5 * (xk @ w))) - yk) / D
        total += problem.ridge_weights[k] * w
    return float(np.linalg.norm(total))


def eta_cluster_distance(optima: np.ndarray) -> float:
    r""":math:`\eta = \max_{q,r}\lVert w^\star_{(q)} - w^\star_{(r)}\rVert_2^2` (seed 000 eq. (28))."""
    w = np.asarray(optima, dtype=np.float64)
    diff = w[:, None, :] - w[None, :, :]
    return float(np.max(np.sum(diff**2, axis=2)))


def fixed_point_tau0(problem: PGFLProblem, config) -> tuple[np.ndarray, float]:
    r"""(Pc): the fixed point of the implemented iteration for tau = 0, full participation, no noise.

    Per cluster, with :math:`g_s(w) = G_s w - c_s` the mean gradient over :math:`C_{s,(q)}` and
    :math:`A` the row-normalised closed-neighbourhood matrix (spec 2.8 item 2):

    * Algorithm 1: :math:`(I - A)w + \rho^{-1} A\,g(w) = 0`;
    * Algorithm 2 (``local_aggregate``): :math:`(I - A)v + \rho^{-1} g(v) = 0`, :math:`w = A v`;
    * Algorithm 2 (``server_model``): the same equations as Algorithm 1.

    ``config`` needs ``rho``, ``algorithm`` and ``dual_ref`` (a :class:`reference_impl.pgfl.PGFLConfig`).
    Returns the server models ``(S, Q, d)`` and the largest relative residual of the solved systems.
    Raises ValueError if some (server, cluster) group is empty.
    """
    if problem.loss != "ridge":
        raise ValueError("fixed_point_tau0 solves the linear (ridge) fixed point; the logistic one is nonlinear")
    S, Q, d = problem.S, problem.n_clusters, problem.d
    counts = problem.groups.sum(axis=1).reshape(S, Q)
    if np.any(counts == 0):
        raise ValueError("every (server, cluster) group must hold a client for the fixed point of spec 2.8")
    A = problem.closed_neighbourhoods / problem.closed_neighbourhoods.sum(axis=1, keepdims=True)
    eye_d = np.eye(d)
    curv = problem.hessians + problem.ridge_weights[:, None, None] * eye_d
    result = np.empty((S, Q, d))
    worst = 0.0
    for q in range(Q):
        G = np.zeros((S, d, d))
        c = np.zeros((S, d))
        for s in range(S):
            members = (problem.client_server == s) & (problem.client_cluster == q)
            G[s] = curv[members].mean(axis=0)
            c[s] = problem.linear_terms[members].mean(axis=0)
        blockdiag = np.zeros((S * d, S * d))
        for s in range(S):
            blockdiag[s * d:(s + 1) * d, s * d:(s + 1) * d] = G[s]
        I_A = np.kron(np.eye(S) - A, eye_d)
        A_d = np.kron(A, eye_d)
        literal = config.algorithm == "alg2" and config.dual_ref == "local_aggregate"
        if literal:
            lhs, rhs = I_A + blockdiag / config.rho, c.ravel() / config.rho
        else:
            lhs, rhs = I_A + A_d @ blockdiag / config.rho, A_d @ c.ravel() / config.rho
        sol = np.linalg.solve(lhs, rhs)
        worst = max(worst, float(np.linalg.norm(lhs @ sol - rhs) / max(np.linalg.norm(rhs), 1e-300)))
        w = (A_d @ sol if literal else sol).reshape(S, d)
        result[:, q, :] = w
    return readonly(result), worst
