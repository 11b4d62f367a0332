r"""PGFL and privacy-preserving PGFL (ridge loss), vectorised over clients and Monte-Carlo runs.

Reference implementation of Algorithm 1 (non-private, multi-step server update) and Algorithm 2
(dynamic zCDP) of shared/spec/pgfl.md sections 2.2-2.3, with every unspecified detail of section 2.7
a validated field of :class:`PGFLConfig`. All clients of all servers advance as arrays of shape
``(runs, K, d)``; servers' models are ``(runs, S, Q, d)``. Randomness only through the ``rng``
argument; two runs called with generators from the same seed share data-independent draws (privacy
noise and client scheduling) exactly: common random numbers, as Theorem II's check needs.

Variants: a generic convex loss through CVXPY (``PGFLProblem(loss="cvxpy", cvxpy_loss=...)``, spec 2.1; the
slow path, one conic solve per client and run) and the single-step server update V0 as printed or
sign-corrected (``PGFLConfig(server_update=...)``, spec 2.6, :func:`single_step_server_update`).

References
----------
.. [1] seed 000_133b71fd0aa99eb4.txt, Algorithms 1-2, eqs. (4)-(5), (8)-(12); seed
   004_180cd372987d137b.txt, Algorithms 4-5, eqs. (5.4)-(5.12).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from theory._rounding import gamma
from theory._validate import readonly
from theory.logistic import GLMData, ProximalGLM, solve_proximal_newton
from theory.pgfl.optima import (
    cluster_gradient_norm,
    cluster_optima,
    eta_cluster_distance,
    fixed_point_tau0,
)
from theory.pgfl.problem import PGFLProblem, cvxpy_data_term

__all__ = [
    "PGFLConfig",
    "PGFLProblem",
    "PGFLRun",
    "accuracy_observer",
    "affine_map",
    "client_solver",
    "cluster_gradient_norm",
    "cluster_optima",
    "eta_cluster_distance",
    "fixed_point",
    "fixed_point_tau0",
    "initial_state",
    "iterate_pgfl_arms",
    "iteration_spectral_radius",
    "nmsd_observer",
    "run_pgfl",
    "run_pgfl_arms",
    "server_models_observer",
    "single_step_server_update",
    "step",
    "synthetic_regression",
]


#: Server updates of :class:`PGFLConfig` (spec 2.6: multi-step (8)-(10), and V0 as printed / corrected).
SERVER_UPDATES = ("multi_step", "single_step_printed", "single_step_corrected")


@dataclass(frozen=True, kw_only=True)
class PGFLConfig:
    """Algorithm, schedules and every unspecified detail of spec section 2.7, validated.

    Attributes
    ----------
    rho : float
        ADMM penalty rho > 0.
    taus : tuple of float
        tau^(1), tau^(2), ... in [0, 1]; the last value repeats when the run is longer. Use
        :meth:`constant_tau` or :meth:`geometric_tau` (V2: tau_0 beta^n) to build it.
    algorithm : {"alg1", "alg2"}
        Algorithm 1 (non-private) or Algorithm 2 (privacy-preserving, noisy uploads).
    dual_ref : {"local_aggregate", "server_model"}
        Algorithm 2's dual update reference (literal reading: ``local_aggregate``).
    phi0 : float or None
        Initial zCDP parameter phi^(0) > 0 (Algorithm 2); ``None`` means no noise.
    zeta : float
        Noise variance decay in (0, 1].
    C : float
        Gradient bound C_k > 0 used for the sensitivity 2C/(rho D_k) (ridge has none: nominal).
    noise_convention : {"I", "II"}
        "I": release n uses zeta^n delta2(0); "II": zeta^(n-1) delta2(0).
    scheduled : int or None
        Clients each server samples per iteration (V4), or ``None`` for full participation.
    aggregation : {"cache", "fresh"}
        With scheduling: average the last message of every client that has sent (cache) or only this
        iteration's (fresh).
    server_update : {"multi_step", "single_step_printed", "single_step_corrected"}
        Server update. ``multi_step`` (default): eqs. (8)-(10), Algorithms 1-2. The single-step variant V0
        (spec 2.6; seed 000 eqs. (6)-(7), seed 004 eqs. (5.6)-(5.7)) replaces (9)-(10) by a decentralised-ADMM
        step with server duals psi: ``single_step_printed`` as printed, ``single_step_corrected`` with the two
        sign corrections of spec 2.6 (``+ w_p`` in the consensus term, psi accumulating ``w_s - w_p``); see
        :func:`single_step_server_update`. V0 needs full participation (``scheduled=None``) and every group
        C_{s,(q)} non-empty.
    """

    rho: float
    taus: tuple = (0.0,)
    algorithm: str = "alg1"
    dual_ref: str = "local_aggregate"
    phi0: float | None = None
    zeta: float = 1.0
    C: float = 1.0
    noise_convention: str = "I"
    scheduled: int | None = None
    aggregation: str = "cache"
    server_update: str = "multi_step"

    def __post_init__(self) -> None:
        if not (isinstance(self.rho, (int, float)) and math.isfinite(self.rho) and self.rho > 0):
            raise ValueError(f"rho must be a finite real in (0, inf), got {self.rho!r}")
        taus = tuple(float(t) for t in np.atleast_1d(np.asarray(self.taus, dtype=np.float64)))
        if not taus or any(not (0.0 <= t <= 1.0) for t in taus):
            raise ValueError(f"taus must be a non-empty sequence in [0, 1], got {self.taus!r}")
        object.__setattr__(self, "taus", taus)
        if self.algorithm not in ("alg1", "alg2"):
            raise ValueError(f"algorithm must be 'alg1' or 'alg2', got {self.algorithm!r}")
        if self.dual_ref not in ("local_aggregate", "server_model"):
            raise ValueError(f"dual_ref must be 'local_aggregate' or 'server_model', got {self.dual_ref!r}")
        if self.phi0 is not None:
            if self.algorithm != "alg2":
                raise ValueError("phi0 (privacy noise) requires algorithm='alg2'")
            if not (math.isfinite(self.phi0) and self.phi0 > 0):
                raise ValueError(f"phi0 must be a finite real in (0, inf) or None, got {self.phi0!r}")
        if not (0.0 < self.zeta <= 1.0):
            raise ValueError(f"zeta must be in (0, 1], got {self.zeta!r}")
        if not (math.isfinite(self.C) and self.C > 0):
            raise ValueError(f"C must be a finite real in (0, inf), got {self.C!r}")
        if self.noise_convention not in ("I", "II"):
            raise ValueError(f"noise_convention must be 'I' or 'II', got {self.noise_convention!r}")
        if self.scheduled is not None and (isinstance(self.scheduled, bool) or not isinstance(self.scheduled, int)
                                           or self.scheduled < 1):
            raise ValueError(f"scheduled must be an integer >= 1 or None, got {self.scheduled!r}")
        if self.aggregation not in ("cache", "fresh"):
            raise ValueError(f"aggregation must be 'cache' or 'fresh', got {self.aggregation!r}")
        if self.server_update not in SERVER_UPDATES:
            raise ValueError(f"server_update must be one of {SERVER_UPDATES}, got {self.server_update!r}")
        if self.server_update != "multi_step" and self.scheduled is not None:
            raise ValueError(f"server_update = {self.server_update!r} (V0) needs full participation: scheduled must "
                             f"be None, got {self.scheduled!r}")

    @staticmethod
    def constant_tau(tau: float) -> tuple:
        return (float(tau),)

    @staticmethod
    def geometric_tau(tau0: float, beta: float, iterations: int) -> tuple:
        """V2: tau^(n) = tau_0 beta^n, n = 1..iterations."""
        return tuple(float(tau0) * float(beta) ** np.arange(1, iterations + 1))

    def tau(self, n: int) -> float:
        """tau^(n) for iteration n >= 1."""
        return self.taus[min(n, len(self.taus)) - 1]

    def noise_variance(self, samples: np.ndarray, n: int) -> np.ndarray:
        """delta_k^{2(n)} per client (zero without privacy): Delta_k^2/(2 phi0) zeta^n (convention I)."""
        if self.phi0 is None:
            return np.zeros(samples.shape)
        sensitivity = 2.0 * self.C / (self.rho * samples)
        power = n if self.noise_convention == "I" else n - 1
        return sensitivity**2 / (2.0 * self.phi0) * self.zeta**power


@dataclass(frozen=True, kw_only=True)
class PGFLState:
    """Iterates of all runs: clients (R, K, d), duals (R, K, d), server models (R, S, Q, d), caches."""

    w_clients: np.ndarray
    phi: np.ndarray
    w_servers: np.ndarray
    w_hat: np.ndarray
    w_tilde_servers: np.ndarray
    msg_w: np.ndarray
    msg_phi: np.ndarray
    sent: np.ndarray
    psi: np.ndarray | None = None   # V0 server duals (R, S, Q, d); None until a single-step update runs


@dataclass(frozen=True, kw_only=True)
class PGFLRun:
    """Result of :func:`run_pgfl`: final state, the observations and the release pattern."""

    state: PGFLState
    observations: np.ndarray | None
    releases: np.ndarray = field(repr=False)  # (iterations, R, K) bool: who uploaded at each iteration


def initial_state(problem: PGFLProblem, runs: int) -> PGFLState:
    R, K, S, Q, d = runs, problem.K, problem.S, problem.n_clusters, problem.d
    z = np.zeros
    return PGFLState(w_clients=z((R, K, d)), phi=z((R, K, d)), w_servers=z((R, S, Q, d)), w_hat=z((R, S, Q, d)),
                     w_tilde_servers=z((R, S, Q, d)), msg_w=z((R, K, d)), msg_phi=z((R, K, d)),
                     sent=np.zeros((R, K), dtype=bool))


def _select(problem: PGFLProblem, config: PGFLConfig, rng: np.random.Generator, runs: int) -> np.ndarray:
    """(R, K) mask of the clients uploading this iteration (draws are made even with full participation)."""
    keys = rng.random((runs, problem.K))
    if config.scheduled is None:
        return np.ones((runs, problem.K), dtype=bool)
    return _key_ranks(problem, keys) < config.scheduled


def _key_ranks(problem: PGFLProblem, keys: np.ndarray) -> np.ndarray:
    """(R, K) rank of each client's key among the clients of its server (the scheduled ones have the smallest)."""
    order = np.argsort(keys + problem.client_server[None, :] * 2.0, axis=1, kind="stable")
    starts = np.concatenate([[0], np.cumsum(np.bincount(problem.client_server, minlength=problem.S))[:-1]])
    ranks = np.empty_like(order)
    positions = np.broadcast_to(np.arange(problem.K), order.shape)
    np.put_along_axis(ranks, order, positions - starts[problem.client_server[order]], axis=1)
    return ranks


