"""One PGFL iteration (:func:`step`) and a whole run (:func:`run_pgfl`): Algorithms 1-2 of the PGFL paper, every client
of every server as rows of arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from reference_impl.pgfl.config import PGFLConfig, PGFLRun, PGFLState, initial_state
from reference_impl.pgfl.solvers import client_solver
from theory.pgfl.problem import PGFLProblem

__all__ = ["run_pgfl", "single_step_server_update", "step"]


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
            raise ValueError("the single-step server update (V0, docs/papers/pgfl.md#single-step) needs every group "
                             "C_{s,(q)} non-empty")
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
    r"""V0 (docs/papers/pgfl.md#single-step): the single-step server update (seed 000 eqs. (6)-(7); seed 004 eqs.
    (5.6)-(5.7)), batched.

    As printed (``corrected=False``):

    .. math::
        w_{s,(q)}^{(n)} = \Big[\tilde w_{s,(q)}^{(n)} - \tfrac12\psi_{s,(q)}^{(n-1)}
        + \tfrac{\rho}{2}\sum_{p\in N_s^-}(w_{s,(q)}^{(n-1)} - w_{p,(q)}^{(n-1)})
        + \frac{\tau^{(n)}}{(Q-1)|N_s|}\sum_{r\ne q}\sum_{p\in N_s} w_{p,(r)}^{(n-1)}\Big]
        \Big/ (1 + \tau^{(n)} + \rho|N_s^-|),\qquad
        \psi_{s,(q)}^{(n)} = \psi_{s,(q)}^{(n-1)} + \rho\sum_{p\in N_s^-}(w_{p,(q)}^{(n)} - w_{s,(q)}^{(n)}),

    where :math:`\tilde w_{s,(q)}^{(n)}` is the local aggregate (8) (the first two terms of (6)). Corrected
    (``corrected=True``, docs/papers/pgfl.md#variants): :math:`(w_s^{(n-1)} + w_p^{(n-1)})` in the consensus term and
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
