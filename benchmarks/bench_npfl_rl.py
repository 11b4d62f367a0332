"""NPFL-RL: the cost of one iteration against the number of clients K at a fixed mean degree (linear in K).

Run: .venv/bin/python benchmarks/bench_npfl_rl.py [--Ks 250,500,1000,2000,5000,10000] [--d 20] [--repeats N]

For each K (Q = 3 clusters, mean degree ``--mean-degree``, default 10, so that a connected Erdős–Rényi draw stays
likely up to 10,000 clients; d = ``--d``; D_k in 5..35; one run; fixed tau; every instance drawn with the edges-only
sampler so that all sizes are drawn alike):

* the time per iteration of :func:`reference_impl.npfl_rl.run_npfl` (the difference of runs of 1 + ``--iterations``
  and of 1 iteration, so that the set-up is left out; minimum over ``--repeats``), as a ratio to the smallest K next
  to the ratios of K, of the edges, of K^2, and of the work that
  :func:`reference_impl.npfl_rl.estimate_run_cost` predicts for one iteration;
* the part of it spent in the iteration's two sparse graph products (the consensus neighbours and the inter-cluster
  averages, :func:`reference_impl.npfl_rl.primal.graph_product`), as the same ratio, and the former dense products
  (the (K, K) matrices applied with einsum, three per iteration) up to ``--dense-max-K``, as a ratio to the sparse
  ones measured in the same process;
* the set-up (:func:`reference_impl.npfl_rl.primal.build_structure`) and the time to draw the instance
  (:func:`reference_impl.npfl_rl.data.synthetic_problem`, edges-only sampler, with the expected number of
  Erdős–Rényi draws from :func:`reference_impl.npfl_rl.data.estimate_graph_draws`).

Times are machine-dependent; the ratios are what the benchmark shows.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from reference_impl.npfl_rl import NPFLConfig, estimate_run_cost, run_npfl
from reference_impl.npfl_rl.data import estimate_graph_draws, synthetic_problem
from reference_impl.npfl_rl.primal import build_structure, graph_product


def _best(fn, repeats: int) -> float:
    """Minimum seconds of ``fn()`` over ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.min(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--Ks", default="250,500,1000,2000,5000,10000")
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--mean-degree", type=float, default=10.0)
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dense-max-K", type=int, default=2000, help="largest K of the former dense products")
    args = parser.parse_args()
    config = NPFLConfig()
    print(f"NPFL-RL iteration vs K: Q = 3, d = {args.d}, mean degree {args.mean_degree}, one run, fixed tau, "
          f"{args.iterations} iterations; minima of {args.repeats}")
    base = None
    for K in (int(v) for v in args.Ks.split(",")):
        draws = estimate_graph_draws(K, args.mean_degree)["expected_draws"]
        t = time.perf_counter()
        problem, _ = synthetic_problem(np.random.default_rng(0), K=K, Q=3, d=args.d, mean_degree=args.mean_degree,
                                       sampler="linear")
        t_draw = time.perf_counter() - t
        t_one = _best(lambda p=problem: run_npfl(p, config, 1), args.repeats)
        t_run = _best(lambda p=problem: run_npfl(p, config, 1 + args.iterations), args.repeats)
        t_setup = _best(lambda p=problem: build_structure((p,), config), args.repeats)
        S = build_structure((problem,), config)
        w = np.random.default_rng(1).normal(size=(1, K, args.d))
        t_prod = _best(lambda S=S, w=w: (graph_product(S.B, w), graph_product(S.A_in, w)), 5 * args.repeats)
        dense = ""
        if K <= args.dense_max_K:
            dense_in, dense_B = S.A_in.toarray()[None], S.B.toarray()[None]

            def former(A_in=dense_in, B=dense_B, w=w):
                return (np.einsum("rkl,rld->rkd", A_in, w), np.einsum("rkl,rld->rkd", B, w),
                        np.einsum("rkl,rld->rkd", A_in, w))

            t_dense = _best(former, 5 * args.repeats)
            dense = f"; former dense products {t_dense * 1e3:7.2f} ms ({t_dense / t_prod:5.0f}x the sparse ones)"
        per_it = max(t_run - t_one, 1e-9) / args.iterations
        cost = [estimate_run_cost(K, args.d, problem.n_edges, iterations=n).work for n in (1, 2)]
        est_it = cost[1] - cost[0]  # one iteration's estimated work (the set-up cancels)
        if base is None:
            base = (K, per_it, t_prod, problem.n_edges, est_it)
        r = K / base[0]
        print(f"  K = {K:>5} ({problem.n_edges:>6} edges): iteration {per_it * 1e3:7.2f} ms, {per_it / base[1]:5.1f}x "
              f"K = {base[0]} (K ratio {r:5.1f}, edges {problem.n_edges / base[3]:5.1f}, K^2 {r * r:6.0f}, estimated "
              f"work {est_it / base[4]:5.1f}); graph products {t_prod * 1e3:6.3f} ms ({t_prod / base[2]:5.1f}x, "
              f"{t_prod / per_it:4.0%} of an iteration){dense}; set-up {t_setup * 1e3:.1f} ms; drawing the instance "
              f"{t_draw:.2f} s ({draws:.2f} draws expected)")


if __name__ == "__main__":
    main()
