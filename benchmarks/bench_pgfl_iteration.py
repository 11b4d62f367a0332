"""One PGFL iteration at the paper's size: vectorised reference vs a straightforward per-client loop.

Run: .venv/bin/python benchmarks/bench_pgfl_iteration.py [--repeats N]
Prints the time and peak-memory ratios (loop / vectorised) measured in this process, after checking
that both produce the same iterate. Sizes: S = 10 servers, 15 clients per server, d = 60, Q = 3
(docs/papers/pgfl.md#choice-regression-data), Algorithm 1, tau = 0.4, ridge.
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import measure  # benchmarks/_timing.py (scripts run from this folder's path)

from reference_impl.pgfl import PGFLConfig, client_solver, initial_state, step, synthetic_regression


def loop_iteration(problem, config, w_servers, phi):
    """Algorithm 1, one iteration, written the obvious way: Python loops over clients, groups, servers."""
    S, Q, d, rho = problem.S, problem.n_clusters, problem.d, config.rho
    w = np.empty((problem.K, d))
    for k in range(problem.K):
        s, q = problem.client_server[k], problem.client_cluster[k]
        D = problem.X[k].shape[0]
        A = (2.0 / D * problem.X[k].T @ problem.X[k]
             + (2.0 * problem.lam / problem.clients_per_server[k] + rho) * np.eye(d))
        b = 2.0 / D * problem.X[k].T @ problem.y[k] + phi[k] + rho * w_servers[s, q]
        w[k] = np.linalg.solve(A, b)
    tilde = np.zeros((S, Q, d))
    defined = np.zeros((S, Q), dtype=bool)
    for s in range(S):
        for q in range(Q):
            members = [k for k in range(problem.K) if problem.client_server[k] == s and problem.client_cluster[k] == q]
            if members:
                tilde[s, q] = np.mean([w[k] - phi[k] / rho for k in members], axis=0)
                defined[s, q] = True
    hat = np.zeros((S, Q, d))
    for s in range(S):
        neighbours = [s] + [p for p in range(S) if problem.adjacency[s, p]]
        for q in range(Q):
            vals = [tilde[p, q] for p in neighbours if defined[p, q]]
            hat[s, q] = np.mean(vals, axis=0) if vals else 0.0
    tau = config.tau(1)
    new_servers = np.empty_like(hat)
    for s in range(S):
        for q in range(Q):
            others = [hat[s, r] for r in range(Q) if r != q]
            new_servers[s, q] = (1 - tau) * hat[s, q] + tau * np.mean(others, axis=0)
    new_phi = phi.copy()
    for k in range(problem.K):
        new_phi[k] += rho * (new_servers[problem.client_server[k], problem.client_cluster[k]] - w[k])
    return new_servers, new_phi


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    problem = synthetic_regression(np.random.default_rng(0))
    config = PGFLConfig(rho=0.25 * problem.max_curvature, taus=(0.4,))
    rng = np.random.default_rng(1)
    state = initial_state(problem, 1)
    state = type(state)(**{**state.__dict__, "phi": rng.standard_normal(state.phi.shape),
                           "w_servers": rng.standard_normal(state.w_servers.shape)})
    noise = np.zeros((1, problem.K, problem.d))
    selected = np.ones((1, problem.K), dtype=bool)

    solve = client_solver(problem, config.rho)  # factorised once per run by run_pgfl

    def vectorised():
        return step(problem, config, solve, state, 1, noise, selected)

    def setup():
        return client_solver(problem, config.rho)

    def looped():
        return loop_iteration(problem, config, state.w_servers[0], state.phi[0])

    fast, slow = vectorised(), looped()
    assert np.allclose(fast.w_servers[0], slow[0], rtol=1e-10, atol=1e-12)
    assert np.allclose(fast.phi[0], slow[1], rtol=1e-10, atol=1e-12)
    t_vec, m_vec = measure(vectorised, args.repeats)
    t_loop, m_loop = measure(looped, args.repeats)
    t_setup, _ = measure(setup, max(3, args.repeats // 4))
    print(f"PGFL iteration, S = {problem.S}, K = {problem.K}, d = {problem.d}, Q = {problem.n_clusters}")
    print(f"vectorised: {t_vec * 1e3:.2f} ms, peak {m_vec / 2**20:.1f} MiB")
    print(f"per-client loop: {t_loop * 1e3:.2f} ms, peak {m_loop / 2**20:.1f} MiB")
    print(f"one-off per run (client matrices, vectorised): {t_setup * 1e3:.2f} ms")
    print(f"time ratio loop / vectorised: {t_loop / t_vec:.1f}x; memory ratio: {m_loop / max(m_vec, 1):.2f}x")
    print(f"over 300 iterations, setup included: {300 * t_loop / (300 * t_vec + t_setup):.1f}x")


if __name__ == "__main__":
    main()
