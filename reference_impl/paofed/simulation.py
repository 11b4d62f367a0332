"""The algorithm (SIM-F (docs/papers/paofed.md#choice-simulators) / SIM-E (docs/papers/paofed.md#choice-simulators)
of docs/papers/paofed.md#choice-simulators): steps P1-P9 of docs/papers/paofed.md#algorithm with every variant and
baseline, vectorised over runs x clients x entries."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
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

__all__ = ["draw_iteration", "initial_state", "run_faithful", "run_paofed", "run_paofed_arms", "step"]

# --------------------------------------------------------------------------------------------------
# The algorithm (SIM-F (docs/papers/paofed.md#choice-simulators) / SIM-E (docs/papers/paofed.md#choice-simulators))
# --------------------------------------------------------------------------------------------------


@dataclass
class _State:
    """Mutable iterates of all runs (internal)."""

    w: np.ndarray             # (R, D)
    wk: np.ndarray            # (R, K, D)
    buf_vals: np.ndarray      # (R, K, G, D): message payloads (full local model or sign vector)
    buf_mask: np.ndarray      # (R, K, G, D) bool: S_{k,t} of the message in the slot
    arrival: np.ndarray       # (R, K, G) int: arrival iteration, -1 = empty slot
    work: np.ndarray | None = None  # (2, R K, D) scratch rows for a step's gathered and updated local models


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
    rows: _Rows | None = None  # the clients with a sample, gathered once for every algorithm of the iteration


class _Rows:
    """The rows (r, k) of the clients with a sample at one iteration, gathered once and shared by the algorithms
    (internal): ``index`` (flat r K + k, in (r, k) order), their regressors ``z`` (A, D) and targets ``y`` (A,),
    ``z`` times a step, formed once per step value (:meth:`scaled`), and what the exchanges of the algorithms whose
    participants are the available clients (``available``: no server sub-sampling) share (:meth:`exchanges`)."""

    def __init__(self, has_data: np.ndarray, z: np.ndarray, y: np.ndarray, available: np.ndarray | None = None):
        R, K, D = z.shape
        self.index = np.flatnonzero(has_data)
        self.z = np.take(_flat(z, D), self.index, axis=0)
        self.y = np.take(y, self.index)
        self.available = available
        self._scaled: dict[float, np.ndarray] = {}
        self._exchanges: _Exchanges | None = None

    def exchanges(self, part: np.ndarray, kept: np.ndarray, delays: np.ndarray, n: int, G: int) -> _Exchanges:
        """:class:`_Exchanges` of ``part``, computed once per iteration when ``part`` is ``available``."""
        if part is not self.available:
            return _Exchanges(part, kept, delays, n, G, self.index)
        if self._exchanges is None:
            self._exchanges = _Exchanges(part, kept, delays, n, G, self.index)
        return self._exchanges

    def scaled(self, mu: float) -> np.ndarray:
        """``z * mu`` (read only: several algorithms use it)."""
        out = self._scaled.get(mu)
        if out is None:
            out = self._scaled[mu] = readonly(np.multiply(self.z, mu), np.float64)
        return out


class _Exchanges:
    """The clients exchanging with the server at iteration n (internal, read only): flat indices ``ip`` (r K + k, in
    (r, k) order), ``rp``, ``kp``, their buffer rows ``slots`` ((r K + k) G + n mod G), their positions ``talks``
    among the rows ``index`` of the clients with a sample, the slot's new arrival times, and the per-run counts of
    messages and discarded messages."""

    def __init__(self, part, kept, delays, n: int, G: int, index):
        R, K = part.shape
        self.ip = np.flatnonzero(part)
        self.rp, self.kp = np.divmod(self.ip, K)
        self.slots = self.ip * G + n % G
        self.talks = np.flatnonzero(np.take(part, index)) if index is not None else None
        self.arrival = np.where(part & kept, n + delays, -1)
        self.messages = part.sum(axis=1)
        self.discarded = np.sum(part & ~kept, axis=1)


def _flat(a: np.ndarray, D: int) -> np.ndarray:
    """``a`` (..., D) as a (-1, D) view (never a copy: writes through it must reach ``a``)."""
    return np.reshape(a, (-1, D), copy=False)


_COUNTS = ("messages", "uplink_params", "downlink_params", "uplink_bits", "downlink_bits", "delivered", "discarded")


def initial_state(env: AsyncEnvironment, runs: int) -> _State:
    R, K, D, G = runs, env.K, env.D, env.slots
    return _State(w=np.zeros((R, D)), wk=np.zeros((R, K, D)), buf_vals=np.zeros((R, K, G, D)),
                  buf_mask=np.zeros((R, K, G, D), dtype=bool), arrival=np.full((R, K, G), -1, dtype=np.int64),
                  work=np.empty((2, R * K, D)))


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


def draw_environment(env, data, data_state, behaviour, data_rng, n: int, runs: int) -> dict:
    """The draws an iteration takes from the behaviour and data streams (the same for every algorithm)."""
    shape = (runs, env.K)
    has_data = behaviour.random(shape) < env.data_rate
    available = has_data & (behaviour.random(shape) < env.p)
    delays, kept = _draw_delays(env, behaviour, shape)
    z, y = data.draw(data_state, data_rng, n, has_data)
    return {"has_data": has_data, "available": available, "delays": delays, "kept": kept, "z": z, "y": y,
            "rows": _Rows(has_data, z, y, available)}


def draw_algorithm(env, config, selector, shared: dict, algorithm, n: int) -> _Draws:
    """An algorithm's own draws at iteration n (server sub-sampling, selections, sign noise) on top of ``shared``."""
    available = shared["available"]
    participants = available
    if config.server_fraction < 1.0:
        participants = available & (algorithm.random(available.shape) < config.server_fraction)
    M, S = selector.masks(n, algorithm)
    noise = None
    if config.sends_signs and config.sign_noise > 0:
        noise = algorithm.uniform(-config.sign_noise, config.sign_noise, size=available.shape + (env.D,))
    return _Draws(has_data=shared["has_data"], participants=participants, delays=shared["delays"],
                  kept=shared["kept"], z=shared["z"], y=shared["y"], M=M, S=S, sign_noise=noise,
                  rows=shared.get("rows"))


