"""PAO-Fed (seed 004_180cd372987d137b.txt, Chapter 4 / Publication P4)."""

from verify.papers import SEED_THESIS, citer

__all__ = ["SEEDS", "TITLE", "cite"]

#: Report heading.
TITLE = ("PAO-Fed (Gauthier, Gogineni, Werner, Huang, Kuh): "
         "Asynchronous Online Federated Learning with Reduced Communication Requirements")
#: The seed files the paper is stated in.
SEEDS = (SEED_THESIS,)
#: ``cite(label, equation="", lines="", seed=...)``: a Citation of the paper.
cite = citer(SEED_THESIS)
