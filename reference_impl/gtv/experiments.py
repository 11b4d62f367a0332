r"""Building blocks of the GTV paper's experiments (docs/papers/gtv.md#exp-table1, docs/papers/gtv.md#exp-several): one
arm on one replicate.

Replicate ``seed`` fixes graph, data and every random draw, so all arms of one seed see the same instance
(common random numbers).
"""

from __future__ import annotations

import numpy as np

from reference_impl.gtv.algorithm import run_algorithm1
from reference_impl.gtv.baselines import fedavg, ifca, mse, oracle_clusterwise, pooled_solution

__all__ = ["ARMS", "sbm_arm_curve", "table1_replicate"]


#: Arms of the section 5.1 / 5.2 comparisons (docs/papers/gtv.md#choice-baselines): Algorithm 1, server FedAvg, IFCA,
#: the pooled LS fixed point of FedAvg and the oracle cluster-wise solution (FedAvgC's fixed point).
ARMS = ("algorithm1", "fedavg", "ifca", "pooled", "oracle")


def sbm_arm_curve(arm: str, seed: int, *, iterations: int = 2000, theta: float = 1.0, record_every: int = 10,
                  local_steps: int = 5, **sbm) -> tuple[np.ndarray, np.ndarray]:
    r"""One arm on one replicate of the SBM experiment (§5.1; §5.2 with ``sizes`` of k clusters): the MSE (41)
    curve ``(iterations_or_rounds, mse)``. Replicate ``seed`` fixes graph, data and IFCA's initialisation, so all
    arms of one seed see the same instance (common random numbers). ``pooled`` and ``oracle`` are constant curves.
    Algorithm 1 uses the seed's steps unless ``theta`` says otherwise (the paper's R = 1000 with θ = 1 has not
    converged: erratum E9 (docs/papers/gtv.md#erratum-e9)). ``sbm`` overrides
    :func:`reference_impl.gtv.data.sbm_instance` keywords."""
    from reference_impl.gtv.data import sbm_instance

    if arm not in ARMS:
        raise ValueError(f"arm must be one of {', '.join(ARMS)}, got {arm!r}")
    rng = np.random.default_rng(seed)
    inst, w_true = sbm_instance(rng, **sbm)
    arm_rng = np.random.default_rng([seed, 1])
    if arm == "algorithm1":
        run = run_algorithm1(inst, theta=theta, max_iterations=iterations, tol=0.0, record_every=record_every,
                             monitor=lambda w: mse(w, w_true))
        return run.objective_iterations, run.meta["monitor"]
    if arm in ("pooled", "oracle"):
        w = pooled_solution(inst) if arm == "pooled" else oracle_clusterwise(inst)
        return np.array([0, iterations]), np.full(2, mse(w, w_true))
    curve = []

    def record(w):
        curve.append(mse(w, w_true))
    if arm == "fedavg":
        fedavg(inst, rounds=iterations, local_steps=local_steps, monitor=record)
    else:
        ifca(inst, arm_rng, k=int(inst.clusters.max()) + 1, rounds=iterations, local_steps=local_steps, monitor=record)
    return np.arange(1, iterations + 1), np.array(curve)


def table1_replicate(seed: int, *, theta: float = 10.0, max_iterations: int = 3000, tol: float = 1e-9,
                     baseline_rounds: int = 200, **sbm) -> dict:
    r"""One replicate of Table I (§5.1): Algorithm 1 (nLasso, λ = 1e-2), FedAvg, the pooled LS fixed point, IFCA
    and the oracle cluster-wise solution on the paper's SBM; returns the MSE (41) of each method and the iterations
    Algorithm 1 needed. ``sbm`` overrides :func:`reference_impl.gtv.data.sbm_instance` keywords."""
    from reference_impl.gtv.data import sbm_instance

    rng = np.random.default_rng(seed)
    inst, w_true = sbm_instance(rng, **sbm)
    run = run_algorithm1(inst, theta=theta, max_iterations=max_iterations, tol=tol, record_every=0)
    k = int(inst.clusters.max()) + 1
    return {"algorithm1": mse(run.w, w_true), "algorithm1_iterations": run.iterations,
            "algorithm1_converged": run.converged,
            "fedavg": mse(fedavg(inst, rounds=baseline_rounds), w_true),
            "pooled": mse(pooled_solution(inst), w_true),
            "ifca": mse(ifca(inst, rng, k=k, rounds=baseline_rounds), w_true),
            "oracle": mse(oracle_clusterwise(inst), w_true),
            "inter_cluster_edges": int(np.sum(inst.clusters[inst.edges[:, 0]] != inst.clusters[inst.edges[:, 1]]))}
