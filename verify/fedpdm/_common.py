"""Shared pieces of the FedPDM-DP checks: the seed file."""

from __future__ import annotations

__all__ = ["SEED"]

#: Li, Huang, Wang, Chi, Quek, "Privacy-preserving federated primal-dual learning for non-convex
#: problems with non-smooth regularization" (shared/spec/fedpdm_dp.md).
SEED = "001_322f61f9958f64f9.txt"
