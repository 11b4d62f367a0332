r"""Where PGFL's :math:`\tau = 0` iteration goes: the fixed point (Pc) with its duals, the :math:`\pi`-weighted
optimum it tends to as :math:`\rho\to\infty`, and the :math:`O(1/\rho)` consensus bias between them
(docs/papers/pgfl.md#structure, #erratum-e12). The derivation of the bias identity is in :func:`consensus_bias`.
"""

from __future__ import annotations

import numpy as np

from theory.pgfl.optima import fixed_point_tau0
from theory.pgfl.problem import PGFLProblem
from theory.pgfl.stability import mixing_matrix

__all__ = ["consensus_bias", "fixed_point_condition_number", "fixed_point_state", "group_curvature",
           "perron_weights", "pi_weighted_optimum"]


def group_curvature(problem: PGFLProblem, q: int):
    """G_s (mean Hessian incl. ridge) and c_s (mean linear term) over C_{s,(q)}, shapes (S, d, d), (S, d)."""
    eye = np.eye(problem.d)
    curv = problem.hessians + problem.ridge_weights[:, None, None] * eye
    G = np.zeros((problem.S, problem.d, problem.d))
    c = np.zeros((problem.S, problem.d))
    for s in range(problem.S):
        members = (problem.client_server == s) & (problem.client_cluster == q)
        if not members.any():
            raise ValueError(f"group (server {s}, cluster {q}) is empty: the fixed point (Pc) needs every group")
        G[s] = curv[members].mean(axis=0)
        c[s] = problem.linear_terms[members].mean(axis=0)
    return G, c


def perron_weights(problem: PGFLProblem) -> np.ndarray:
    """pi_s = |N_s| / sum |N_p|: the left Perron vector of A_srv."""
    deg = problem.closed_neighbourhoods.sum(axis=1)
    return deg / deg.sum()


def pi_weighted_optimum(problem: PGFLProblem) -> np.ndarray:
    r"""The :math:`\pi`-weighted optimum per cluster, shape (Q, d):

    .. math:: w_\pi = \arg\min_w \sum_s \pi_s |\mathcal C_{s,(q)}|^{-1}\sum_{k\in\mathcal C_{s,(q)}} f_k(w),
              \qquad \pi_s \propto |\mathcal N_s|.
    """
    pi = perron_weights(problem)
    out = np.empty((problem.n_clusters, problem.d))
    for q in range(problem.n_clusters):
        G, c = group_curvature(problem, q)
        out[q] = np.linalg.solve(np.einsum("s,sij->ij", pi, G), pi @ c)
    return out


def consensus_bias(problem: PGFLProblem, rho: float, fixed_point: np.ndarray) -> list[dict]:
    r"""Per cluster: :math:`\kappa`, :math:`\lVert g(\mathbf 1\otimes w_\pi)\rVert`, :math:`\max_s\lVert G_s\rVert`, the
    distance :math:`\lVert w - \mathbf 1\otimes w_\pi\rVert` of the given (Algorithm 1) fixed point and the
    residual of the identity :math:`\rho(w - \mathbf 1\otimes w_\pi) = -N(I-A)^\#A\,g(w)`.

    Derivation. For Algorithm 1, :math:`(I - A)w = -\rho^{-1}A g(w)` with :math:`g_s(w) = G_s w - c_s`;
    :math:`\pi^\top(I-A) = 0` gives :math:`\sum_s\pi_s g_s(w_s) = 0`, and with the group inverse :math:`(I-A)^\#` and
    :math:`N = I - \mathbf 1\otimes\bar G^{-1}[\pi_1G_1,\dots,\pi_SG_S]` (:math:`\bar G = \sum_s\pi_sG_s`),

    .. math:: w - \mathbf 1\otimes w_\pi = -\rho^{-1} N (I-A)^\# A\, g(w),

    so, with :math:`\kappa = \lVert N(I-A)^\#A\rVert_2`, :math:`\lVert w - \mathbf 1\otimes w_\pi\rVert \le
    \kappa\lVert g(\mathbf 1\otimes w_\pi)\rVert/(\rho - \kappa\max_s\lVert G_s\rVert)` for
    :math:`\rho > \kappa\max_s\lVert G_s\rVert`: :math:`O(1/\rho)`, and zero for :math:`S = 1`. On a complete server
    graph :math:`(I-A)^\# A = 0`: (Pc) *is* the :math:`\pi`-weighted optimum for every :math:`\rho`.
    """
    S, d = problem.S, problem.d
    A = mixing_matrix(problem)
    pi = perron_weights(problem)
    Pi = np.outer(np.ones(S), pi)
    group_inverse = np.linalg.inv(np.eye(S) - A + Pi) - Pi                    # (I - A)^#
    eye_d = np.eye(d)
    w_pi = pi_weighted_optimum(problem)
    out = []
    for q in range(problem.n_clusters):
        G, c = group_curvature(problem, q)
        G_bar = np.einsum("s,sij->ij", pi, G)
        blockdiag = np.zeros((S * d, S * d))
        for s in range(S):
            blockdiag[s * d:(s + 1) * d, s * d:(s + 1) * d] = G[s]
        weights = np.concatenate([pi[s] * G[s] for s in range(S)], axis=1)    # [pi_1 G_1, ..., pi_S G_S]
        N = np.eye(S * d) - np.kron(np.ones((S, 1)), np.linalg.solve(G_bar, weights))
        M = N @ np.kron(group_inverse @ A, eye_d)
        kappa = float(np.linalg.norm(M, 2))
        g_pi = (blockdiag @ np.tile(w_pi[q], S)) - c.ravel()
        w = np.asarray(fixed_point)[:, q, :].ravel()
        e = w - np.tile(w_pi[q], S)
        g_w = blockdiag @ w - c.ravel()
        identity_gap = float(np.linalg.norm(rho * e + M @ g_w))
        out.append({"kappa": kappa, "g_pi": float(np.linalg.norm(g_pi)),
                    "G_max": float(max(np.linalg.norm(G[s], 2) for s in range(S))),
                    "distance": float(np.linalg.norm(e)), "g_w": float(np.linalg.norm(g_w)),
                    "identity_gap": identity_gap, "scale": float(np.linalg.norm(rho * e) + np.linalg.norm(M @ g_w))})
    return out