def _client_solve_ridge(problem: PGFLProblem, rho: float) -> np.ndarray:
    """(H_k + (2 lambda/|C_s| + rho) I)^{-1}, shape (K, d, d): the ridge client step's matrix."""
    eye = np.eye(problem.d)
    return np.linalg.inv(problem.hessians + (problem.ridge_weights + rho)[:, None, None] * eye)


#: Gradient-norm tolerance handed to the logistic client solve (spec 2.1: Newton to ||grad|| <= 1e-10), certified
#: (the computed norm plus its rounding bound, :func:`theory.logistic.solve_proximal_newton`).
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
            for k, (prob, w, c) in enumerate(zip(self.problems, self.variables, self.parameters)):
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
        return lambda anchor, phi, warm, active=None: np.einsum("kij,rkj->rki", inverse, data + phi + rho * anchor)
    if linear_only:
        raise ValueError("the logistic iteration is not affine: no iteration matrix or linear fixed point")
    data = _logistic_samples(problem)
    return lambda anchor, phi, warm, active=None: _logistic_client_step(problem, data, rho, anchor, phi, warm, active)


def step(problem: PGFLProblem, config: PGFLConfig, solve, state: PGFLState, n: int,
          noise: np.ndarray, selected: np.ndarray, *, tau: np.ndarray | None = None) -> PGFLState:
    """One iteration of Algorithm 1 or 2 for all runs at once; ``solve`` is from :func:`client_solver`.

    ``tau``: an (R,) array of tau^(n) per run in place of ``config.tau(n)`` (runs of configurations that differ
    in their tau schedule, :func:`run_pgfl_arms`; multi-step server update only).
    """
    rho, Q = config.rho, problem.n_clusters
    s_k, q_k = problem.client_server, problem.client_cluster
    server_of_client = state.w_servers[:, s_k, q_k, :]                       # (R, K, d)
    w_new = solve(server_of_client, state.phi, state.w_clients, selected)     # eq. (4), scheduled clients
    sel = selected[..., None]
    # Full participation (every client selected, every group defined, ...) skips the masking passes: np.where with
    # an all-true mask and products with all-one weights return the same numbers bit for bit.
    everyone = bool(selected.all())
    w_clients = w_new if everyone else np.where(sel, w_new, state.w_clients)
    released = w_clients + noise                                              # eq. (11); noise = 0 for Alg. 1
    msg_w = released if everyone else np.where(sel, released, state.msg_w)
    msg_phi = state.phi if everyone else np.where(sel, state.phi, state.msg_phi)
    sent = state.sent | selected
    weights = (sent if config.aggregation == "cache" else selected).astype(np.float64)      # (R, K)
    counts = weights @ problem.groups.T                                       # (R, S*Q)
    uniform = bool(weights.all())
    sums_w = np.matmul(problem.groups, msg_w if uniform else weights[..., None] * msg_w)   # (S*Q, K) @ (R, K, d)
    sums_phi = np.matmul(problem.groups, msg_phi if uniform else weights[..., None] * msg_phi)
    defined = counts > 0
    all_defined = bool(defined.all())
    with np.errstate(invalid="ignore", divide="ignore"):
        tilde = (sums_w - sums_phi / rho) / np.maximum(counts, 1)[..., None]
        if not all_defined:
            tilde = np.where(defined[..., None], tilde, 0.0)
    R = tilde.shape[0]
    tilde = tilde.reshape(R, problem.S, Q, -1)                                # eq. (8)/(12)
    defined = defined.reshape(R, problem.S, Q)
    if config.server_update != "multi_step":
        if tau is not None:
            raise ValueError("tau per run needs the multi-step server update (server_update = 'multi_step')")
        if not defined.all():
            raise ValueError("the single-step server update (V0) needs every group C_{s,(q)} non-empty")
        psi = state.psi if state.psi is not None else np.zeros_like(state.w_servers)
        w_servers, psi = single_step_server_update(problem, tilde, state.w_servers, psi, config.tau(n), rho,
                                                   corrected=config.server_update == "single_step_corrected")
        return _dual_update(problem, config, state, w_clients, released, w_servers, w_servers, tilde, msg_w,
                            msg_phi, sent, sel, psi)
    A = problem.closed_neighbourhoods
    numer = np.einsum("sp,rpqd->rsqd", A, tilde if all_defined else tilde * defined[..., None])
    denom = np.einsum("sp,rpq->rsq", A, defined.astype(np.float64))
    w_hat = numer / np.maximum(denom, 1)[..., None]                                                  # eq. (9)
    if not all_defined:
        w_hat = np.where(denom[..., None] > 0, w_hat, state.w_hat)
    tau = config.tau(n) if tau is None else np.asarray(tau, dtype=np.float64).reshape(R, 1, 1, 1)
    if Q > 1:                                                                  # eq. (10)
        w_servers = (1.0 - tau) * w_hat + tau / (Q - 1) * (w_hat.sum(axis=2, keepdims=True) - w_hat)
    else:
        w_servers = w_hat
    return _dual_update(problem, config, state, w_clients, released, w_servers, w_hat, tilde, msg_w, msg_phi,
                        sent, sel, state.psi)


