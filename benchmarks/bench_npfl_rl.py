"""NPFL-RL: the cost of one iteration and of drawing the instance against the number of clients K.

Run: .venv/bin/python benchmarks/bench_npfl_rl.py [--Ks 250,500,1000,2000] [--d 20] [--repeats N]

For each K (Q = 3 clusters, mean degree ``--mean-degree``, default 10, so that a connected Erdős–Rényi draw stays
likely up to a few thousand clients; d = ``--d``, D_k in 5..35, one run, fixed tau): the time per iteration of
:func:`reference_impl.npfl_rl.run_npfl` (``--iterations`` iterations, median of ``--repeats``), as a ratio to the
smallest K next to the ratios of K and K^2 (the difference of runs of 1 + ``--iterations`` and of 1 iteration, so
that the set-up is left out; the set-up, :func:`reference_impl.npfl_rl.primal.build_structure`, is shown apart); the
part of it spent in the iteration's graph products (the dense
K x K consensus and inter-cluster matrices of :func:`reference_impl.npfl_rl.primal.build_structure`, three
products per iteration), as the same ratios; and the time to draw the instance
(:func:`reference_impl.npfl_rl.data.synthetic_problem`, with the expected number of Erdős–Rényi draws from
:func:`reference_impl.npfl_rl.data.estimate_graph_draws`), for the historical pair-by-pair sampler and the
edges-only sampler.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from reference_impl.npfl_rl import NPFLConfig, run_npfl
from reference_impl.npfl_rl.data import estimate_graph_draws, synthetic_problem
from reference_impl.npfl_rl.primal import build_structure


def _times(fn, repeats: int) -> tuple[float, float]:
    """Median and minimum seconds of ``fn()`` over ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)), float(np.min(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--Ks", default="250,500,1000,2000")
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--mean-degree", type=float, default=10.0)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    config = NPFLConfig()
    print(f"NPFL-RL iteration vs K: Q = 3, d = {args.d}, mean degree {args.mean_degree}, one run, "
          f"{args.iterations} iterations; medians (minima) of {args.repeats}")
    base = None
    for K in (int(v) for v in args.Ks.split(",")):
        kw = dict(K=K, Q=3, d=args.d, mean_degree=args.mean_degree)
        draws = estimate_graph_draws(K, args.mean_degree)["expected_draws"]
        gen = {}
        for sampler in ("pairs", "linear"):
            t = time.perf_counter()
            problem, _ = synthetic_problem(np.random.default_rng(0), sampler=sampler, **kw)
            gen[sampler] = time.perf_counter() - t
        t_one, m_one = _times(lambda p=problem: run_npfl(p, config, 1), args.repeats)
        t_run, m_run = _times(lambda p=problem: run_npfl(p, config, 1 + args.iterations), args.repeats)
        t_setup, m_setup = _times(lambda p=problem: build_structure((p,), config), args.repeats)
        S = build_structure((problem,), config)
        w = np.random.default_rng(1).normal(size=(1, K, args.d))

        def products(S=S, w=w):
            return (np.einsum("rkl,rld->rkd", S.A_in, w), np.einsum("rkl,rld->rkd", S.B, w),
                    np.einsum("rkl,rld->rkd", S.A_in, w))

        t_prod, m_prod = _times(products, 5 * args.repeats)
        per_it = max(m_run - m_one, 1e-9) / args.iterations
        if base is None:
            base = (K, per_it, m_prod, gen["pairs"], gen["linear"])
        r = K / base[0]
        print(f"  K = {K:>5}: iteration {(t_run - t_one) / args.iterations * 1e3:8.2f} ms (min {per_it * 1e3:8.2f}), "
              f"{per_it / base[1]:6.1f}x K = {base[0]} (K ratio {r:4.1f}, K^2 ratio {r * r:5.1f}); graph products "
              f"{m_prod * 1e3:7.2f} ms ({m_prod / base[2]:6.1f}x, {m_prod / per_it:.0%} of an iteration); set-up "
              f"{m_setup * 1e3:.1f} ms; drawing "
              f"the instance {gen['pairs']:.2f} s pairs ({gen['pairs'] / base[3]:.1f}x), {gen['linear']:.2f} s "
              f"edges only ({gen['linear'] / base[4]:.1f}x), {draws:.2f} draws expected")


if __name__ == "__main__":
    main()
