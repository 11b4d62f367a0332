"""Each paper's identity, written once: seed files, what they are and citation helpers.

The seed file names live here and nowhere else. Every paper sub-package ``verify/<paper>/`` exposes
``TITLE`` (its report heading), ``SEEDS`` (the seed files it is stated in) and ``cite(label, ...)``
built with :func:`citer`; the report reads the title with :func:`verify.registry.paper_title` (which lives with the
registry, the module that imports the paper packages, so that this module, which they import, imports none of them)
and shows a citation as "paper, label, equation" with the seed file as a detail (:func:`citation_parts`, from
:data:`SEED_DOCUMENTS`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from verify.records import Citation

__all__ = ["SEED_DOCUMENTS", "SEED_FEDPDM", "SEED_GTV", "SEED_PGFL_A", "SEED_PGFL_J", "SEED_THESIS", "SeedDocument",
           "citation_parts", "citer"]

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


@dataclass(frozen=True, kw_only=True)
class SeedDocument:
    """What a seed file is: the short name a citation uses and the document's own title."""

    name: str
    title: str

    def __post_init__(self) -> None:
        if not self.name or not self.title:
            raise ValueError(f"name and title must be non-empty, got name={self.name!r}, title={self.title!r}")


_PGFL_TITLE = "Personalized Graph Federated Learning with Differential Privacy (Gauthier, Gogineni, Werner, Huang, Kuh)"
#: Seed file -> the document it holds (the two PGFL texts number their equations differently).
SEED_DOCUMENTS: dict[str, SeedDocument] = {
    SEED_PGFL_A: SeedDocument(name="PGFL paper (text A)", title=_PGFL_TITLE),
    SEED_FEDPDM: SeedDocument(name="FedPDM-DP paper", title=(
        "Privacy-Preserving Federated Primal-Dual Learning for Non-Convex Problems with Non-Smooth Regularization "
        "(Li, Huang, Wang, Chi, Quek)")),
    SEED_GTV: SeedDocument(name="GTV paper", title=(
        "Clustered Federated Learning via Generalized Total Variation Minimization (SarcheshmehPour, Tian, Zhang, "
        "Jung)")),
    SEED_PGFL_J: SeedDocument(name="PGFL paper (journal text)", title=_PGFL_TITLE),
    SEED_THESIS: SeedDocument(name="Gauthier's thesis", title=(
        "On Enabling Scalable, Personalized, and Private Federated Learning (F. Gauthier, doctoral thesis, NTNU "
        "2024)")),
}


def citation_parts(citation: Citation) -> tuple[str, str, str]:
    """A citation as a reader reads it: ``(main, detail, title)``.

    ``main`` is "paper, label, eq. (n)" (the paper's short name from :data:`SEED_DOCUMENTS`, or the external
    source), ``detail`` names the seed file and its lines ("" for an external source without lines), ``title`` is
    the document's full title ("" when unknown).

    >>> citation_parts(Citation(seed=SEED_GTV, label="Theorem 2", equation="(18)", lines="300-310"))[:2]
    ('GTV paper, Theorem 2, eq. (18)', 'seed file 002_26677b31336d654c.txt, lines 300-310')
    """
    document = SEED_DOCUMENTS.get(citation.seed)
    if citation.external:
        source, title = citation.external, ""
    elif document is not None:
        source, title = document.name, document.title
    else:
        source, title = f"seed file {citation.seed}", ""
    main = ", ".join([source, citation.label] + ([f"eq. {citation.equation}"] if citation.equation else []))
    lines = ""
    if citation.lines:
        lines = f"{'lines' if any(c in citation.lines for c in '-,') else 'line'} {citation.lines}"
    detail = ", ".join(part for part in ((f"seed file {citation.seed}" if citation.seed and document else ""),
                                         lines) if part)
    return main, detail, title


def citer(seed: str) -> Callable[..., Citation]:
    """A ``cite(label, equation="", lines="", seed=...)`` that cites ``seed`` unless told otherwise."""

    def cite(label: str, equation: str = "", lines: str = "", *, seed: str = seed) -> Citation:
        return Citation(seed=seed, label=label, equation=equation, lines=lines)

    cite.__doc__ = f"A citation of seed {seed} (or of ``seed=``): the paper's label, equation and lines."
    return cite
