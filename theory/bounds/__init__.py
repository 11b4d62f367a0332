"""Deterministic bounds stated by the papers (inter-cluster impact, ...)."""

from theory.bounds.intercluster import (
    corollary_single_step_bound,
    intercluster_bound,
    intercluster_bound_recursive,
    intercluster_bound_sum,
)

__all__ = [
    "corollary_single_step_bound",
    "intercluster_bound",
    "intercluster_bound_recursive",
    "intercluster_bound_sum",
]
