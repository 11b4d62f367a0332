"""zCDP-NFL: the cost of one round against the number of agents K (sparse graph), and one round vs a per-agent loop.

Run: .venv/bin/python benchmarks/bench_zcdp_nfl.py [--Ks 1000,2000,5000,10000] [--repeats N] [--skip-loop]

1. Per-iteration cost against K at a fixed degree (``--degree``, default 4: a random 4-regular graph, connected
   with high probability, redrawn otherwise; a connected G(K, m) at a fixed mean degree exists only with vanishing
   probability as K grows), P = 8, M = 50, LAD, S2 noise, one run. Per K: the time of
   :func:`reference_impl.zcdp_nfl.nfl_round` (sparse adjacency, the reference), median and minimum over the
   repeats, and the ratio of the minima (the least disturbed by other jobs) to the smallest K, next to the ratios
   of K and of the edges (linear growth: the columns agree); the same for the round's part on the graph, its two
   neighbour sums (:func:`reference_impl.zcdp_nfl.problem.graph_product`); the rest is the data term, linear in
   K M P, whose ratio also shows X (K x M x P doubles) outgrowing the caches. Then the same round with the
   adjacency as a dense K x K array (the former product, up to ``--dense-max-K``), checked equal to rounding, as a
   ratio; and the time to draw the instance (networkx's regular graph, then
   :func:`reference_impl.zcdp_nfl.synthetic_problem`: sparse adjacency, data, validation) as a ratio.
2. One round at the paper's size (K = 50 agents, connected G(50, 75), P = 8, M = 50, LAD, rho = 1, eta = 0.5,
   S2 noise phi1 = 1e-3, tau = 0.99), vectorised vs a straightforward per-agent loop (checked equal first); one
   Monte-Carlo run and 100 runs (the batch axis of the reference vs the loop repeated per run). Time and
   peak-memory ratios (loop / vectorised).
"""

from __future__ import annotations

import argparse
import time

import networkx as nx
import numpy as np
from _timing import measure  # benchmarks/_timing.py (scripts run from this folder's path)

from reference_impl.zcdp_nfl import NFLConfig, PrivacySchedule, StepSchedule, nfl_round, synthetic_problem
from reference_impl.zcdp_nfl.problem import graph_product


class _Replay:
    """A Generator stand-in returning prepared standard normals (so both versions see the same noise)."""

    def __init__(self, z):
        self.z = z

    def normal(self, size):
        return self.z.reshape(size)


def _median(fn, repeats: int) -> float:
    return _times(fn, repeats)[0]


