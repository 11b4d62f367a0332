"""PGFL's client sub-problem solvers, vectorised over clients and runs: ridge in closed form, logistic by the certified
proximal Newton solver, any convex loss through CVXPY.
"""

from __future__ import annotations

import numpy as np

from theory._rounding import gamma
from theory.logistic import GLMData, ProximalGLM, solve_proximal_newton
from theory.pgfl.problem import PGFLProblem, cvxpy_data_term

__all__ = ["CVXPY_CLIENT_TOL", "LOGISTIC_GRADIENT_TOL", "client_solver"]


def _client_solve_ridge(problem: PGFLProblem, rho: float) -> np.ndarray:
    """(H_k + (2 lambda/|C_s| + rho) I)^{-1}, shape (K, d, d): the ridge client step's matrix."""
    eye = np.eye(problem.d)
    return np.linalg.inv(problem.hessians + (problem.ridge_weights + rho)[:, None, None] * eye)


#: Gradient-norm tolerance handed to the logistic client solve (docs/papers/pgfl.md#algorithm-1: Newton to ||grad|| <=
#: 1e-10), certified (the computed norm plus its rounding bound, :func:`theory.logistic.solve_proximal_newton`).
LOGISTIC_GRADIENT_TOL = 1e-10


def _logistic_samples(problem: PGFLProblem) -> GLMData:
    """The clients' padded samples as one batch of data terms (1/D_k weights, 0 on padding)."""
    X, y, weights = problem.padded
    return GLMData(X=X, y=y, weights=weights, loss="logistic")


def _logistic_client_step(problem: PGFLProblem, data: GLMData, rho: float, anchor: np.ndarray, phi: np.ndarray,
                          warm: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
    """Solve (4) for the logistic loss (:func:`theory.logistic.solve_proximal_newton`, warm-started, to
    LOGISTIC_GRADIENT_TOL) for all runs and clients or only the ``active`` (R, K) ones (scheduled clients; the
    others keep ``warm``, which the iteration discards anyway).

    Up to a constant, (4) is sum_i c_i l(x_i^T w) + (m/2)||w - (phi + rho anchor)/m||^2, m = rho + 2 lambda/|C_s|:
    m-strongly convex, so the minimiser is unique. Raises ArithmeticError
    (:class:`theory.logistic.NewtonNotConverged`) if a solve does not converge.
    """
    curvature = problem.ridge_weights + rho
    if active is None or active.all():
        return _logistic_solve(data, curvature, rho, anchor, phi, warm)
    out = warm.copy()
    r, k = np.nonzero(active)
    if r.size:   # the active (run, client) pairs as one batch of independent solves
        subset = GLMData(X=data.X[k], y=data.y[k], weights=data.weights[k], loss="logistic")
        out[r, k] = _logistic_solve(subset, curvature[k], rho, anchor[r, k], phi[r, k], warm[r, k])
    return out


def _logistic_solve(data: GLMData, curvature, rho: float, anchor, phi, warm) -> np.ndarray:
    """(4) as the proximal problem of curvature m = 2 lambda/|C_s| + rho and centre (phi + rho anchor)/m."""
    m = curvature[..., None]
    center = (phi + rho * anchor) / m
    problem = ProximalGLM(data=data, curvature=curvature, center=center,
                          center_error=gamma(6) * (np.abs(phi) + rho * np.abs(anchor)) / m)
    return np.array(solve_proximal_newton(problem, gtol=LOGISTIC_GRADIENT_TOL, w0=warm).w)


#: Tolerances handed to Clarabel by the generic (CVXPY) client step: absolute and relative duality gap and
#: feasibility. The step's minimiser is then within sqrt(2 gap / mu) of the exact one, mu = rho + 2 lambda/|C_s|.
CVXPY_CLIENT_TOL = 1e-10


class _CvxpyClientStep:
    """Solve (4) with CVXPY (Clarabel) for a generic convex loss: one parametrised problem per client.

    This is the slow generic path: a Python loop over runs and clients, one conic solve each (the ridge
    and logistic losses have vectorised solvers). The problem of client k is
    ``minimise f_k(w) - c^T w + (rho/2)||w||^2`` with the parameter ``c = phi_k + rho * anchor_k``, which
    equals (4) up to a constant, so each client's problem is compiled once.
    """

    def __init__(self, problem: PGFLProblem, rho: float):
        import cvxpy as cp

        self.problems, self.variables, self.parameters = [], [], []
        for k in range(problem.K):
            w = cp.Variable(problem.d)
            c = cp.Parameter(problem.d)
            objective = (cvxpy_data_term(problem, k, w) + 0.5 * (problem.ridge_weights[k] + rho) * cp.sum_squares(w)
                         - c @ w)
            self.problems.append(cp.Problem(cp.Minimize(objective)))
            self.variables.append(w)
            self.parameters.append(c)
        self.rho = rho

    def __call__(self, anchor: np.ndarray, phi: np.ndarray, warm: np.ndarray,
                 active: np.ndarray | None = None) -> np.ndarray:
        import cvxpy as cp

        out = np.array(warm, dtype=np.float64, copy=True)
        linear = phi + self.rho * anchor
        tol = CVXPY_CLIENT_TOL
        for r in range(anchor.shape[0]):
            for k, (prob, w, c) in enumerate(zip(self.problems, self.variables, self.parameters, strict=True)):
                if active is not None and not active[r, k]:
                    continue                    # not scheduled: keeps warm (discarded by the iteration)
                c.value = linear[r, k]
                prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol)
                if prob.status != cp.OPTIMAL or w.value is None:
                    raise ArithmeticError(f"CVXPY client step of client {k} (run {r}) ended with status {prob.status}")
                out[r, k] = w.value
        return out


def client_solver(problem: PGFLProblem, rho: float, *, linear_only: bool = False):
    """The client step (4) as ``solve(anchor, phi, warm, active=None) -> w`` for all runs and clients; with an
    (R, K) mask ``active`` only those entries need be solved (the others may return ``warm``)."""
    if problem.loss == "cvxpy":
        if linear_only:
            raise ValueError("a generic CVXPY loss has no iteration matrix or linear fixed point")
        return _CvxpyClientStep(problem, rho)
    if problem.loss == "ridge":
        inverse = _client_solve_ridge(problem, rho)
        data = 0.0 if linear_only else problem.linear_terms
        # One matrix-vector product per (run, client), batched by matmul: a run's result does not depend on the other
        # runs of the batch (arms run in lockstep keep their own numbers), at half einsum's time.
        return lambda anchor, phi, warm, active=None: (inverse @ (data + phi + rho * anchor)[..., None])[..., 0]
    if linear_only:
        raise ValueError("the logistic iteration is not affine: no iteration matrix or linear fixed point")
    data = _logistic_samples(problem)
    return lambda anchor, phi, warm, active=None: _logistic_client_step(problem, data, rho, anchor, phi, warm, active)
