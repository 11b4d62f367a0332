"""Claims of the differential-privacy background (thesis ch. 2; Bun & Steinke 2016)."""

from verify.papers import SEED_THESIS, citer

__all__ = ["SEEDS", "TITLE", "cite"]

#: Report heading.
TITLE = "Differential-privacy background (thesis ch. 2; Bun & Steinke 2016)"
#: The seed files the paper is stated in.
SEEDS = (SEED_THESIS,)
#: ``cite(label, equation="", lines="", seed=...)``: a Citation of the paper.
cite = citer(SEED_THESIS)
