"""Checks of FedPDM-DP (seed 001_322f61f9958f64f9.txt)."""

from verify.papers import SEED_FEDPDM, citer

__all__ = ["SEEDS", "TITLE", "cite"]

#: Report heading.
TITLE = ("FedPDM-DP (Li, Huang, Wang, Chi, Quek): "
         "Privacy-Preserving Federated Primal-Dual Learning for Non-Convex Problems with Non-Smooth Regularization")
#: The seed files the paper is stated in.
SEEDS = (SEED_FEDPDM,)
#: ``cite(label, equation="", lines="", seed=...)``: a Citation of the paper.
cite = citer(SEED_FEDPDM)
