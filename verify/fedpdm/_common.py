"""Shared pieces of the FedPDM-DP checks: the seed file and Theorem 1's citations."""

from __future__ import annotations

from verify.records import Citation

__all__ = ["CITE_THEOREM1", "SEED"]

#: Li, Huang, Wang, Chi, Quek, "Privacy-preserving federated primal-dual learning for non-convex
#: problems with non-smooth regularization" (docs/papers/fedpdm.md).
SEED = "001_322f61f9958f64f9.txt"

#: Theorem 1 and the local update it bounds (the claims of theorem1_sensitivity and theorem1_history).
CITE_THEOREM1 = (Citation(seed=SEED, label="Theorem 1", equation="(18)-(19)", lines="187-195"),
                 Citation(seed=SEED, label="local update", equation="(10a)-(10d)", lines="114-120"))
