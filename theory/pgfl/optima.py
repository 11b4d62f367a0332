r"""PGFL's closed forms (docs/papers/pgfl.md#reference-problems, #structure): the cluster optima (Pa), their spread
:math:`\eta` (seed 000 eq. (28)) and the tau = 0 fixed point (Pc) of the implemented iteration.

The iteration-dependent quantities for tau > 0 (the affine map, r(T), its fixed point) are built from the
reference step and live in :mod:`reference_impl.pgfl`.
"""

from __future__ import annotations

import numpy as np

from theory._validate import readonly
from theory.logistic import GLMData, ProximalGLM, proximal_gradient, solve_proximal_newton
from theory.pgfl.problem import PGFLProblem

__all__ = ["CLUSTER_OPTIMUM_GTOL", "cluster_gradient_norm", "cluster_optima", "eta_cluster_distance",
           "fixed_point_tau0"]

#: Gradient-norm tolerance handed to the certified Newton solve of a logistic cluster optimum (Pa), on the members'
#: mean gradient (rounding included): 4x the certified rounding floor of the classification experiments' clusters
#: (1e-14 to 3e-14), so the optimum is within 1e-13/(2 lambda/|C_s|) (7.5e-11 at lambda = 1e-2, |C_s| = 15) of the
#: exact one.
CLUSTER_OPTIMUM_GTOL = 1e-13


def cluster_optima(problem: PGFLProblem) -> np.ndarray:
    r"""(Pa): :math:`w^\star_{(q)} = \arg\min_w \sum_{k\in C_{(q)}} f_k(w)` for every cluster, shape (Q, d).

    Ridge: the linear system :math:`\sum_k (H_k + 2\lambda/|C_{s(k)}|\,I) w = \sum_k h_k`. Logistic: the certified
    Newton solver :func:`theory.logistic.solve_proximal_newton` on the same objective, to CLUSTER_OPTIMUM_GTOL.
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


def _cluster_glm(problem: PGFLProblem, clusters) -> tuple[ProximalGLM, np.ndarray]:
    r""":math:`|C_{(q)}|^{-1}\sum_{k\in C_{(q)}} f_k` (same minimiser as (Pa), gradients on one client's scale, so a
    gradient tolerance means the same for every cluster size) of the listed clusters as one batch of
    :class:`theory.logistic.ProximalGLM`: every member's samples stacked (weights 1/(D_k |C_(q)|), padded with
    weight 0), curvature the mean of 2 lambda/|C_s(k)|. Also returns the member counts |C_(q)|."""
    members = [np.flatnonzero(problem.client_cluster == q) for q in clusters]
    for q, idx in zip(clusters, members, strict=True):
        if idx.size == 0:
            raise ValueError(f"cluster {q} has no client: its optimum is undefined")
    n = max(int(problem.samples[idx].sum()) for idx in members)
    X = np.zeros((len(members), n, problem.d))
    y = np.zeros((len(members), n))
    weights = np.zeros((len(members), n))
    for j, idx in enumerate(members):
        rows = np.concatenate([problem.X[k] for k in idx])
        X[j, :rows.shape[0]] = rows
        y[j, :rows.shape[0]] = np.concatenate([problem.y[k] for k in idx])
        weights[j, :rows.shape[0]] = np.concatenate([np.full(problem.samples[k], 1.0 / (problem.samples[k] * idx.size))
                                                     for k in idx])
    curvature = np.array([problem.ridge_weights[idx].mean() for idx in members])
    glm = ProximalGLM(data=GLMData(X=X, y=y, weights=weights, loss="logistic"), curvature=curvature,
                      center=np.zeros((len(members), problem.d)))
    return glm, np.array([idx.size for idx in members])


def _cluster_optima_logistic(problem: PGFLProblem) -> np.ndarray:
    """Every cluster's optimum in one batched certified Newton solve (:func:`theory.logistic.solve_proximal_newton`)
    to CLUSTER_OPTIMUM_GTOL on the members' mean gradient; a cluster that does not converge (e.g. lambda = 0 on
    separable data) raises ArithmeticError (:class:`theory.logistic.NewtonNotConverged`), never an uncertified
    optimum."""
    glm, _ = _cluster_glm(problem, range(problem.n_clusters))
    return readonly(solve_proximal_newton(glm, gtol=CLUSTER_OPTIMUM_GTOL).w)


def cluster_gradient_norm(problem: PGFLProblem, q: int, w: np.ndarray) -> float:
    """||sum_{k in C_(q)} grad f_k(w)|| (as computed): the certificate of an optimum of (Pa) (both losses)."""
    if problem.loss == "cvxpy":
        raise ValueError("cluster_gradient_norm needs loss 'ridge' or 'logistic' (no gradient of a generic CVXPY loss)")
    if problem.loss == "logistic":
        glm, members = _cluster_glm(problem, [q])
        return float(members[0] * np.linalg.norm(proximal_gradient(glm, np.asarray(w, dtype=np.float64)[None])))
    total = np.zeros(problem.d)
    for k in np.flatnonzero(problem.client_cluster == q):
        xk, yk, D = problem.X[k], problem.y[k], problem.samples[k]
        total += 2.0 / D * xk.T @ (xk @ w - yk)
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
    :math:`A` the row-normalised closed-neighbourhood matrix (docs/papers/pgfl.md#structure):

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
        raise ValueError("every (server, cluster) group must hold a client for the fixed point (Pc)")
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
