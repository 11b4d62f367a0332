r"""The GTV paper's reference code (seed 002_26677b31336d654c.txt; docs/papers/gtv.md): one import for every public
name.

It is split along its seams:

* :mod:`reference_impl.gtv.algorithm`: Algorithm 1 (primal-dual message passing, corrected per
  errata E1-E2 (docs/papers/gtv.md#erratum-e1 to #erratum-e2)), its step sizes and primal update;
* :mod:`reference_impl.gtv.centralized`: the CVXPY ground truth of the primal (16) and the dual (24);
* :mod:`reference_impl.gtv.baselines`: FedAvg, IFCA, the pooled and the oracle cluster-wise solutions, the MSE (41);
* :mod:`reference_impl.gtv.experiments`: one arm of the §5.1-5.2 SBM experiments on one replicate.
"""

from __future__ import annotations

from reference_impl.gtv.algorithm import (
    Algorithm1Run,
    PrimalUpdate,
    preconditioned_norm_squared,
    primal_update,
    run_algorithm1,
    step_sizes,
)
from reference_impl.gtv.baselines import (
    IFCA_INITIALISATIONS,
    fedavg,
    ifca,
    mse,
    oracle_clusterwise,
    pooled_solution,
)
from reference_impl.gtv.centralized import CLARABEL_DEFAULT_TOL, GTVSolution, solve_gtv_cvxpy, solve_gtv_dual_cvxpy
from reference_impl.gtv.experiments import ARMS, sbm_arm_curve, table1_replicate
from reference_impl.gtv.run_report import gtv_arrays_instance, gtv_run_document, gtv_synthetic_instance

__all__ = [
    "ARMS",
    "CLARABEL_DEFAULT_TOL",
    "IFCA_INITIALISATIONS",
    "Algorithm1Run",
    "GTVSolution",
    "PrimalUpdate",
    "fedavg",
    "ifca",
    "mse",
    "oracle_clusterwise",
    "pooled_solution",
    "preconditioned_norm_squared",
    "primal_update",
    "run_algorithm1",
    "sbm_arm_curve",
    "solve_gtv_cvxpy",
    "solve_gtv_dual_cvxpy",
    "step_sizes",
    "table1_replicate",
    "gtv_arrays_instance",
    "gtv_run_document",
    "gtv_synthetic_instance",
]
