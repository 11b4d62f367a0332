"""Claims of zCDP-NFL (seed 004_180cd372987d137b.txt, thesis Chapter 3 and Publication 2)."""

from verify.papers import SEED_THESIS, citer

__all__ = ["SEEDS", "TITLE", "cite"]

#: Report heading.
TITLE = ("zCDP-NFL (Gauthier, Gratton, Venkategowda, Werner): "
         "Private Networked Federated Learning for Nonsmooth Objectives")
#: The seed files the paper is stated in.
SEEDS = (SEED_THESIS,)
#: ``cite(label, equation="", lines="", seed=...)``: a Citation of the paper.
cite = citer(SEED_THESIS)
