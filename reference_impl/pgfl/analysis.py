"""PGFL without noise as an affine map of its state: the map, its spectral radius and its fixed point."""

from __future__ import annotations

import numpy as np

from reference_impl.pgfl.algorithm import step
from reference_impl.pgfl.config import PGFLConfig, PGFLState
from reference_impl.pgfl.solvers import client_solver
from theory._validate import readonly
from theory.pgfl.problem import PGFLProblem

__all__ = ["affine_map", "fixed_point", "iteration_spectral_radius"]


def affine_map(problem: PGFLProblem, config: PGFLConfig) -> tuple[np.ndarray, np.ndarray]:
    """(T, c) with u -> T u + c the iteration on u = (server models, duals), full participation, no noise.

    Built column by column from the homogeneous step (exact: the map is affine), for constant tau
    (tau^(1) is used). Meant for small instances (state dimension S*Q*d + K*d up to 4000).
    """
    S, Q, d, K = problem.S, problem.n_clusters, problem.d, problem.K
    n_srv, n_dual = S * Q * d, K * d
    dim = n_srv + n_dual
    if dim > 4000:
        raise ValueError(f"state dimension {dim} too large for a dense iteration matrix (limit 4000)")
    def stacked(batch: int, servers: np.ndarray, duals: np.ndarray, linear_only: bool) -> np.ndarray:
        state = PGFLState(
            w_clients=np.zeros((batch, K, d)), phi=duals.reshape(batch, K, d),
            w_servers=servers.reshape(batch, S, Q, d), w_hat=np.zeros((batch, S, Q, d)),
            w_tilde_servers=np.zeros((batch, S, Q, d)), msg_w=np.zeros((batch, K, d)),
            msg_phi=np.zeros((batch, K, d)), sent=np.zeros((batch, K), dtype=bool))
        solve = client_solver(problem, config.rho, linear_only=linear_only)
        nxt = step(problem, config, solve, state, 1, np.zeros((batch, K, d)), np.ones((batch, K), dtype=bool))
        return np.concatenate([nxt.w_servers.reshape(batch, n_srv), nxt.phi.reshape(batch, n_dual)], axis=1)

    basis = np.eye(dim)
    T = stacked(dim, basis[:, :n_srv], basis[:, n_srv:], True).T
    c = stacked(1, np.zeros((1, n_srv)), np.zeros((1, n_dual)), False)[0]
    return T, c


def iteration_spectral_radius(problem: PGFLProblem, config: PGFLConfig) -> float:
    """Spectral radius r(T) of the iteration (full participation, no noise, tau^(1) held constant)."""
    T, _ = affine_map(problem, config)
    return float(np.max(np.abs(np.linalg.eigvals(T))))


def fixed_point(problem: PGFLProblem, config: PGFLConfig) -> tuple[np.ndarray, float, float]:
    """Fixed point of the iteration for any constant tau (full participation, no noise), small instances.

    Solves (I - T) u = c for the affine map of :func:`iteration_spectral_radius`. Returns the server models
    ``(S, Q, d)``, the relative residual of the solve and r(T); the iterates converge to it iff r(T) < 1.
    """
    T, c = affine_map(problem, config)
    lhs = np.eye(T.shape[0]) - T
    u = np.linalg.solve(lhs, c)
    residual = float(np.linalg.norm(lhs @ u - c) / max(np.linalg.norm(c), 1e-300))
    radius = float(np.max(np.abs(np.linalg.eigvals(T))))
    n_srv = problem.S * problem.n_clusters * problem.d
    return readonly(u[:n_srv].reshape(problem.S, problem.n_clusters, problem.d)), residual, radius
