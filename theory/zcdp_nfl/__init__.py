"""zCDP-NFL (thesis ch. 3 / Publication 2): the network (matrix) form and the terms of Lemma II / Theorem II."""

from theory.zcdp_nfl.network import (
    BOUND_VARIANTS,
    NetworkMatrices,
    lemma2_sides,
    network_matrices,
    network_residuals,
    theorem2_sides,
)

__all__ = ["BOUND_VARIANTS", "NetworkMatrices", "lemma2_sides", "network_matrices", "network_residuals",
           "theorem2_sides"]
