r"""Algorithm 1 of FedPDM-DP, vectorised over sampled clients and Monte-Carlo runs.

Client sampling (``S_0 = [N]``, then uniform ``K``-subsets without replacement), ``Q`` local primal-dual steps
(10a) with the stopping rule (11), the dual step (10c) with the **old** :math:`x_0^t`, the upload (10d) plus
Gaussian noise (18)-(19), and the server's :math:`\ell_1` proximal step (13) at threshold :math:`\gamma/\rho`
(the seed's :math:`\mathrm{prox}_{\rho h}`, docs/papers/fedpdm.md#erratum-e12, docs/papers/fedpdm.md#erratum-e13),
averaged over :math:`|S_t|` uploads
(erratum E14 (docs/papers/fedpdm.md#erratum-e14)/erratum E15 (docs/papers/fedpdm.md#erratum-e15)). State arrays: client
models and duals ``(R, N, d)``, the global model ``(R, d)``; a round works on the sampled clients only, ``(R, |S_t|,
d)``; the loops are over rounds and local steps only.

References
----------
.. [1] seed 001_322f61f9958f64f9.txt, Algorithm 1 (lines 158-180), (10)-(13) (lines 114-136), (18)-(19);
   docs/papers/fedpdm.md#algorithms.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from reference_impl.fedpdm._validate import check_int
from reference_impl.fedpdm.accounting import history_factor_table, participation_schedule, run_noise_multiplier
from reference_impl.fedpdm.config import FedPDMConfig
from reference_impl.fedpdm.objective import as_matrix, batch_gradient, soft_threshold
from reference_impl.fedpdm.problem import FedPDMProblem, certified_G
from theory.privacy.sensitivity import sensitivity_fedpdm

__all__ = ["FedPDMRun", "FedPDMState", "RoundRecord", "fedpdm_round", "initial_state", "run_fedpdm"]


@dataclass(frozen=True, kw_only=True)
class FedPDMState:
    """Algorithm state for ``R`` runs: client models ``x`` and duals ``lam`` ``(R, N, d)``, global ``x0`` ``(R, d)``."""

    x: np.ndarray
    lam: np.ndarray
    x0: np.ndarray


@dataclass(frozen=True, kw_only=True)
class RoundRecord:
    """What one round did, for the sampled clients ``clients`` ``(R, k)`` (all arrays indexed like it)."""

    t: int
    eta: float
    clients: np.ndarray
    Q: np.ndarray  # (R, k) local steps taken
    fired: np.ndarray  # (R, k) rule (11) fired
    last_g: np.ndarray  # (R, k, d) the g of the last step (the one tested by (11))
    y: np.ndarray  # (R, k, d) pre-noise uploads
    y_tilde: np.ndarray  # (R, k, d) noisy uploads
    sigma: np.ndarray  # (R, k) per-coordinate noise std
    s: np.ndarray  # (R, k) sensitivity (19) used
    batches: np.ndarray  # (R, k, Q_max, b) sample indices of each step
    phi2: np.ndarray  # (R, k) largest A2 variance over the round's visited iterates (nan unless track_variance)
    x0_prev: np.ndarray
    lam_prev: np.ndarray  # (R, k, d)


def initial_state(problem: FedPDMProblem, config: FedPDMConfig, rng: np.random.Generator, runs: int) -> FedPDMState:
    """Line 1 of the pseudo-code: x_0^0 (zeros or normal), x_i^0 = x_0^0, lam_i^0 = 0."""
    x0 = (np.zeros((runs, problem.d)) if config.init == "zeros"
          else config.init_scale * rng.standard_normal((runs, problem.d)))
    return FedPDMState(x=np.repeat(x0[:, None, :], problem.N, axis=1), lam=np.zeros((runs, problem.N, problem.d)),
                       x0=x0)


def _variance_a2(problem: FedPDMProblem, z: np.ndarray, data: tuple, b: int) -> np.ndarray:
    """Exact mini-batch variance of uniform b-of-n sampling without replacement at
    ``z`` (docs/papers/fedpdm.md#assumptions A2), ``(R, k)``. ``data``: the sampled clients' features ``(R, k, n, f)``,
    labels and squared feature norms ``(R, k, n)`` (a round gathers them once)."""
    n = problem.n
    if b >= n:
        return np.zeros(z.shape[:2])
    a, lab, a2 = data
    X = as_matrix(problem, z)
    scores = a @ np.swapaxes(X, -1, -2)
    margin = np.take_along_axis(scores, lab[..., None], axis=-1)[..., 0]
    coef = -special.expit(-margin)  # (R, k, n); per-sample gradient = coef e_lab a^T (+ beta term, common)
    # sum_j ||g_j - mean||^2 = sum_j coef_j^2 ||a_j||^2 - n ||mean||^2
    sq = (coef**2 * a2).sum(-1)
    weights = np.zeros(scores.shape)
    np.put_along_axis(weights, lab[..., None], coef[..., None], axis=-1)
    mean = (np.swapaxes(weights, -1, -2) @ a) / n
    spread = np.maximum(sq - n * (mean * mean).sum(axis=(-2, -1)), 0.0) / n
    return (n - b) / (b * (n - 1)) * spread


def fedpdm_round(problem: FedPDMProblem, config: FedPDMConfig, state: FedPDMState, t: int, sampled: np.ndarray,
                 rng: np.random.Generator, *, z: float, G: float, track_variance: bool = False,
                 kappa: np.ndarray | None = None, in_place: bool = False) -> tuple[FedPDMState, RoundRecord]:
    r"""One round of Algorithm 1 for every run: local steps (10a)-(11), dual (10c), upload (10d) + noise, prox (13).

    ``sampled``: boolean ``(R, N)`` with the same number of clients per run. ``z``: noise multiplier
    (``noise = "dp"``). ``kappa``: ``(R, N)`` history factors of this round (``sensitivity_model = "history"``).
    Returns the new state (non-sampled clients unchanged) and the :class:`RoundRecord`. ``in_place``: the new
    state writes the sampled clients' rows into ``state.x`` and ``state.lam`` instead of copies of them.
    """
    R, N = sampled.shape
    k = int(sampled[0].sum())
    if not np.all(sampled.sum(axis=1) == k):
        raise ValueError("sampled must select the same number of clients in every run")
    clients = np.nonzero(sampled)[1].reshape(R, k)
    rows = np.arange(R)[:, None]
    eta, rho, b, Qm = config.eta(t), config.rho, config.batch_size, config.Q_max
    x_i, lam_i, x0 = state.x[rows, clients], state.lam[rows, clients], state.x0
    z_loc = x_i.copy() if config.local_start == "warm" else np.repeat(x0[:, None, :], k, axis=1)
    n = problem.n
    base = np.broadcast_to(np.arange(n), (R, k, n))
    full_batch = b == n  # every step uses all of D_i: no draw, one gather (the mean does not depend on the order)
    if full_batch:  # every step's batch is D_i in order: a read-only view, not an (R, k, Q_max, n) array per round
        batches = np.broadcast_to(np.arange(n), (R, k, Qm, b))
    else:
        batches = np.full((R, k, Qm, b), -1, dtype=np.int64)  # -1: step not taken
        if config.batch_rule == "disjoint":
            batches[...] = rng.permuted(base, axis=-1)[..., : Qm * b].reshape(R, k, Qm, b)
    cl = clients[..., None]  # gather only the batches, never a copy of the clients' data
    running = np.ones((R, k), dtype=bool)
    Q = np.zeros((R, k), dtype=np.int64)
    last_g = np.zeros_like(z_loc)
    phi2 = np.full((R, k), np.nan)
    if full_batch or track_variance:  # the sampled clients' data, gathered once per round
        a_all, lab_all = problem.features[clients], problem.labels[clients]
    if track_variance:
        data = (a_all, lab_all, (a_all * a_all).sum(-1))
        phi2 = _variance_a2(problem, z_loc, data, b)
    for r in range(Qm):
        if full_batch:
            a, lab = a_all, lab_all
        else:
            if config.batch_rule == "fresh":
                batches[:, :, r, :] = rng.permuted(base, axis=-1)[..., :b]
            idx = batches[:, :, r, :]
            a, lab = problem.features[cl, idx], problem.labels[cl, idx]  # (R, k, b, f), (R, k, b)
        g = batch_gradient(problem, z_loc, a, lab)  # line 7, in place: g - lam + rho (z - x0)
        g -= lam_i
        step = np.subtract(z_loc, x0[:, None, :])
        step *= rho
        g += step
        np.multiply(g, eta, out=step)
        if running.all():
            z_loc -= step  # (10a)
            last_g = g
        else:
            z_loc = np.where(running[..., None], z_loc - step, z_loc)
            last_g = np.where(running[..., None], g, last_g)
        Q = np.where(running, r + 1, Q)
        if config.nu > 0:
            fired_now = running & (np.einsum("rkd,rkd->rk", g, g) <= config.nu)  # (11), the same g
            running = running & ~fired_now
        if track_variance:
            phi2 = np.fmax(phi2, np.where(Q == r + 1, _variance_a2(problem, z_loc, data, b), np.nan))
        if not running.any():
            break
    fired = ~running
    x_new = z_loc  # (10b)
    lam_new = lam_i + rho * (x0[:, None, :] - x_new)  # (10c), old x_0^t
    y = x_new - lam_new / rho  # (10d)
    Qn = Q if config.noise_Q == "adaptive" else np.full((R, k), Qm)
    s = np.zeros((R, k))
    for q_value in np.unique(Qn):  # at most Q_max distinct step counts, not clients
        s[Qn == q_value] = sensitivity_fedpdm(eta, rho, int(q_value), G)
    if config.noise == "dp":
        sigma = z * s if kappa is None else z * s * kappa[rows, clients]
    elif config.noise == "fixed":
        sigma = np.full((R, k), config.sigma)
    else:
        sigma = np.zeros((R, k))
    if config.noise == "none":
        y_tilde = y.copy()
    else:
        y_tilde = y + sigma[..., None] * rng.standard_normal(y.shape)
    u = y_tilde.mean(axis=1)  # (13), average over S_t (erratum E14, docs/papers/fedpdm.md#erratum-e14,
    # erratum E15 (docs/papers/fedpdm.md#erratum-e15))
    x0_new = soft_threshold(u, config.prox_threshold_factor * problem.gamma / rho)
    x, lam = (state.x, state.lam) if in_place else (state.x.copy(), state.lam.copy())
    x[rows, clients] = x_new
    lam[rows, clients] = lam_new
    record = RoundRecord(t=t, eta=eta, clients=clients, Q=Q, fired=fired, last_g=last_g, y=y, y_tilde=y_tilde,
                         sigma=sigma, s=s, batches=batches, phi2=phi2, x0_prev=x0, lam_prev=lam_i)
    return FedPDMState(x=x, lam=lam, x0=x0_new), record



@dataclass(frozen=True, kw_only=True)
class FedPDMRun:
    """A finished run: final state, per-round observations (``observations[name]`` ``(T + 1, R)``: before round 0
    and after every round), participation mask ``(R, T, N)``, local steps ``Q`` ``(R, T, N)`` (0: not sampled),
    noise std ``sigma`` ``(R, T, N)``, noise multiplier ``z``, ``G`` and ``phi2`` (max A2 variance, ``(R,)``)."""

    state: FedPDMState
    observations: dict
    participation: np.ndarray
    Q: np.ndarray
    sigma: np.ndarray
    z: float
    G: float
    phi2: np.ndarray
    etas: np.ndarray
    records: list = field(default_factory=list, repr=False)

    @property
    def participation_counts(self) -> np.ndarray:
        """Realised participation counts :math:`n_i` ``(R, N)`` (docs/papers/fedpdm.md#review-notes)."""
        return self.participation.sum(axis=1)



def run_fedpdm(problem: FedPDMProblem, config: FedPDMConfig, rng: np.random.Generator, *, runs: int = 1,
               observers: dict[str, Callable] | None = None, state: FedPDMState | None = None,
               keep_records: bool = False, track_variance: bool = False, round_fn: Callable | None = None,
               in_place: bool = False) -> FedPDMRun:
    r"""Run Algorithm 1 for ``config.rounds`` rounds, ``runs`` independent runs side by side.

    ``observers``: ``name -> fn(state) -> (R,)`` evaluated before round 0 and after every round (e.g.
    ``lambda s: global_objective(problem, s.x0)``). The client-sampling schedule is drawn first (it is
    data independent), so ``target_total_eps`` can calibrate on the realised :math:`\max_i n_i`.
    ``round_fn`` replaces :func:`fedpdm_round` (same signature; used by the mutation tests only).
    ``in_place``: the rounds update one copy of the state in place (no ``(R, N, d)`` copies per round; the same
    numbers), so an observer sees ``x`` and ``lam`` change after it returns: it must copy what it keeps.
    """
    round_fn = fedpdm_round if round_fn is None else round_fn
    config.validate_for(problem)
    check_int("runs", runs, 1)
    G = certified_G(problem) if config.G is None else config.G
    participation = participation_schedule(problem.N, config.K, config.rounds, rng, runs=runs,
                                           first_round_all=config.first_round_all)
    z = run_noise_multiplier(problem, config, participation)
    kappas = (history_factor_table(participation, [config.eta(t) for t in range(config.rounds)], config.Q_max,
                                   config.rho, config.local_start)
              if config.noise == "dp" and config.sensitivity_model == "history" else None)
    if state is None:
        state = initial_state(problem, config, rng, runs)
    elif in_place:  # the caller's arrays stay untouched
        state = FedPDMState(x=state.x.copy(), lam=state.lam.copy(), x0=state.x0)
    observers = observers or {}
    obs = {name: [np.asarray(fn(state), dtype=np.float64)] for name, fn in observers.items()}
    T = config.rounds
    Q = np.zeros((runs, T, problem.N), dtype=np.int64)
    sigma = np.zeros((runs, T, problem.N))
    phi2 = np.full(runs, np.nan)
    records = []
    rows = np.arange(runs)[:, None]
    for t in range(T):
        extra = {} if kappas is None else {"kappa": kappas[:, t]}
        if in_place:
            extra["in_place"] = True
        state, rec = round_fn(problem, config, state, t, participation[:, t], rng, z=z, G=G,
                              track_variance=track_variance, **extra)
        Q[rows, t, rec.clients] = rec.Q
        sigma[rows, t, rec.clients] = rec.sigma
        if track_variance:
            phi2 = np.fmax(phi2, rec.phi2.max(axis=1))
        if keep_records:
            records.append(rec)
        for name, fn in observers.items():
            obs[name].append(np.asarray(fn(state), dtype=np.float64))
    return FedPDMRun(state=state, observations={k: np.array(v) for k, v in obs.items()}, participation=participation,
                     Q=Q, sigma=sigma, z=z, G=G, phi2=phi2, etas=np.array([config.eta(t) for t in range(T)]),
                     records=records)