def draw_iteration(env, config, selector, data, data_state, streams, n: int, runs: int) -> _Draws:
    """Everything random at iteration n for one algorithm (``streams``: behaviour, data, algorithm generators)."""
    behaviour, data_rng, algorithm = streams
    shared = draw_environment(env, data, data_state, behaviour, data_rng, n, runs)
    return draw_algorithm(env, config, selector, shared, algorithm, n)


def _aggregate_partial(w: np.ndarray, r: np.ndarray, ages: np.ndarray, vals: np.ndarray, masks: np.ndarray,
                       alpha: np.ndarray, overlap_rule: str) -> np.ndarray:
    r"""P7-P8: :math:`w + \sum_l \alpha_l |\mathcal K_{n,l}|^{-1} \sum_{k} S (v - w)` over the listed messages.

    ``r`` (run), ``ages`` (l), ``vals`` (payloads, (A, D)) and ``masks`` (S, (A, D)) list the A messages.
    With ``most_recent``, an entry touched by several delay groups keeps only its youngest group's
    messages; the group sizes :math:`|\mathcal K_{n,l}|` are unchanged (docs/papers/paofed.md#algorithm).
    """
    R, D = w.shape
    G = alpha.size
    if R == 1 and overlap_rule != "most_recent":   # one run: the same operations without the run index
        counts = np.bincount(ages, minlength=G).astype(np.float64)
        beta = alpha[ages] / counts[ages]
        contrib = beta[:, None] * np.where(masks, vals - w, 0.0)
        return np.add.reduce(np.concatenate([w, contrib]), axis=0, keepdims=True)
    counts = np.bincount(r * G + ages, minlength=R * G).reshape(R, G).astype(np.float64)
    beta = alpha[ages] / counts[r, ages]
    if overlap_rule == "most_recent":
        touched = np.zeros((R, G, D), dtype=bool)
        np.logical_or.at(touched, (r, ages), masks)
        youngest = np.argmax(touched, axis=1)                                   # (R, D)
        masks = masks & (ages[:, None] == youngest[r])
    contrib = beta[:, None] * np.where(masks, vals - w[r], 0.0)
    return _add_rows(w, r, contrib)


