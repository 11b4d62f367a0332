"""The logistic primal update (PU) of Algorithm 1 on the GTV digits at the paper's size: the Newton direction by
the r x r Woodbury solve against the d x d Hessian.

Run: .venv/bin/python benchmarks/bench_gtv_digits.py [--repeats N] [--replicate I]
Instance: replicate I (default 0) of Fig. 7's five clusters (:data:`verify.gtv.digits_design.SCALES_FIVE`
thorough: 5 x 20 nodes, r = 10 training images of d = 65 features per node, the seed's steps theta = 1). One PU of
every node from a cold start at v ~ N(0, 0.25 I) (a few damped Newton steps), both directions checked to reach the
same point first; prints the best CPU seconds per PU over the repeats (one BLAS thread). Algorithm 1's ``algorithm1``
arm does about 3 Newton steps per iteration on 3 lambda copies of the graph, R = 50.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from reference_impl.gtv import PrimalUpdate, step_sizes
from reference_impl.gtv.data import digits_split
from verify.gtv.digits_design import SCALES_FIVE


def _cpu(fn, repeats):
    best = np.inf
    for _ in range(repeats):
        start = time.process_time()
        out = fn()
        best = min(best, time.process_time() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--replicate", type=int, default=0)
    args = parser.parse_args()
    scale = SCALES_FIVE["thorough"]
    data = digits_split(np.random.default_rng(args.replicate), pairs=scale.pairs,
                        nodes_per_cluster=scale.nodes_per_cluster, split=scale.split,
                        test_per_cluster=scale.test_per_cluster, gamma=scale.gamma)
    inst = data.instance
    tau, _ = step_sizes(inst, scale.theta)
    v = 0.5 * np.random.default_rng(args.replicate + 1).normal(size=(inst.n, inst.d))
    times, points = {}, {}
    with threadpool_limits(limits=1, user_api="blas"):
        for how in ("woodbury", "hessian"):
            times[how], points[how] = _cpu(lambda how=how: PrimalUpdate(inst, tau, direction=how)(v), args.repeats)
    gap = float(np.abs(points["woodbury"] - points["hessian"]).max())
    print(f"digits, 5 clusters x {scale.nodes_per_cluster} nodes, r = {inst.X.shape[1]}, d = {inst.d}; "
          f"max |z_woodbury - z_hessian| = {gap:.2e}")
    print(f"one PU: Woodbury r x r {1e3 * times['woodbury']:.1f} ms, d x d Hessian {1e3 * times['hessian']:.1f} ms "
          f"({times['hessian'] / times['woodbury']:.1f}x)")


if __name__ == "__main__":
    main()
