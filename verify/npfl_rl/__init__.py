"""Claims of NPFL-RL (seed 004_180cd372987d137b.txt, thesis Chapter 6 and Publication 7)."""

from verify.papers import SEED_THESIS, citer

__all__ = ["SEEDS", "TITLE", "cite"]

#: Report heading.
TITLE = "NPFL-RL (Gauthier, Gogineni, Werner): Networked Personalized Federated Learning Using Reinforcement Learning"
#: The seed files the paper is stated in.
SEEDS = (SEED_THESIS,)
#: ``cite(label, equation="", lines="", seed=...)``: a Citation of the paper.
cite = citer(SEED_THESIS)
