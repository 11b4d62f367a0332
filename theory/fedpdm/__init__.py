"""FedPDM-DP (FedPDM-DP paper): closed forms of its convergence analysis."""

from theory.fedpdm.convergence import CONDITION_COUNTEREXAMPLE, L_LOWER_SEED, theorem3_conditions, theorem3_constants

__all__ = ["CONDITION_COUNTEREXAMPLE", "L_LOWER_SEED", "theorem3_conditions", "theorem3_constants"]
