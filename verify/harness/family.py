"""Experiment families: the claims that share a family-wise error, declared with their members.

The figure-level statements of one paper are one family with family-wise error :data:`FAMILY_ALPHA`, split equally
over its declared members (Bonferroni): a claim's alpha is ``FAMILY_ALPHA / family.size``. The membership is
written down, not counted from whatever happens to be imported, so a claim's alpha never depends on which other
claims ran (``fedcheck report --only`` reproduces every number), adding a claim to one family changes no other
family's alpha, and :func:`validate_families` refuses a family whose declared members and declared claims differ.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from verify.tolerance import RECORDED_ALPHA

__all__ = ["FAMILY_ALPHA", "Family", "validate_families"]

#: Family-wise error of one family of experiment claims (figure-level statements).
FAMILY_ALPHA = RECORDED_ALPHA

_SLUG = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Family:
    """A family of experiment claims that share :data:`FAMILY_ALPHA`.

    Attributes
    ----------
    paper : str
        The paper's slug; every member's id starts with ``paper + "."``.
    name : str
        What the family is (shown nowhere but in errors; unique per paper).
    members : tuple of str
        The claim ids of the family, each declared once by an experiment naming this family.
    """

    paper: str
    name: str
    members: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "members", tuple(self.members))
        if not (isinstance(self.paper, str) and _SLUG.match(self.paper)):
            raise ValueError(f"paper must be a paper slug like 'pgfl', got {self.paper!r}")
        if not (isinstance(self.name, str) and self.name):
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if not self.members:
            raise ValueError(f"{self.paper} family {self.name!r}: members must name at least one claim id")
        repeated = sorted({m for m in self.members if self.members.count(m) > 1})
        if repeated:
            raise ValueError(f"{self.paper} family {self.name!r}: members are listed twice: {repeated}")
        strangers = [m for m in self.members if not (isinstance(m, str) and m.startswith(self.paper + "."))]
        if strangers:
            raise ValueError(f"{self.paper} family {self.name!r}: members must be claim ids of paper {self.paper!r}, "
                             f"got {strangers}")

    @property
    def size(self) -> int:
        """The number of declared members."""
        return len(self.members)

    @property
    def alpha(self) -> float:
        """Each member's alpha: ``FAMILY_ALPHA / size``."""
        return FAMILY_ALPHA / self.size


def validate_families(experiments: Iterable) -> None:
    """Raise ValueError if a family's declared members differ from the experiments declared in it.

    ``experiments``: every declared experiment (objects with ``claim_id`` and ``family``). A family must list exactly
    the claims that name it; two different family records may not share a paper and name.
    """
    declared: dict[tuple[str, str], list] = {}
    records: dict[tuple[str, str], Family] = {}
    for experiment in experiments:
        family = experiment.family
        key = (family.paper, family.name)
        if records.setdefault(key, family) != family:
            raise ValueError(f"{family.paper} family {family.name!r} is declared twice with different members")
        declared.setdefault(key, []).append(experiment.claim_id)
    for key, ids in declared.items():
        family = records[key]
        unlisted = sorted(set(ids) - set(family.members))
        undeclared = sorted(set(family.members) - set(ids))
        if unlisted or undeclared:
            raise ValueError(f"{family.paper} family {family.name!r}: declared members and declared claims differ "
                             f"(claims not listed as members: {unlisted}; members without a declared claim: "
                             f"{undeclared})")