def _dual_update(problem, config, state, w_clients, released, w_servers, w_hat, tilde, msg_w, msg_phi, sent, sel,
                 psi):
    """Eq. (5) and the next state (shared by the multi-step and the single-step server updates)."""
    rho, s_k, q_k = config.rho, problem.client_server, problem.client_cluster
    if config.algorithm == "alg1":
        reference, own = w_servers[:, s_k, q_k, :], w_clients
    elif config.dual_ref == "local_aggregate":
        reference, own = tilde[:, s_k, q_k, :], released
    else:
        reference, own = w_servers[:, s_k, q_k, :], released
    phi = state.phi + rho * (reference - own)                                  # eq. (5)
    if not sel.all():
        phi = np.where(sel, phi, state.phi)
    return PGFLState(w_clients=w_clients, phi=phi, w_servers=w_servers, w_hat=w_hat, w_tilde_servers=tilde,
                     msg_w=msg_w, msg_phi=msg_phi, sent=sent, psi=psi)


def single_step_server_update(problem: PGFLProblem, tilde: np.ndarray, w_prev: np.ndarray, psi: np.ndarray,
                              tau: float, rho: float, *, corrected: bool) -> tuple[np.ndarray, np.ndarray]:
    r"""V0: the single-step server update (seed 000 eqs. (6)-(7); seed 004 eqs. (5.6)-(5.7)), batched.

    As printed (``corrected=False``):

    .. math::
        w_{s,(q)}^{(n)} = \Big[\tilde w_{s,(q)}^{(n)} - \tfrac12\psi_{s,(q)}^{(n-1)}
        + \tfrac{\rho}{2}\sum_{p\in N_s^-}(w_{s,(q)}^{(n-1)} - w_{p,(q)}^{(n-1)})
        + \frac{\tau^{(n)}}{(Q-1)|N_s|}\sum_{r\ne q}\sum_{p\in N_s} w_{p,(r)}^{(n-1)}\Big]
        \Big/ (1 + \tau^{(n)} + \rho|N_s^-|),\qquad
        \psi_{s,(q)}^{(n)} = \psi_{s,(q)}^{(n-1)} + \rho\sum_{p\in N_s^-}(w_{p,(q)}^{(n)} - w_{s,(q)}^{(n)}),

    where :math:`\tilde w_{s,(q)}^{(n)}` is the local aggregate (8) (the first two terms of (6)). Corrected
    (``corrected=True``, spec 2.6): :math:`(w_s^{(n-1)} + w_p^{(n-1)})` in the consensus term and
    :math:`\psi^{(n)} = \psi^{(n-1)} + \rho\sum_{p}(w_s^{(n)} - w_p^{(n)})`: the decentralised-ADMM step for
    :math:`\min \sum_s \lVert w_s - \tilde w_s\rVert^2` s.t. :math:`w_s = w_p` on the edges. With Q = 1 the
    tau terms are dropped. Shapes: ``tilde``, ``w_prev``, ``psi`` are (R, S, Q, d); returns (w, psi).
    """
    if not (0.0 <= tau <= 1.0):
        raise ValueError(f"tau must be in [0, 1], got {tau!r}")
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite real in (0, inf), got {rho!r}")
    adj = problem.adjacency.astype(np.float64)
    degree = adj.sum(axis=1)[None, :, None, None]                             # |N_s^-|
    neighbours_prev = np.einsum("sp,rpqd->rsqd", adj, w_prev)                 # sum_{p in N_s^-} w_p^(n-1)
    sign = 1.0 if corrected else -1.0
    consensus = 0.5 * rho * (degree * w_prev + sign * neighbours_prev)
    Q = problem.n_clusters
    if Q > 1:
        closed = problem.closed_neighbourhoods
        pooled = np.einsum("sp,rpqd->rsqd", closed, w_prev)                   # sum_{p in N_s} w_{p,(q)}^(n-1)
        others = (pooled.sum(axis=2, keepdims=True) - pooled) / ((Q - 1) * closed.sum(axis=1)[None, :, None, None])
        mixing, t = tau * others, tau
    else:
        mixing, t = 0.0, 0.0
    w = (tilde - 0.5 * psi + consensus + mixing) / (1.0 + t + rho * degree)
    disagreement = degree * w - np.einsum("sp,rpqd->rsqd", adj, w)            # sum_{p in N_s^-} (w_s - w_p)
    psi = psi + rho * (disagreement if corrected else -disagreement)
    return w, psi


