"""GTV clustered federated learning (seed 002): instance, operators, Assumptions 1-2, Definition 1, Theorem 2."""

from theory.gtv.clustering import (
    ClusterConstants,
    WellConnectedness,
    boundary_weights,
    chain_condition_boundary_anchor,
    cluster_constants,
    cluster_deviation,
    cluster_oracles,
    deviation_bound_d1,
    deviation_bound_theorem2,
    well_connected,
    well_connected_brute_force,
)
from theory.gtv.instance import LOSSES, PENALTIES, GTVInstance, incidence_matrix
from theory.gtv.operators import (
    DualEvaluation,
    dual_norm,
    dual_objective,
    dual_update,
    duality_gap,
    edge_differences,
    kkt_residuals,
    loss_gradients,
    loss_values,
    penalty_values,
    primal_objective,
    squared_loss_conjugate,
)

__all__ = [
    "LOSSES", "PENALTIES", "ClusterConstants", "DualEvaluation", "GTVInstance", "WellConnectedness",
    "boundary_weights", "chain_condition_boundary_anchor", "cluster_constants", "cluster_deviation", "cluster_oracles",
    "deviation_bound_d1",
    "deviation_bound_theorem2", "dual_norm", "dual_objective", "dual_update", "duality_gap", "edge_differences",
    "incidence_matrix", "kkt_residuals", "loss_gradients", "loss_values", "penalty_values", "primal_objective",
    "squared_loss_conjugate", "well_connected", "well_connected_brute_force",
]
