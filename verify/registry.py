"""The single registry of claims.

Every module under a paper sub-package of ``verify`` (``verify/pgfl/``, ``verify/dp/``, ...)
whose name does not start with ``test_`` or ``_`` contributes the claims of its module-level ``CLAIMS`` tuple and
those of the experiments in its ``EXPERIMENTS`` tuple (:class:`verify.harness.Experiment` declarations, each of
which builds its claim). Nothing about a claim is written anywhere else: the tests in ``verify/`` and the report
both read them from here.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Iterable, Sequence

import verify
from verify.harness import Experiment, validate_families
from verify.records import Claim, Verdict

__all__ = ["all_claims", "all_experiments", "get_claim", "paper_short_title", "paper_title", "papers", "select_claims",
           "validate_registry"]

#: Sub-packages of ``verify`` that hold no claims and are not imported by the discovery (the Hypothesis strategies).
_NOT_PAPERS = {"conftest", "harness", "instance", "strategies"}  # sub-packages that hold no claims


def _claim_modules() -> list[str]:
    names = []
    for pkg in sorted(pkgutil.iter_modules(verify.__path__), key=lambda m: m.name):
        if not pkg.ispkg or pkg.name in _NOT_PAPERS:
            continue
        sub = importlib.import_module(f"verify.{pkg.name}")
        for mod in sorted(pkgutil.iter_modules(sub.__path__), key=lambda m: m.name):
            if not mod.ispkg and not mod.name.startswith(("test_", "_", "conftest")):
                names.append(f"verify.{pkg.name}.{mod.name}")
    return names


def validate_registry(claims: Sequence[Claim]) -> None:
    """Raise ValueError if ids repeat or corrected/corrects links are dangling or one-sided."""
    by_id: dict[str, Claim] = {}
    for claim in claims:
        if claim.id in by_id:
            raise ValueError(f"claim id {claim.id!r} is declared twice")
        by_id[claim.id] = claim
    for claim in claims:
        if claim.corrected_by is not None:
            fix = by_id.get(claim.corrected_by)
            if fix is None:
                raise ValueError(f"{claim.id}: corrected_by names unknown claim {claim.corrected_by!r}")
            if fix.corrects != claim.id:
                raise ValueError(f"{fix.id}: must set corrects={claim.id!r} (it is {claim.id}'s correction)")
            if fix.expected is not Verdict.CONFIRMED:
                raise ValueError(f"{fix.id}: a corrected statement must be expected to be confirmed")
        if claim.corrects is not None:
            original = by_id.get(claim.corrects)
            if original is None or original.corrected_by != claim.id:
                raise ValueError(f"{claim.id}: corrects={claim.corrects!r} but that claim does not name it")


@functools.lru_cache(maxsize=1)
def all_experiments() -> tuple[Experiment, ...]:
    """Every registered experiment declaration (the modules' ``EXPERIMENTS``), sorted by claim id; ValueError if a
    family's declared members and its declared experiments differ."""
    experiments: list[Experiment] = []
    for name in _claim_modules():
        declared = getattr(importlib.import_module(name), "EXPERIMENTS", ())
        for experiment in declared:
            if not isinstance(experiment, Experiment):
                raise TypeError(f"{name}.EXPERIMENTS must contain Experiment declarations, got {experiment!r}")
            if experiment.module != name:
                raise ValueError(f"{name}.EXPERIMENTS lists {experiment.claim_id}, declared in {experiment.module}")
        experiments.extend(declared)
    experiments.sort(key=lambda e: e.claim_id)
    validate_families(experiments)
    return tuple(experiments)


@functools.lru_cache(maxsize=1)
def all_claims() -> tuple[Claim, ...]:
    """Every registered claim, sorted by id."""
    claims: list[Claim] = []
    for name in _claim_modules():
        module = importlib.import_module(name)
        declared = getattr(module, "CLAIMS", ())
        for claim in declared:
            if not isinstance(claim, Claim):
                raise TypeError(f"{name}.CLAIMS must contain Claim records, got {claim!r}")
        claims.extend(declared)
    claims.extend(experiment.claim for experiment in all_experiments())
    claims.sort(key=lambda c: c.id)
    validate_registry(claims)
    return tuple(claims)


def get_claim(claim_id: str) -> Claim:
    """The claim with this id; ValueError naming the known ids otherwise."""
    for claim in all_claims():
        if claim.id == claim_id:
            return claim
    known = ", ".join(c.id for c in all_claims())
    raise ValueError(f"claim_id must be a registered claim ({known}), got {claim_id!r}")


def select_claims(prefixes: Iterable[str] | None = None) -> tuple[Claim, ...]:
    """Claims whose id equals a prefix or starts with ``prefix + '.'`` (all claims if none given).

    Raises ValueError naming a prefix that matches nothing.
    """
    claims = all_claims()
    prefixes = list(prefixes or [])
    if not prefixes:
        return claims
    chosen = []
    for prefix in prefixes:
        matched = [c for c in claims if c.id == prefix or c.id.startswith(prefix.rstrip(".") + ".")]
        if not matched:
            raise ValueError(f"{prefix!r} matches no claim id (papers: {', '.join(papers())})")
        chosen.extend(c for c in matched if c not in chosen)
    return tuple(sorted(chosen, key=lambda c: c.id))


def papers() -> tuple[str, ...]:
    """Paper keys that have at least one claim, sorted."""
    return tuple(sorted({c.paper for c in all_claims()}))


def paper_title(paper: str) -> str:
    """The report heading of ``paper``: ``verify.<paper>.TITLE``, or the id itself if it has none."""
    try:
        module = importlib.import_module(f"verify.{paper}")
    except ModuleNotFoundError:
        return paper
    return str(getattr(module, "TITLE", paper))


def paper_short_title(paper: str) -> str:
    """The paper's name for a narrow table column: its :func:`paper_title` up to the first " (" (the rest, e.g.
    "(thesis ch. 3, Publication 2)", is the heading's detail)."""
    title = paper_title(paper)
    short = title.split(" (", 1)[0].strip()
    return short or title