def _add_rows(w: np.ndarray, r: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``w`` plus ``rows[i]`` added to row ``r[i]`` one after another, in the order listed (``np.add.at`` on a copy).

    One run: a reduction along the rows of ``[w; rows]``, which numpy accumulates row after row in the same order
    (so the sum is bit for bit ``np.add.at``'s) at a tenth of its cost. Several runs with ``r`` nondecreasing (the
    messages listed run by run, as :func:`step` delivers them): the same reduction per run's segment (``np.add.at``
    costs ~10 us per row of D = 200: 1.3 ms for 100 messages against 0.15 ms).
    """
    if w.shape[0] == 1:
        return np.add.reduce(np.concatenate([w, rows]), axis=0, keepdims=True)
    out = w.copy()
    if r.size and np.all(r[1:] >= r[:-1]):
        cuts = np.flatnonzero(r[1:] != r[:-1]) + 1
        for a, b in zip(np.concatenate([[0], cuts]).tolist(), np.append(cuts, r.size).tolist(), strict=True):
            i = int(r[a])
            out[i] = np.add.reduce(np.concatenate([w[i:i + 1], rows[a:b]]), axis=0)
        return out
    np.add.at(out, r, rows)
    return out


def _rows(mask: np.ndarray, r: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Rows (r, k) of a selection broadcastable to (R, K, D), without broadcasting it first."""
    return mask[r if mask.shape[0] > 1 else 0, k if mask.shape[1] > 1 else 0]


def _entries_per_run(rows: np.ndarray, r: np.ndarray, R: int) -> np.ndarray:
    """Selected entries summed over the listed messages of each run (``rows``: their masks, or one shared mask)."""
    if R == 1:  # one run: the total count (integers, so the same as the weighted bincount below)
        total = np.count_nonzero(rows)
        return np.array([total if rows.ndim > 1 else total * r.size], dtype=np.int64)
    per_message = np.broadcast_to(np.count_nonzero(rows, axis=-1), r.shape)
    return np.bincount(r, weights=per_message, minlength=R).astype(np.int64)