def run_pgfl(problem: PGFLProblem, config: PGFLConfig, iterations: int, rng: np.random.Generator, *,
             runs: int = 1, observe: Callable[[PGFLState], np.ndarray] | None = None) -> PGFLRun:
    """Run ``runs`` independent copies for ``iterations`` iterations.

    Per iteration the generator draws, in this order, the scheduling keys ``(runs, K)`` and the noise
    ``(runs, K, d)``, whatever the configuration, so two configurations run from equal seeds see the
    same scheduling and the same standard-normal noise (common random numbers).

    Returns the final state, ``observe(state)`` stacked over iterations (shape ``(iterations, ...)``),
    and the boolean release pattern ``(iterations, runs, K)``.
    """
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be an integer >= 1, got {iterations!r}")
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    solve = client_solver(problem, config.rho)
    state = initial_state(problem, runs)
    observations, releases = [], np.empty((iterations, runs, problem.K), dtype=bool)
    for n in range(1, iterations + 1):
        selected = _select(problem, config, rng, runs)
        std = np.sqrt(config.noise_variance(problem.samples, n))
        noise = rng.standard_normal((runs, problem.K, problem.d)) * std[None, :, None]
        state = step(problem, config, solve, state, n, noise, selected)
        releases[n - 1] = selected
        if observe is not None:
            observations.append(observe(state))
    return PGFLRun(state=state, observations=np.stack(observations) if observe is not None else None,
                   releases=releases)