def fixed_point_state(problem: PGFLProblem, config) -> tuple[np.ndarray, np.ndarray, float]:
    r"""The fixed point :math:`u^\star = (w^\star_{s,(q)}, \varphi^\star_k)` of the noise-free :math:`\tau = 0`
    iteration.

    Server models from :func:`theory.pgfl.optima.fixed_point_tau0`. The duals follow from the client
    optimality condition :math:`w_k = w_{s,(q)} + (\varphi_k - \nabla f_k(w_k))/\rho` at the limit of the
    clients: Algorithm 1 (and ``server_model``): :math:`w_k = w_{s,(q)}`, so :math:`\varphi_k = \nabla f_k(w_{s,(q)})`;
    Algorithm 2 literal: :math:`w_k = v_{s,(q)}` with :math:`(I-A)v + g(v)/\rho = 0` (solved here, and
    :math:`Av` must reproduce the reference's server models), so :math:`\varphi_k = \nabla f_k(v) + \rho(v - w)`.

    Returns ``(u_star, w_star, residual)``: the state vector (server models then duals, as
    ``verify.pgfl._tau0_iteration.state_vectors``), the server models (S, Q, d) and the worst relative residual of the
    solves.
    """
    w_star, residual = fixed_point_tau0(problem, config)
    S, Q, d = problem.S, problem.n_clusters, problem.d
    literal = config.algorithm == "alg2" and config.dual_ref == "local_aggregate"
    s_k, q_k = problem.client_server, problem.client_cluster
    if literal:
        A = mixing_matrix(problem)
        v = np.empty((S, Q, d))
        for q in range(Q):
            G, c = group_curvature(problem, q)
            lhs = np.kron(np.eye(S) - A, np.eye(d))
            for s in range(S):
                lhs[s * d:(s + 1) * d, s * d:(s + 1) * d] += G[s] / config.rho
            rhs = c.ravel() / config.rho
            sol = np.linalg.solve(lhs, rhs)
            residual = max(residual, float(np.linalg.norm(lhs @ sol - rhs) / max(np.linalg.norm(rhs), 1e-300)))
            v[:, q, :] = sol.reshape(S, d)
        agreement = np.max(np.abs(np.einsum("sp,pqd->sqd", A, v) - w_star)) / max(np.max(np.abs(w_star)), 1e-300)
        residual = max(residual, float(agreement))
        clients = v[s_k, q_k]
    else:
        clients = w_star[s_k, q_k]
    grad = (np.einsum("kij,kj->ki", problem.hessians, clients) + problem.ridge_weights[:, None] * clients
            - problem.linear_terms)
    phi = grad + (config.rho * (clients - w_star[s_k, q_k]) if literal else 0.0)
    return np.concatenate([w_star.ravel(), phi.ravel()]), np.asarray(w_star), residual


def fixed_point_condition_number(problem: PGFLProblem, rho: float) -> float:
    """Largest condition number of the Algorithm-1 fixed-point systems (I - A) + A G / rho over clusters."""
    A = np.kron(mixing_matrix(problem), np.eye(problem.d))
    worst = 1.0
    for q in range(problem.n_clusters):
        G, _ = group_curvature(problem, q)
        blockdiag = np.zeros_like(A)
        for s in range(problem.S):
            blockdiag[s * problem.d:(s + 1) * problem.d, s * problem.d:(s + 1) * problem.d] = G[s]
        worst = max(worst, float(np.linalg.cond(np.eye(A.shape[0]) - A + A @ blockdiag / rho)))
    return worst
