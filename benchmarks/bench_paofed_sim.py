"""PAO-Fed simulation throughput at the paper's size: vectorised reference vs a per-client loop.

Run: .venv/bin/python benchmarks/bench_paofed_sim.py [--runs R] [--iterations N]
Both implementations consume the same pre-drawn randomness (availability, delays, selections, RFF
regressors of docs/papers/paofed.md#choice-data data) for PAO-Fed-U1 on K = 256 clients, D = 200, l_max = 10, delta =
0.2 (docs/papers/paofed.md#experiments); they are checked equal (server and client models, every iteration) before
anything is timed. Prints the time ratio loop / vectorised per iteration, the peak-memory ratio and the
vectorised end-to-end throughput (draws and MSE-test included). Then the experiments' lockstep: the eleven
default-setting algorithms of the PAO-Fed experiments (six variants, five baselines) on one seed, run one after
another vs together (:func:`reference_impl.paofed.simulation.run_paofed_arms`, environment and data drawn once),
checked bit-identical, timed in CPU seconds (less sensitive to a shared machine than wall time).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from _timing import (
    measure,  # benchmarks/_timing.py (scripts run from this folder's path)
)

from reference_impl.paofed import (
    algorithm_config,
    experiment_environment,
    run_paofed,
    staleness_weights,
)
from reference_impl.paofed.data import SyntheticRFFData
from reference_impl.paofed.selection import Selector
from reference_impl.paofed.simulation import (
    draw_algorithm,
    draw_environment,
    draw_iteration,
    initial_state,
    run_paofed_arms,
    step,
)


def loop_step(env, config, alpha, state, draws, n):
    """One iteration of P1-P8 written the obvious way: Python loops over runs, clients and buffer slots."""
    R, K, D = state.wk.shape
    G = env.slots
    slot = n % G
    M_all = np.broadcast_to(draws.M, (R, K, D))
    S_all = np.broadcast_to(draws.S, (R, K, D))
    for r in range(R):
        w = state.w[r].copy()
        for k in range(K):
            state.arrival[r, k, slot] = -1
            if not draws.has_data[r, k]:
                continue
            z, y = draws.z[r, k], draws.y[r, k]
            local = state.wk[r, k]
            part = draws.participants[r, k]
            start = np.where(M_all[r, k], w, local) if part else local
            e = y - start @ z
            if part or config.autonomous:
                state.wk[r, k] = start + config.mu * z * e
            if part:
                state.buf_vals[r, k, slot] = state.wk[r, k]
                state.buf_mask[r, k, slot] = S_all[r, k]
                if draws.kept[r, k]:
                    state.arrival[r, k, slot] = n + draws.delays[r, k]
        groups = {}
        for k in range(K):
            for s in range(G):
                if state.arrival[r, k, s] == n:
                    groups.setdefault((n - s) % G, []).append((k, s))
                    state.arrival[r, k, s] = -1
        new = w.copy()
        for age, members in groups.items():
            for k, s in members:
                mask = state.buf_mask[r, k, s]
                new[mask] += alpha[age] / len(members) * (state.buf_vals[r, k, s][mask] - w[mask])
        state.w[r] = new


def cpu_seconds(fast, slow, pairs: int) -> tuple[float, float]:
    """Median thread CPU seconds of ``fast()`` and ``slow()`` over ``pairs`` interleaved calls of each."""
    a, b = [], []
    for _ in range(pairs):
        for fn, out in ((fast, a), (slow, b)):
            t = time.thread_time()
            fn()
            out.append(time.thread_time() - t)
    return float(np.median(a)), float(np.median(b))


def _copy(state):
    return type(state)(**{k: v.copy() for k, v in state.__dict__.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--iterations", type=int, default=40, help="iterations checked and timed")
    parser.add_argument("--pairs", type=int, default=5, help="interleaved CPU-time pairs (vectorised, loop)")
    args = parser.parse_args()
    env = experiment_environment()
    config = algorithm_config("paofed-u1")
    data = SyntheticRFFData(K=env.K, D=env.D)
    alpha = staleness_weights(config, env.l_max)
    streams = tuple(np.random.default_rng(0).spawn(3))
    selector = Selector(config, env, streams[2], args.runs)
    data_state = data.start(streams[1], args.runs)
    draws = [draw_iteration(env, config, selector, data, data_state, streams, n, args.runs)
             for n in range(args.iterations)]

    # 1. equality over the whole sequence
    fast, slow = initial_state(env, args.runs), initial_state(env, args.runs)
    counts = {k: np.zeros(args.runs, dtype=np.int64) for k in ("messages", "uplink_params", "downlink_params",
                                                                 "uplink_bits", "downlink_bits", "delivered",
                                                                 "discarded")}
    worst = 0.0
    for n, d in enumerate(draws):
        step(env, config, alpha, fast, d, n, counts)
        loop_step(env, config, alpha, slow, d, n)
        worst = max(worst, float(np.max(np.abs(fast.w - slow.w))), float(np.max(np.abs(fast.wk - slow.wk))))
    assert worst <= 1e-12, worst
    print(f"PAO-Fed-U1, K = {env.K}, D = {env.D}, l_max = {env.l_max}, runs = {args.runs}: vectorised = loop over "
          f"{args.iterations} iterations (max |difference| {worst:.1e}); "
          f"{int(counts['delivered'].sum())} messages used")

    # 2. time per iteration on the same draws (state reset each repetition)
    def vectorised():
        state = initial_state(env, args.runs)
        for n, d in enumerate(draws):
            step(env, config, alpha, state, d, n, {k: v.copy() for k, v in counts.items()})

    def looped():
        state = initial_state(env, args.runs)
        for n, d in enumerate(draws):
            loop_step(env, config, alpha, state, d, n)

    t_vec, m_vec = measure(vectorised, 3)
    t_loop, m_loop = measure(looped, 1)
    per = args.iterations
    print(f"vectorised: {1e3 * t_vec / per:.2f} ms/iteration, peak {m_vec / 2**20:.1f} MiB")
    print(f"per-client loop: {1e3 * t_loop / per:.2f} ms/iteration, peak {m_loop / 2**20:.1f} MiB")
    print(f"time ratio loop / vectorised: {t_loop / t_vec:.1f}x; memory ratio: {m_loop / max(m_vec, 1):.2f}x")
    # CPU time, the two interleaved (a shared machine stretches wall times by whatever else runs)
    c_vec, c_loop = cpu_seconds(vectorised, looped, args.pairs)
    print(f"CPU: vectorised {1e3 * c_vec / per:.3f} ms/iteration, loop {1e3 * c_loop / per:.3f} ms/iteration; "
          f"median of {args.pairs} interleaved pairs: ratio loop / vectorised {c_loop / c_vec:.1f}x")

    # 3. end-to-end throughput of the reference (draws, RFF regressors and MSE-test included)
    t = time.perf_counter()
    run_paofed(env, config, data, args.iterations, np.random.default_rng(1), runs=args.runs)
    total = time.perf_counter() - t
    print(f"end to end (run_paofed): {1e3 * total / per:.2f} ms/iteration for {args.runs} runs "
          f"= {args.runs * per / total:.0f} run-iterations/s")

    # 4. where an end-to-end iteration goes once the state's pages are touched (steady state), and the ceiling of
    # the ratio that the step's memory traffic sets
    split(env, config, data, alpha, args.runs, args.iterations, loop_step_cpu=c_loop / per)

    # 5. the experiments' lockstep of several algorithms on one replicate
    lockstep(args.iterations)


def bandwidth(size: int = 1 << 28, repeats: int = 5) -> float:
    """Bytes per CPU second that one thread moves in a streaming copy (``np.copyto`` of ``size`` bytes: each byte
    read once and written once, counted twice), the best of ``repeats``: what no numpy pass over large arrays
    beats on this machine."""
    a = np.ones(size // 8)
    b = np.empty_like(a)
    np.copyto(b, a)  # pages touched before timing
    best = math.inf
    for _ in range(repeats):
        t = time.thread_time()
        np.copyto(b, a)
        best = min(best, time.thread_time() - t)
    return 2.0 * size / best


def split(env, config, data, alpha, runs: int, iterations: int, warm: int = 30, *,
          loop_step_cpu: float | None = None) -> None:
    """CPU seconds per iteration of an end-to-end run's phases after ``warm`` iterations (every buffer slot and
    scratch row touched once; before that, first-touch page faults inflate the step), and the bytes the step moves.

    The phases are those of :func:`reference_impl.paofed.simulation.run_paofed`: the environment and data draw (the
    RFF features of the clients with a sample are its ``np.cos``), the algorithm's own draws, the step, the MSE-test.
    """
    streams = tuple(np.random.default_rng(3).spawn(3))
    selector = Selector(config, env, streams[2], runs)
    data_state = data.start(streams[1], runs)
    state = initial_state(env, runs)
    counts = {k: np.zeros(runs, dtype=np.int64) for k in ("messages", "uplink_params", "downlink_params",
                                                            "uplink_bits", "downlink_bits", "delivered", "discarded")}
    phases = dict.fromkeys(("environment and data draw", "algorithm draws", "step", "MSE-test"), 0.0)
    rows = 0
    for n in range(warm + iterations):
        t0 = time.thread_time()
        shared = draw_environment(env, data, data_state, streams[0], streams[1], n, runs)
        t1 = time.thread_time()
        d = draw_algorithm(env, config, selector, shared, streams[2], n)
        t2 = time.thread_time()
        step(env, config, alpha, state, d, n, counts)
        t3 = time.thread_time()
        data.metric(data_state, state.w)
        t4 = time.thread_time()
        if n >= warm:
            for key, dt in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
                phases[key] += dt
            rows += int(d.has_data.sum())
    total = sum(phases.values())
    shares = ", ".join(f"{k} {1e3 * v / iterations:.2f} ms ({100 * v / total:.0f} %)" for k, v in phases.items())
    print(f"steady state after {warm} iterations, {runs} runs, CPU per iteration: {shares}; total "
          f"{1e3 * total / iterations:.2f} ms")
    # The step's unavoidable traffic per client with a sample: read its local model and regressor, write the model
    # back (3 rows of D doubles); the vectorised step makes about five passes (gather, dot, update, add, scatter).
    per_row = 8 * env.D
    moved = 3 * per_row * rows / iterations
    print(f"step: {rows / iterations:.0f} clients with a sample per iteration; at least {moved / 1e6:.1f} MB moved per "
          f"iteration (3 rows each), {moved / max(phases['step'] / iterations, 1e-12) / 1e9:.1f} GB/s at that floor")
    # The ceiling of loop / vectorised: no step moves its floor of bytes faster than a streaming copy, so no
    # implementation's step takes less than floor / bandwidth, while the loop's step takes loop_step_cpu.
    bw = bandwidth()
    floor = moved / bw
    line = (f"streaming copy {bw / 1e9:.1f} GB/s (one thread, read + write): the step's floor is {1e3 * floor:.2f} ms "
            f"per iteration, the vectorised step takes {phases['step'] / iterations / floor:.1f}x that floor")
    if loop_step_cpu is not None:
        line += (f"; the loop's step ({1e3 * loop_step_cpu:.2f} ms) over the floor: loop / vectorised can be at most "
                 f"{loop_step_cpu / floor:.1f}x at {runs} runs")
    print(line)


def lockstep(iterations: int) -> None:
    """The experiments' default-setting arms one after another vs in lockstep (runs = 1, as each replicate)."""
    env = experiment_environment()
    data = SyntheticRFFData(K=env.K, D=env.D)
    names = ("paofed-c0", "paofed-u0", "paofed-c1", "paofed-u1", "paofed-c2", "paofed-u2", "online-fed",
             "online-fedsgd", "pso-fed", "signsgd")
    configs = [algorithm_config(a) for a in names] + [algorithm_config("online-fed", server_fraction=0.5)]
    t = time.process_time()
    alone = [run_paofed(env, c, data, iterations, np.random.default_rng(2)) for c in configs]
    t_alone = time.process_time() - t
    t = time.process_time()
    together = run_paofed_arms(env, configs, data, iterations, np.random.default_rng(2))
    t_together = time.process_time() - t
    assert all(np.array_equal(a.curve, b.curve) for a, b in zip(alone, together, strict=True))
    arm_iterations = len(configs) * iterations
    print(f"{len(configs)} algorithms x {iterations} iterations, one seed: bit-identical; one after another "
          f"{arm_iterations / t_alone:.0f} arm-iterations/s, lockstep {arm_iterations / t_together:.0f} "
          f"arm-iterations/s (CPU); ratio {t_alone / t_together:.1f}x")


if __name__ == "__main__":
    main()