#: Fields of :class:`PGFLConfig` that configurations run in lockstep by :func:`run_pgfl_arms` must share (the client
#: step, the aggregation and the dual update are then the same for all of them).
LOCKSTEP_SHARED = ("rho", "algorithm", "dual_ref", "aggregation", "server_update")


def _lockstep_setup(problem: PGFLProblem, configs, horizons, rng) -> None:
    """Validate a lockstep call (shared by :func:`iterate_pgfl_arms` and :func:`run_pgfl_arms`)."""
    if not configs:
        raise ValueError("configs must hold at least one PGFLConfig, got none")
    for h in horizons:
        if isinstance(h, bool) or not isinstance(h, int) or h < 1:
            raise ValueError(f"iterations must be integers >= 1, got {h!r}")
    first = configs[0]
    for name in LOCKSTEP_SHARED:
        values = {getattr(c, name) for c in configs}
        if len(values) > 1:
            raise ValueError(f"configs must share {name} to run in lockstep, got {sorted(map(str, values))}")
    if first.server_update != "multi_step":
        raise ValueError(f"run_pgfl_arms needs server_update = 'multi_step', got {first.server_update!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")


def iterate_pgfl_arms(problem: PGFLProblem, configs, iterations: int, rng: np.random.Generator, *,
                      runs: int = 1) -> Iterator[tuple[int, PGFLState]]:
    """Several configurations of one problem in lockstep, ``runs`` runs each, with common random numbers: yields
    ``(n, state)`` after every iteration n = 1..iterations.

    The state holds ``len(configs) * runs`` runs, configuration-major (configuration ``i``'s runs are
    ``i * runs .. (i + 1) * runs - 1``). Configuration ``i``'s runs are, bit for bit, those of ``run_pgfl(problem,
    configs[i], iterations, rng_i, runs=runs)`` when every ``rng_i`` starts in the state of ``rng``: the scheduling
    keys ``(runs, K)`` and the standard-normal noise ``(runs, K, d)`` are drawn once per iteration and shared, and
    the client step's matrix is factorised once. When no configuration has privacy noise or scheduling the draws
    are skipped (they would not change any iterate; ``rng`` is then left where it was). Same conditions on the
    configurations as :func:`run_pgfl_arms`.
    """
    configs = list(configs)
    _lockstep_setup(problem, configs, [iterations], rng)
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    first, C, K, d = configs[0], len(configs), problem.K, problem.d
    solve = client_solver(problem, first.rho)
    state = initial_state(problem, C * runs)
    scheduled = np.repeat([K if c.scheduled is None else c.scheduled for c in configs], runs)[:, None]
    full = np.repeat([c.scheduled is None for c in configs], runs)[:, None]
    draws = not full.all() or any(c.phi0 is not None for c in configs)
    selected = np.ones((C * runs, K), dtype=bool)
    noise = np.zeros((C * runs, K, d))
    for n in range(1, iterations + 1):
        if draws:
            keys = rng.random((runs, K))                            # _select's draw, shared by every configuration
            if not full.all():
                selected = full | (np.tile(_key_ranks(problem, keys), (C, 1)) < scheduled)
            std = np.stack([np.sqrt(c.noise_variance(problem.samples, n)) for c in configs])     # (C, K)
            z = rng.standard_normal((runs, K, d))
            noise = (z[None] * std[:, None, :, None]).reshape(C * runs, K, d)
        tau = np.repeat([c.tau(n) for c in configs], runs)
        state = step(problem, first, solve, state, n, noise, selected, tau=tau)
        yield n, state


