"""Algorithm 1 of the GTV paper on the paper's SBM: vectorised vs a per-node / per-edge loop, and vs CVXPY.

Run: .venv/bin/python benchmarks/bench_gtv.py [--repeats N] [--cvxpy-size K]
Instance: section 5.1 (2 x 100 nodes, p_in = 0.5, p_out = 0.01, d = 100, m_i = 10, lambda = 1e-2, nLasso),
seed 0. Prints, all measured in this process:

* one iteration: the vectorised reference (``reference_impl.gtv``) vs the obvious message-passing loop (a Python
  loop over nodes for steps 3-4 and over edges for steps 7-8), checked equal first;
* the whole solve: Algorithm 1 (theta = 10) to the fixed-point residual 1e-12 vs CVXPY/Clarabel on the same
  problem (16), checked to reach the same objective. ``--cvxpy-size K`` uses 2 x K nodes with d = K (m_i = 10,
  p_in, p_out, lambda as in the paper) for the CVXPY comparison; default K = 40, since at the paper size
  (K = 100: 5026 second-order cones of dimension 101) CVXPY/Clarabel had not finished after 17 minutes and
  2.6 GB on a loaded 2-core machine (K = 100 runs it anyway).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _timing import measure  # benchmarks/_timing.py (scripts run from this folder's path)
from threadpoolctl import threadpool_limits

from reference_impl.gtv import PrimalUpdate, run_algorithm1, solve_gtv_cvxpy, step_sizes
from reference_impl.gtv.data import sbm_instance
from theory.gtv import dual_update, primal_objective


def loop_iteration(inst, w, u, tau, sigma, Minv, b):
    """Steps 3-8 of Algorithm 1 written node by node and edge by edge (the message-passing
    form, docs/papers/gtv.md#algorithm-1)."""
    incident = [[] for _ in range(inst.n)]
    for e, (i, j) in enumerate(inst.edges):
        incident[i].append((e, 1.0))
        incident[j].append((e, -1.0))
    w_new = np.empty_like(w)
    for i in range(inst.n):
        flow = np.zeros(inst.d)
        for e, sign in incident[i]:
            flow += sign * u[e]
        v = w[i] - tau[i] * flow
        w_new[i] = Minv[i] @ (b[i] + v / tau[i])
    u_new = np.empty_like(u)
    for e, (i, j) in enumerate(inst.edges):
        z = u[e] + sigma[e] * (2 * (w_new[i] - w_new[j]) - (w[i] - w[j]))
        cap = inst.lam * inst.A[e]
        norm = np.linalg.norm(z)
        u_new[e] = z if norm <= cap else z * (cap / norm)
    return w_new, u_new


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cvxpy-size", type=int, default=40)
    args = parser.parse_args()
    inst, _ = sbm_instance(np.random.default_rng(0))
    tau, sigma = step_sizes(inst, 10.0)
    rng = np.random.default_rng(1)
    w, u = rng.normal(size=(inst.n, inst.d)), 0.01 * rng.normal(size=(inst.n_edges, inst.d))
    H, b, _ = inst.quadratic
    with threadpool_limits(limits=1, user_api="blas"):
        Minv = np.linalg.inv(H + (1.0 / tau)[:, None, None] * np.eye(inst.d))
        pu = PrimalUpdate(inst, tau)
        DT = inst.incidence.T.tocsr()
        head, tail = inst.edges[:, 0], inst.edges[:, 1]

        def vectorised():
            w_new = pu(w - tau[:, None] * (DT @ u))
            z = 2 * w_new - w
            return w_new, dual_update(inst, u + sigma[:, None] * (z[head] - z[tail]), sigma)

        def looped():
            return loop_iteration(inst, w, u, tau, sigma, Minv, b)

        fast, slow = vectorised(), looped()
        diff = max(np.abs(fast[0] - slow[0]).max(), np.abs(fast[1] - slow[1]).max())
        assert diff < 1e-9, diff
        t_vec, m_vec = measure(vectorised, args.repeats * 4)
        t_loop, m_loop = measure(looped, args.repeats)
        print(f"GTV Algorithm 1, paper SBM: n = {inst.n}, |E| = {inst.n_edges}, d = {inst.d}, m_i = 10 "
              f"(max diff {diff:.1e})")
        print(f"one iteration: vectorised {t_vec * 1e3:.2f} ms (peak {m_vec / 2**20:.1f} MiB), per-node/per-edge loop "
              f"{t_loop * 1e3:.1f} ms (peak {m_loop / 2**20:.1f} MiB); loop / vectorised = {t_loop / t_vec:.1f}x")

    k = args.cvxpy_size
    cinst = inst if k == 100 else sbm_instance(np.random.default_rng(0), sizes=(k, k), d=k)[0]
    t0 = time.perf_counter()
    run = run_algorithm1(cinst, theta=10.0, max_iterations=20_000, tol=1e-12, record_every=0)
    t_alg = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = solve_gtv_cvxpy(cinst, solver_tol=1e-10)
    t_cvx = time.perf_counter() - t0
    p_alg, p_cvx = primal_objective(cinst, run.w), primal_objective(cinst, ref.w)
    print(f"solve (n = {cinst.n}, d = {cinst.d}, |E| = {cinst.n_edges}): Algorithm 1 {run.iterations} iterations "
          f"{t_alg:.2f} s, CVXPY/Clarabel (tol {ref.solver_tol:g}) {t_cvx:.2f} s; CVXPY / Algorithm 1 = "
          f"{t_cvx / t_alg:.1f}x; objectives {p_alg:.12g} vs {p_cvx:.12g} "
          f"(relative {(p_alg - p_cvx) / abs(p_cvx):.1e})")


if __name__ == "__main__":
    main()