def step(env: AsyncEnvironment, config: AlgorithmConfig, alpha: np.ndarray, state: _State, draws: _Draws,
          n: int, counts: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One iteration n of P1-P9 on every run and client, in place. Returns the delivered (run, client, age).

    Clients, runs and buffer slots are addressed by flat indices into (-1, D) views of the state (one index array
    per gather or scatter instead of two or three); the arithmetic is that of the textbook step, operation for
    operation (the benchmark checks it against a loop over clients).
    """
    w, wk = state.w, state.wk
    part = draws.participants
    R, K, D = wk.shape
    G = env.slots
    flat_wk = _flat(wk, D)
    rows = draws.rows if draws.rows is not None else _Rows(draws.has_data, draws.z, draws.y)
    ex = rows.exchanges(part, draws.kept, draws.delays, n, G)
    ip, rp, kp = ex.ip, ex.rp, ex.kp               # the participants, flat r K + k in (r, k) order
    # Only clients with a new sample compute (P1); work on their rows.
    if config.sends_signs or not config.autonomous:       # computing == participants
        ic, t = ip, slice(None)
        z = np.take(_flat(draws.z, D), ic, axis=0)
        y = np.take(draws.y, ic)
    else:                                                  # computing == has_data (the shared rows)
        ic, z, y = rows.index, rows.z, rows.y
        t = ex.talks                               # part is within has_data: ic[t] == ip
    # P3 / P4: start from the received portion merged into the local model (the talking rows), or the local model.
    # The gathered rows and the update go to preallocated scratch rows: a fresh (A, D) temporary each iteration is
    # paged in anew (A ~ 640 rows of 1.6 kB at the paper's size), which cost more than the arithmetic.
    work = state.work if state.work is not None and state.work.shape[1:] == (R * K, D) else np.empty((2, R * K, D))
    state.work = work
    start = np.take(flat_wk, ic, axis=0, out=work[0, :ic.size], mode="clip")  # ic is in range: clip changes nothing
    if ip.size:
        start[t] = np.where(_rows(draws.M, rp, kp), w[rp], start[t])
    e = y - np.einsum("ad,ad->a", start, z)
    if config.sends_signs:
        g = z * e[:, None]
        if draws.sign_noise is not None:
            g = g + np.take(_flat(draws.sign_noise, D), ic, axis=0)
        payload = np.sign(g)                       # computing == participants, same order as (rp, kp)
    else:
        if ic is ip:
            new = np.multiply(z, config.mu, out=work[1, :ic.size])  # start + mu z e, with mu z e formed in place
            new *= e[:, None]
        else:
            new = np.multiply(rows.scaled(config.mu), e[:, None], out=work[1, :ic.size])
        new += start
        flat_wk[ic] = new
        payload = new[t]
    # Send (S_{k,n} w_{k,n+1}, n) to slot n mod (l_max + 1), whose previous message expired at n - 1.
    flat_vals, flat_masks = _flat(state.buf_vals, D), _flat(state.buf_mask, D)
    flat_vals[ex.slots] = payload
    sent = _rows(draws.S, rp, kp)
    flat_masks[ex.slots] = sent
    state.arrival[:, :, n % G] = ex.arrival
    counts["messages"] += ex.messages
    up_params = _entries_per_run(sent, rp, R)
    down_params = _entries_per_run(_rows(draws.M, rp, kp), rp, R)
    counts["uplink_params"] += up_params
    counts["downlink_params"] += down_params
    counts["uplink_bits"] += up_params * (1 if config.sends_signs else BITS_PER_PARAMETER)
    counts["downlink_bits"] += down_params * BITS_PER_PARAMETER
    counts["discarded"] += ex.discarded
    # P5: collect the messages arriving at n (each exactly once: the slot is emptied on delivery).
    flat_arrival = np.reshape(state.arrival, -1, copy=False)
    due = np.flatnonzero(flat_arrival == n)        # flat (r K + k) G + s, in (r, k, s) order
    rk, s = np.divmod(due, G)
    r, k = np.divmod(rk, K)
    ages = (n - s) % G
    if r.size:
        flat_arrival[due] = -1
        counts["delivered"] += np.bincount(r, minlength=w.shape[0])
        vals = flat_vals[due]
        if config.aggregation == "partial":                                       # P6-P8
            state.w = _aggregate_partial(w, r, ages, vals, flat_masks[due], alpha, config.overlap_rule)
        else:
            total = _add_rows(np.zeros_like(w), r, vals)
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
    data : LinearData or a data source of :mod:`reference_impl.paofed.data`
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
    One iteration n (docs/papers/paofed.md#algorithm): every client with a new sample (probability ``data_rate``) draws
    its availability; available clients (contacted with probability ``server_fraction``) merge
    :math:`M_{k,n} w_n` into their local model, take an LMS step and send :math:`(S_{k,n} w_{k,n+1}, n)`,
    which arrives at :math:`n + L`; clients with a sample that do not exchange take an autonomous step if
    ``autonomous``; the server aggregates the messages arriving at n by age (P5-P8).
    """
    return _simulate(env, (config,), data, iterations, rng, runs, observe)[0]


def run_paofed_arms(env: AsyncEnvironment, configs: Sequence[AlgorithmConfig], data, iterations: int,
                    rng: np.random.Generator, *, runs: int = 1, record=None) -> list[SimulationRun]:
    r"""Several algorithms on one environment, data source and seed, in lockstep: one :class:`SimulationRun` each.

    The result for ``configs[i]`` is bit for bit :func:`run_paofed` ``(env, configs[i], data, iterations, rng')``
    with ``rng'`` a generator in the state ``rng`` is in here (common random numbers): the behaviour and data
    streams are drawn once per iteration for all algorithms (the data draw, RFF features included, is most of an
    iteration's cost), and each algorithm takes its own copy of the algorithm stream.

    ``record`` (bool, length ``iterations + 1``; default all) names the points of the curve whose metric is computed;
    the others are NaN. The metric (MSE-test: T x D products per run) costs about a third of an algorithm's
    iteration at the paper's size, and a read-out over windows needs only those; the iterates are the same either way.
    """
    configs = tuple(configs)
    if not configs:
        raise ValueError("configs must hold at least one AlgorithmConfig, got none")
    return _simulate(env, configs, data, iterations, rng, runs, None, record)


def _simulate(env, configs: tuple, data, iterations: int, rng, runs: int, observe, record=None) -> list[SimulationRun]:
    if not isinstance(env, AsyncEnvironment):
        raise TypeError(f"env must be an AsyncEnvironment, got {type(env).__name__}")
    for config in configs:
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
    if record is None:
        record = [True] * (iterations + 1)
    else:
        mask = np.asarray(record)
        if mask.dtype != bool or mask.shape != (iterations + 1,):
            raise ValueError(f"record must be a bool array of length iterations + 1 = {iterations + 1}, got "
                             f"{mask.dtype} {mask.shape}")
        record = mask.tolist()
    behaviour, data_rng, algorithm = rng.spawn(3)
    arms = []
    for config in configs:
        own = copy.deepcopy(algorithm)   # every algorithm starts from the same algorithm stream
        arms.append({"config": config, "alpha": staleness_weights(config, env.l_max), "rng": own,
                     "selector": Selector(config, env, own, runs), "state": initial_state(env, runs),
                     "counts": {k: np.zeros(runs, dtype=np.int64) for k in _COUNTS},
                     "curve": np.full((iterations + 1, runs), np.nan)})
    data_state = data.start(data_rng, runs)
    for arm in arms:
        if record[0]:
            arm["curve"][0] = data.metric(data_state, arm["state"].w)
    for n in range(iterations):
        shared = draw_environment(env, data, data_state, behaviour, data_rng, n, runs)
        for arm in arms:
            config, state = arm["config"], arm["state"]
            draws = draw_algorithm(env, config, arm["selector"], shared, arm["rng"], n)
            w_before = state.w.copy() if observe is not None else None
            delivered = step(env, config, arm["alpha"], state, draws, n, arm["counts"])
            if record[n + 1]:
                arm["curve"][n + 1] = data.metric(data_state, state.w)
            if observe is not None:
                arrival = np.where(draws.participants & draws.kept, n + draws.delays, -1)
                observe(StepRecord(n=n, has_data=draws.has_data.copy(), participants=draws.participants.copy(),
                                   z=draws.z.copy(), y=draws.y.copy(),
                                   M=np.broadcast_to(draws.M, state.wk.shape).copy(),
                                   S=np.broadcast_to(draws.S, state.wk.shape).copy(), delays=draws.delays.copy(),
                                   arrival_time=arrival, delivered=delivered, w_before=w_before,
                                   w_after=state.w.copy(), w_clients_after=state.wk.copy()))
    out = []
    for arm in arms:
        comm = CommunicationCounts(**{k: readonly(v, np.int64) for k, v in arm["counts"].items()})
        out.append(SimulationRun(curve=arm["curve"], metric=data.metric_name, w=arm["state"].w,
                                 w_clients=arm["state"].wk, communication=comm, algorithm=arm["config"].name))
    return out


def run_faithful(instance: PAOFedInstance, iterations: int, rng: np.random.Generator, *, runs: int = 1,
                 observe=None) -> SimulationRun:
    """SIM-F (docs/papers/paofed.md#choice-simulators) of an analysis instance: :func:`run_paofed` with
    :func:`faithful_setup`."""
    env, config, data = faithful_setup(instance)
    return run_paofed(env, config, data, iterations, rng, runs=runs, observe=observe)