def run_pgfl_arms(problem: PGFLProblem, configs, iterations, rng: np.random.Generator, *,
                  observe: Callable[[PGFLState], np.ndarray]) -> list[np.ndarray]:
    """Several configurations of one problem run in lockstep, one run each, with common random numbers.

    Configuration ``i`` gives what ``run_pgfl(problem, configs[i], iterations[i], rng_i, observe=observe)
    .observations`` gives, bit for bit, when every ``rng_i`` starts in the state of ``rng``: the scheduling keys
    and the standard-normal noise are drawn once per iteration and shared, and the client step's matrix is
    factorised once (:func:`iterate_pgfl_arms`). The configurations may differ in their tau schedule, privacy noise
    (phi0, zeta, C, noise convention) and scheduling; they must share :data:`LOCKSTEP_SHARED` and use the
    multi-step server update. ``iterations`` is one horizon or one per configuration (all run to the longest; each
    keeps its own prefix). Returns the observations of each configuration, shape ``(iterations[i], ...)``.
    """
    configs = list(configs)
    horizons = [iterations] * len(configs) if isinstance(iterations, int) else list(iterations)
    if configs and len(horizons) != len(configs):
        raise ValueError(f"iterations must be one integer or one per configuration ({len(configs)}), "
                         f"got {len(horizons)}")
    _lockstep_setup(problem, configs, horizons, rng)
    observations = [observe(state) for _, state in iterate_pgfl_arms(problem, configs, max(horizons), rng)]
    stacked = np.stack(observations)                                # (max horizon, R, ...)
    return [stacked[:h, i] for i, h in enumerate(horizons)]