def _times(fn, repeats: int) -> tuple[float, float]:
    """Median and minimum seconds of ``fn()`` over ``repeats`` calls (the minimum is the least disturbed by other
    jobs on a shared machine)."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)), float(np.min(times))


def _regular_graph(K: int, degree: int) -> nx.Graph:
    for seed in range(100):
        graph = nx.random_regular_graph(degree, K, seed=seed)
        if nx.is_connected(graph):
            return graph
    raise ArithmeticError(f"no connected {degree}-regular graph on {K} nodes in 100 draws")


def scaling(Ks, degree: int, repeats: int, dense_max_K: int) -> None:
    """Section 1: one round's time against K, sparse (the reference) and dense adjacency products."""
    config = NFLConfig(rho=1.0, step=StepSchedule(kind="constant", eta0=0.5), privacy=PrivacySchedule(phi1=1e-3))
    etas = config.step.etas(1)
    print(f"zCDP-NFL round vs K: {degree}-regular graph, P = 8, M = 50, LAD, one run; medians of {repeats}")
    base = None
    for K in Ks:
        t = time.perf_counter()
        problem = synthetic_problem(np.random.default_rng(0), K=K, P=8, M=50, objective="lad",
                                    graph=_regular_graph(K, degree))
        t_draw = time.perf_counter() - t
        sigma = np.sqrt(config.privacy.variances(problem, config.rho, etas))[0]
        rng = np.random.default_rng(1)
        w_tilde = rng.normal(size=(1, K, 8))
        gamma = config.rho * graph_product(problem.laplacian(), rng.normal(size=w_tilde.shape))
        z = rng.normal(size=w_tilde.shape)
        sparse = (problem.adjacency.astype(np.float64), problem.degree.astype(np.float64)[:, None])

        def run_sparse(m=sparse, problem=problem, sigma=sigma, w_tilde=w_tilde, gamma=gamma, z=z):
            return nfl_round(problem, config.rho, etas[0], sigma, w_tilde, gamma, _Replay(z), _matrices=m)

        t_sparse, m_sparse = _times(run_sparse, repeats)
        t_graph, m_graph = _times(lambda A=sparse[0], x=w_tilde: (graph_product(A, x), graph_product(A, x)), repeats)
        if base is None:
            base = (K, problem.n_edges, m_sparse, t_draw, m_graph)
        line = (f"  K = {K:>6}, |E| = {problem.n_edges:>6}: round {t_sparse * 1e3:7.3f} ms (min "
                f"{m_sparse * 1e3:7.3f}), {m_sparse / base[2]:6.2f}x K = {base[0]} (K ratio {K / base[0]:5.1f}, edge "
                f"ratio {problem.n_edges / base[1]:5.1f}); neighbour sums {t_graph * 1e6:7.1f} us (min "
                f"{m_graph * 1e6:7.1f}, {m_graph / base[4]:5.2f}x); drawing the instance {t_draw:6.3f} s "
                f"({t_draw / base[3]:5.1f}x)")
        if K <= dense_max_K:
            dense = (problem.adjacency.toarray().astype(np.float64), sparse[1])

            def run_dense(m=dense, problem=problem, sigma=sigma, w_tilde=w_tilde, gamma=gamma, z=z):
                return nfl_round(problem, config.rho, etas[0], sigma, w_tilde, gamma, _Replay(z), _matrices=m)

            for a, b in zip(run_sparse(), run_dense(), strict=True):
                assert np.allclose(a, b, rtol=1e-12, atol=1e-12)
            t_dense = _median(run_dense, max(1, repeats // 4))
            line += f"; dense K x K product {t_dense * 1e3:.3f} ms ({t_dense / t_sparse:.1f}x the sparse round)"
        print(line)


def loop_round(problem, rho, eta, sigma, w_tilde, gamma, noise):
    """Algorithm 1, one round, written the obvious way: a Python loop over agents and their neighbours."""
    K = problem.K
    A = problem.adjacency
    nbrs = [A.indices[A.indptr[k]:A.indptr[k + 1]] for k in range(K)]
    w = np.empty_like(w_tilde)
    for k in range(K):
        r = problem.X[k] @ w_tilde[k] - problem.y[k]
        g = problem.X[k].T @ np.sign(r) / problem.M
        s = sum(w_tilde[k] + w_tilde[j] for j in nbrs[k])
        w[k] = (w_tilde[k] / eta + rho * s - gamma[k] - g) / (1.0 / eta + 2.0 * rho * len(nbrs[k]))
    new = np.empty_like(w)
    for k in range(K):
        new[k] = w[k] + sigma[k] * noise[k]
    new_gamma = np.empty_like(gamma)
    for k in range(K):
        new_gamma[k] = gamma[k] + rho * sum(new[k] - new[j] for j in nbrs[k])
    return w, new, new_gamma


def versus_loop(repeats: int) -> None:
    """Section 2: one round at the paper's size, vectorised vs a per-agent loop."""
    problem = synthetic_problem(np.random.default_rng(0), K=50, P=8, M=50, objective="lad")
    config = NFLConfig(rho=1.0, step=StepSchedule(kind="constant", eta0=0.5), privacy=PrivacySchedule(phi1=1e-3))
    etas = config.step.etas(1)
    sigma = np.sqrt(config.privacy.variances(problem, config.rho, etas))[0]
    rng = np.random.default_rng(1)
    for runs in (1, 100):
        w_tilde = rng.normal(size=(runs, problem.K, problem.P))
        gamma = config.rho * graph_product(problem.laplacian(), rng.normal(size=w_tilde.shape))
        z = rng.normal(size=w_tilde.shape)

        def vectorised(w_tilde=w_tilde, gamma=gamma, z=z):
            return nfl_round(problem, config.rho, etas[0], sigma, w_tilde, gamma, _Replay(z))

        def looped(runs=runs, w_tilde=w_tilde, gamma=gamma, z=z):
            return [loop_round(problem, config.rho, etas[0], sigma, w_tilde[r], gamma[r], z[r]) for r in range(runs)]

        fast, slow = vectorised(), looped()
        for r in range(runs):
            for a, b in zip((fast[0][r], fast[1][r], fast[2][r]), slow[r], strict=True):
                assert np.allclose(a, b, rtol=1e-12, atol=1e-12)
        t_vec, m_vec = measure(vectorised, repeats)
        t_loop, m_loop = measure(looped, max(3, repeats // (10 if runs > 1 else 1)))
        print(f"zCDP-NFL round, K = {problem.K}, P = {problem.P}, M = {problem.M}, runs = {runs}")
        print(f"  vectorised: {t_vec * 1e3:.3f} ms, peak {m_vec / 2**20:.2f} MiB")
        print(f"  per-agent loop: {t_loop * 1e3:.3f} ms, peak {m_loop / 2**20:.2f} MiB")
        print(f"  time ratio loop / vectorised: {t_loop / t_vec:.1f}x; memory ratio: {m_loop / max(m_vec, 1):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--Ks", default="1000,2000,5000,10000", help="comma-separated K ('' to skip section 1)")
    parser.add_argument("--degree", type=int, default=4)
    parser.add_argument("--dense-max-K", type=int, default=5000, help="time the dense K x K product up to this K")
    parser.add_argument("--skip-loop", action="store_true", help="only section 1")
    args = parser.parse_args()
    if args.Ks:
        scaling([int(v) for v in args.Ks.split(",")], args.degree, args.repeats, args.dense_max_K)
    if not args.skip_loop:
        versus_loop(args.repeats)


if __name__ == "__main__":
    main()
