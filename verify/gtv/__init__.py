"""Claims of GTV clustered federated learning (seed 002_26677b31336d654c.txt)."""

from verify.papers import SEED_GTV, citer

__all__ = ["SEEDS", "TITLE", "cite"]

#: Report heading.
TITLE = ("GTV clustered FL (SarcheshmehPour, Tian, Zhang, Jung): "
         "Clustered Federated Learning via Generalized Total Variation Minimization")
#: The seed files the paper is stated in.
SEEDS = (SEED_GTV,)
#: ``cite(label, equation="", lines="", seed=...)``: a Citation of the paper.
cite = citer(SEED_GTV)