def nmsd_observer(problem: PGFLProblem) -> Callable[[PGFLState], np.ndarray]:
    """NMSD of the client models against the data-generating models (spec 5.1), per run: (R,)."""
    if problem.true_models is None:
        raise ValueError("problem.true_models is None: the NMSD needs the data-generating models")
    truth = problem.true_models[problem.client_cluster]                       # (K, d)
    norms = np.sum(truth**2, axis=1)

    def observe(state: PGFLState) -> np.ndarray:
        return np.mean(np.sum((state.w_clients - truth) ** 2, axis=2) / norms, axis=1)

    return observe


def accuracy_observer(problem: PGFLProblem, X_test, y_test) -> Callable[[PGFLState], np.ndarray]:
    """Mean test accuracy of the client models on their cluster's test set, per run: (R,).

    ``X_test[q]``, ``y_test[q]`` are cluster q's test features and {0, 1} labels (spec 5.2).
    """
    if problem.loss != "logistic":
        raise ValueError("accuracy_observer needs a logistic problem")
    Q = problem.n_clusters
    if len(X_test) != Q or len(y_test) != Q:
        raise ValueError(f"X_test and y_test must hold one array per cluster (Q = {Q})")

    def observe(state: PGFLState) -> np.ndarray:
        acc = np.zeros(state.w_clients.shape[0])
        for q in range(Q):
            members = problem.client_cluster == q
            scores = np.einsum("id,rkd->rki", X_test[q], state.w_clients[:, members, :])
            acc += np.sum(np.mean((scores > 0) == (np.asarray(y_test[q]) > 0.5), axis=-1), axis=-1)
        return acc / problem.K

    return observe


