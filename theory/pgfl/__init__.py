"""PGFL's problem record and closed forms (seeds 000 / 003, thesis ch. 5)."""

from theory.pgfl.optima import (
    cluster_gradient_norm,
    cluster_optima,
    eta_cluster_distance,
    fixed_point_tau0,
)
from theory.pgfl.problem import PGFLProblem

__all__ = ["PGFLProblem", "cluster_gradient_norm", "cluster_optima", "eta_cluster_distance", "fixed_point_tau0"]
