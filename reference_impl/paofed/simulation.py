"""The algorithm (SIM-F / SIM-E of spec 4.2): steps P1-P9 of spec 2.4 with every variant and baseline, vectorised over
runs x clients x entries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from reference_impl.paofed.selection import Selector
from reference_impl.paofed.setup import (
    BITS_PER_PARAMETER,
    AlgorithmConfig,
    AsyncEnvironment,
    CommunicationCounts,
    SimulationRun,
    StepRecord,
    _is_int,
    faithful_setup,
    staleness_weights,
)
from theory._validate import readonly
from theory.msd.instance import PAOFedInstance

__all__ = ["draw_iteration", "initial_state", "run_faithful", "run_paofed", "step"]

# --------------------------------------------------------------------------------------------------
# The algorithm (SIM-F / SIM-E)
# --------------------------------------------------------------------------------------------------


@dataclass
class _State:
    """Mutable iterates of all runs (internal)."""

    w: np.ndarray             # (R, D)
    wk: np.ndarray            # (R, K, D)
    buf_vals: np.ndarray      # (R, K, G, D): message payloads (full local model or sign vector)
    buf_mask: np.ndarray      # (R, K, G, D) bool: S_{k,t} of the message in the slot
    arrival: np.ndarray       # (R, K, G) int: arrival iteration, -1 = empty slot


@dataclass
class _Draws:
    """Everything random at one iteration (internal; the benchmark's loop consumes the same draws)."""

    has_data: np.ndarray      # (R, K) bool
    participants: np.ndarray  # (R, K) bool: exchanges with the server (available and contacted)
    delays: np.ndarray        # (R, K) int
    kept: np.ndarray          # (R, K) bool: delay <= l_max after the tail rule
    z: np.ndarray             # (R, K, D)
    y: np.ndarray             # (R, K)
    M: np.ndarray             # broadcastable to (R, K, D), bool
    S: np.ndarray             # broadcastable to (R, K, D), bool
    sign_noise: np.ndarray | None


def initial_state(env: AsyncEnvironment, runs: int) -> _State:
    R, K, D, G = runs, env.K, env.D, env.slots
    return _State(w=np.zeros((R, D)), wk=np.zeros((R, K, D)), buf_vals=np.zeros((R, K, G, D)),
                  buf_mask=np.zeros((R, K, G, D), dtype=bool), arrival=np.full((R, K, G), -1, dtype=np.int64))


def _draw_delays(env: AsyncEnvironment, rng: np.random.Generator, shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Geometric delays P(G >= i) = delta^i, scaled by delay_step; (delays, kept)."""
    if env.delta == 0.0:
        g = np.zeros(shape, dtype=np.int64)
    else:
        g = rng.geometric(1.0 - env.delta, size=shape).astype(np.int64) - 1
    if env.delay_tail == "cap":
        g = np.minimum(g, env.l_max // env.delay_step)
    delays = g * env.delay_step
    return delays, delays <= env.l_max


def draw_iteration(env, config, selector, data, data_state, streams, n: int, runs: int) -> _Draws:
    behaviour, data_rng, algorithm = streams
    shape = (runs, env.K)
    has_data = behaviour.random(shape) < env.data_rate
    available = has_data & (behaviour.random(shape) < env.p)
    delays, kept = _draw_delays(env, behaviour, shape)
    participants = available
    if config.server_fraction < 1.0:
        participants = available & (algorithm.random(shape) < config.server_fraction)
    M, S = selector.masks(n, algorithm)
    noise = None
    if config.sends_signs and config.sign_noise > 0:
        noise = algorithm.uniform(-config.sign_noise, config.sign_noise, size=shape + (env.D,))
    z, y = data.draw(data_state, data_rng, n, has_data)
    return _Draws(has_data=has_data, participants=participants, delays=delays, kept=kept, z=z, y=y, M=M, S=S,
                  sign_noise=noise)


def _aggregate_partial(w: np.ndarray, r: np.ndarray, ages: np.ndarray, vals: np.ndarray, masks: np.ndarray,
                       alpha: np.ndarray, overlap_rule: str) -> np.ndarray:
    r"""P7-P8: :math:`w + \sum_l \alpha_l |\mathcal K_{n,l}|^{-1} \sum_{k} S (v - w)` over the listed messages.

    ``r`` (run), ``ages`` (l), ``vals`` (payloads, (A, D)) and ``masks`` (S, (A, D)) list the A messages.
    With ``most_recent``, an entry touched by several delay groups keeps only its youngest group's
    messages; the group sizes :math:`|\mathcal K_{n,l}|` are unchanged (spec 2.4).
    """
    R, D = w.shape
    G = alpha.size
    counts = np.zeros((R, G))
    np.add.at(counts, (r, ages), 1.0)
    beta = alpha[ages] / counts[r, ages]
    if overlap_rule == "most_recent":
        touched = np.zeros((R, G, D), dtype=bool)
        np.logical_or.at(touched, (r, ages), masks)
        youngest = np.argmax(touched, axis=1)                                   # (R, D)
        masks = masks & (ages[:, None] == youngest[r])
    contrib = beta[:, None] * np.where(masks, vals - w[r], 0.0)
    out = w.copy()
    np.add.at(out, r, contrib)
    return out


def step(env: AsyncEnvironment, config: AlgorithmConfig, alpha: np.ndarray, state: _State, draws: _Draws,
          n: int, counts: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One iteration n of P1-P9 on every run and client, in place. Returns the delivered (run, client, age)."""
    w, wk = state.w, state.wk
    part = draws.participants
    R, K, D = wk.shape
    M_all = np.broadcast_to(draws.M, (R, K, D))
    S_all = np.broadcast_to(draws.S, (R, K, D))
    # Only clients with a new sample compute (P1); work on their rows.
    computing = part if (config.sends_signs or not config.autonomous) else draws.has_data
    rc, kc = np.nonzero(computing)
    z = draws.z[rc, kc]
    talks = part[rc, kc]
    local = wk[rc, kc]
    # P3 / P4: start from the received portion merged into the local model, or from the local model.
    start = np.where(talks[:, None] & M_all[rc, kc], w[rc], local)
    e = draws.y[rc, kc] - np.einsum("ad,ad->a", start, z)
    rp, kp = np.nonzero(part)
    if config.sends_signs:
        g = z * e[:, None]
        if draws.sign_noise is not None:
            g = g + draws.sign_noise[rc, kc]
        payload = np.sign(g)                       # computing == participants, same order as (rp, kp)
    else:
        wk[rc, kc] = start + config.mu * z * e[:, None]
        payload = wk[rp, kp]
    # Send (S_{k,n} w_{k,n+1}, n) to slot n mod (l_max + 1), whose previous message expired at n - 1.
    G = env.slots
    slot = n % G
    state.buf_vals[rp, kp, slot] = payload
    state.buf_mask[rp, kp, slot] = S_all[rp, kp]
    state.arrival[:, :, slot] = np.where(part & draws.kept, n + draws.delays, -1)
    counts["messages"] += part.sum(axis=1)
    up_params = np.sum(part * np.broadcast_to(draws.S.sum(axis=-1), (R, K)), axis=1)
    down_params = np.sum(part * np.broadcast_to(draws.M.sum(axis=-1), (R, K)), axis=1)
    counts["uplink_params"] += up_params
    counts["downlink_params"] += down_params
    counts["uplink_bits"] += up_params * (1 if config.sends_signs else BITS_PER_PARAMETER)
    counts["downlink_bits"] += down_params * BITS_PER_PARAMETER
    counts["discarded"] += np.sum(part & ~draws.kept, axis=1)
    # P5: collect the messages arriving at n (each exactly once: the slot is emptied on delivery).
    r, k, s = np.nonzero(state.arrival == n)
    ages = (n - s) % G
    if r.size:
        state.arrival[r, k, s] = -1
        counts["delivered"] += np.bincount(r, minlength=w.shape[0])
        vals = state.buf_vals[r, k, s]
        if config.aggregation == "partial":                                       # P6-P8
            state.w = _aggregate_partial(w, r, ages, vals, state.buf_mask[r, k, s], alpha, config.overlap_rule)
        else:
            total = np.zeros_like(w)
            np.add.at(total, r, vals)
            got = np.bincount(r, minlength=w.shape[0])
            has = got > 0
            new = w.copy()
            if config.aggregation == "average":
                new[has] = total[has] / got[has, None]
            elif config.aggregation == "sign_majority":
                new[has] += config.sign_step * np.sign(total[has])
            else:
                new[has] += config.sign_step * total[has] / got[has, None]
            state.w = new
    return r, k, ages


def run_paofed(env: AsyncEnvironment, config: AlgorithmConfig, data, iterations: int, rng: np.random.Generator, *,
               runs: int = 1, observe: Callable[[StepRecord], None] | None = None) -> SimulationRun:
    r"""Run an algorithm (PAO-Fed variant or baseline) for ``iterations`` iterations on ``runs`` runs.

    Parameters
    ----------
    env : AsyncEnvironment
    config : AlgorithmConfig
    data : LinearData or a data source of :mod:`reference_impl.paofed_data`
        Must have ``K``, ``D``, ``metric_name``, ``start(rng, runs)``, ``draw(state, rng, n, has_data)`` and
        ``metric(state, w)``.
    iterations : int
        Number of iterations N >= 1; the curve has N + 1 points (w_0 .. w_N).
    rng : numpy.random.Generator
        Split into behaviour / data / algorithm streams (common random numbers across algorithms).
    runs : int
        Monte-Carlo runs R (leading axis of every array).
    observe : callable, optional
        Called with a :class:`StepRecord` after every iteration (tests; slows the run down).

    Notes
    -----
    One iteration n (spec 2.4): every client with a new sample (probability ``data_rate``) draws its
    availability; available clients (contacted with probability ``server_fraction``) merge
    :math:`M_{k,n} w_n` into their local model, take an LMS step and send :math:`(S_{k,n} w_{k,n+1}, n)`,
    which arrives at :math:`n + L`; clients with a sample that do not exchange take an autonomous step if
    ``autonomous``; the server aggregates the messages arriving at n by age (P5-P8).
    """
    if not isinstance(env, AsyncEnvironment):
        raise TypeError(f"env must be an AsyncEnvironment, got {type(env).__name__}")
    if not isinstance(config, AlgorithmConfig):
        raise TypeError(f"config must be an AlgorithmConfig, got {type(config).__name__}")
    if not _is_int(iterations, 1):
        raise ValueError(f"iterations must be an integer >= 1, got {iterations!r}")
    if not _is_int(runs, 1):
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if (data.K, data.D) != (env.K, env.D):
        raise ValueError(f"data has (K, D) = ({data.K}, {data.D}) but env has ({env.K}, {env.D})")
    alpha = staleness_weights(config, env.l_max)
    streams = tuple(rng.spawn(3))
    selector = Selector(config, env, streams[2], runs)
    data_state = data.start(streams[1], runs)
    state = initial_state(env, runs)
    zeros = lambda: np.zeros(runs, dtype=np.int64)  # noqa: E731
    counts = {k: zeros() for k in ("messages", "uplink_params", "downlink_params", "uplink_bits", "downlink_bits",
                                   "delivered", "discarded")}
    curve = np.empty((iterations + 1, runs))
    curve[0] = data.metric(data_state, state.w)
    for n in range(iterations):
        draws = draw_iteration(env, config, selector, data, data_state, streams, n, runs)
        w_before = state.w.copy() if observe is not None else None
        delivered = step(env, config, alpha, state, draws, n, counts)
        curve[n + 1] = data.metric(data_state, state.w)
        if observe is not None:
            arrival = np.where(draws.participants & draws.kept, n + draws.delays, -1)
            observe(StepRecord(n=n, has_data=draws.has_data.copy(), participants=draws.participants.copy(),
                               z=draws.z.copy(), y=draws.y.copy(),
                               M=np.broadcast_to(draws.M, state.wk.shape).copy(),
                               S=np.broadcast_to(draws.S, state.wk.shape).copy(), delays=draws.delays.copy(),
                               arrival_time=arrival, delivered=delivered, w_before=w_before,
                               w_after=state.w.copy(), w_clients_after=state.wk.copy()))
    comm = CommunicationCounts(**{k: readonly(v, np.int64) for k, v in counts.items()})
    return SimulationRun(curve=curve, metric=data.metric_name, w=state.w, w_clients=state.wk, communication=comm,
                         algorithm=config.name)


def run_faithful(instance: PAOFedInstance, iterations: int, rng: np.random.Generator, *, runs: int = 1,
                 observe=None) -> SimulationRun:
    """SIM-F (spec 4.2) of an analysis instance: :func:`run_paofed` with :func:`faithful_setup`."""
    env, config, data = faithful_setup(instance)
    return run_paofed(env, config, data, iterations, rng, runs=runs, observe=observe)
