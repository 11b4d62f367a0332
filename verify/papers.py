"""Each paper's identity, written once: seed files, report titles and citation helpers.

The seed file names live here and nowhere else. Every paper sub-package ``verify/<paper>/`` exposes
``TITLE`` (its report heading), ``SEEDS`` (the seed files it is stated in) and ``cite(label, ...)``
built with :func:`citer`; the report reads the title with :func:`paper_title`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from verify.records import Citation

__all__ = ["SEED_FEDPDM", "SEED_GTV", "SEED_PGFL_A", "SEED_PGFL_J", "SEED_THESIS", "citer", "paper_title"]

#: PGFL, the cleaner version (seed 000).
SEED_PGFL_A = "000_133b71fd0aa99eb4.txt"
#: FedPDM-DP (seed 001).
SEED_FEDPDM = "001_322f61f9958f64f9.txt"
#: GTV clustered federated learning (seed 002).
SEED_GTV = "002_26677b31336d654c.txt"
#: PGFL, the journal version (seed 003; numbers equations differently from 000).
SEED_PGFL_J = "003_944125634f6cc0f2.txt"
#: The thesis: zCDP-NFL ch. 3, PAO-Fed ch. 4, PGFL ch. 5, NPFL-RL ch. 6 (seed 004).
SEED_THESIS = "004_180cd372987d137b.txt"


def citer(seed: str) -> Callable[..., Citation]:
    """A ``cite(label, equation="", lines="", seed=...)`` that cites ``seed`` unless told otherwise."""

    def cite(label: str, equation: str = "", lines: str = "", *, seed: str = seed) -> Citation:
        return Citation(seed=seed, label=label, equation=equation, lines=lines)

    cite.__doc__ = f"A citation of seed {seed} (or of ``seed=``): the paper's label, equation and lines."
    return cite


def paper_title(paper: str) -> str:
    """The report heading of ``paper``: ``verify.<paper>.TITLE``, or the id itself if it has none."""
    try:
        module = importlib.import_module(f"verify.{paper}")
    except ModuleNotFoundError:
        return paper
    return str(getattr(module, "TITLE", paper))
