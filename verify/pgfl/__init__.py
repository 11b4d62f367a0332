"""PGFL and private PGFL (seeds 000 and 003, thesis ch. 5)."""

from verify.papers import SEED_PGFL_A, SEED_PGFL_J, SEED_THESIS, citer

__all__ = ["SEEDS", "TITLE", "cite"]

#: Report heading.
TITLE = "PGFL (Gauthier, Gogineni, Werner, Huang, Kuh): Personalized Graph Federated Learning with Differential Privacy"
#: The seed files the paper is stated in.
SEEDS = (SEED_PGFL_A, SEED_PGFL_J, SEED_THESIS)
#: ``cite(label, equation="", lines="", seed=...)``: a Citation of the paper.
cite = citer(SEED_PGFL_A)