def server_models_observer(state: PGFLState) -> np.ndarray:
    """The server models w_{s,(q)}, (R, S, Q, d)."""
    return state.w_servers.copy()


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


def synthetic_regression(rng: np.random.Generator, *, servers: int = 10, clients_per_server: int = 15, d: int = 60,
                         clusters: int = 3, samples: tuple[int, int] = (2, 9), gamma: float = 0.15,
                         noise_variance: float = 0.1, average_degree: float = 3.0, lam: float = 1.0) -> PGFLProblem:
    r"""The regression setting of spec 5.1 (seed 000 lines 410-421): defaults are the paper's sizes.

    Connected random server graph with ``average_degree * servers / 2`` edges (rejection sampling),
    clients assigned to clusters i.i.d. uniformly, :math:`w^\circ_{(q)} = (1+\gamma_q) w_0` with
    :math:`\gamma_q \sim U(-\gamma, \gamma)`, :math:`x \sim N(0, I_d)`, :math:`D_k \sim U\{2..9\}` and
    observation noise of variance ``noise_variance``.
    """
    edges = int(round(average_degree * servers / 2))
    edges = min(edges, servers * (servers - 1) // 2)
    for _ in range(1000):
        graph = nx.gnm_random_graph(servers, edges, seed=int(rng.integers(2**31)))
        if servers == 1 or nx.is_connected(graph):
            break
    else:  # pragma: no cover
        raise ValueError(f"could not draw a connected graph with {servers} servers and {edges} edges")
    adjacency = nx.to_numpy_array(graph, nodelist=range(servers)).astype(bool)
    K = servers * clients_per_server
    client_server = np.repeat(np.arange(servers), clients_per_server)
    client_cluster = rng.integers(clusters, size=K)
    w0 = rng.standard_normal(d)
    truth = (1.0 + rng.uniform(-gamma, gamma, size=clusters))[:, None] * w0[None, :]
    X, y = [], []
    for k in range(K):
        D = int(rng.integers(samples[0], samples[1] + 1))
        xk = rng.standard_normal((D, d))
        X.append(xk)
        y.append(xk @ truth[client_cluster[k]] + math.sqrt(noise_variance) * rng.standard_normal(D))
    return PGFLProblem(adjacency=adjacency, client_server=client_server, client_cluster=client_cluster,
                       n_clusters=clusters, X=tuple(X), y=tuple(y), lam=lam, true_models=truth)
