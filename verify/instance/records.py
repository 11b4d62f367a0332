"""Records of a check on a user's instance: a hypothesis, one claim's outcome, the whole check.

A claim evaluated on one configuration ends in one of :data:`STATUSES`:

* ``holds`` -- its hypotheses are met and its conclusion holds on the instance (a bound evaluated, a condition
  certified, a short simulation within the claim's tolerance);
* ``violated`` -- its hypotheses are met and its conclusion fails on the instance (the value and the bound say by
  how much);
* ``hypotheses_not_met`` -- a hypothesis the claim needs (a step-size condition, a gradient bound matching the
  calibration) fails on the instance: the guarantee does not cover this configuration;
* ``not_applicable`` -- the claim is about another set-up than the one configured (another privacy schedule,
  another objective): nothing to decide;
* ``not_evaluable`` -- the claim cannot be decided on a user instance (an experiment on the paper's data, a
  statement over a whole parameter space, or an instance beyond what the check computes); the summary says why;
* ``not_converged`` -- a solver stopped at its iteration cap.

Only a claim the project has not refuted decides the exit status of ``fedcheck check`` (a refuted claim is
reported with its on-instance status and decides through its corrected statement): ``violated`` and
``hypotheses_not_met`` give 1, ``not_converged`` gives 3 when nothing is violated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from verify.records import FrozenDict, _jsonable

__all__ = ["DECIDING_STATUSES", "STATUSES", "ClaimOutcome", "Evaluation", "Hypothesis", "InstanceCheck",
           "NotConvergedOnInstance", "UserInstance"]

STATUSES = ("holds", "violated", "hypotheses_not_met", "not_applicable", "not_evaluable", "not_converged")
#: Statuses of a claim that make ``fedcheck check`` exit 1 (on a claim that is not refuted in general).
DECIDING_STATUSES = ("violated", "hypotheses_not_met")


class NotConvergedOnInstance(ArithmeticError):
    """A solver stopped at its iteration cap while evaluating a claim on the instance (exit status 3)."""


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value)


@dataclass(frozen=True, kw_only=True)
class UserInstance:
    """A user's configuration as the checks need it: lower-layer records keyed by name.

    ``paper``: the slug; ``description``: one line (the file and its set-up); ``parts``: name -> record (for
    PAO-Fed ``{"instance": PAOFedInstance, ...}``); ``settings``: plain scalars (iterations, runs, seed, ...).
    """

    paper: str
    description: str
    parts: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.paper:
            raise ValueError("paper must be a non-empty slug, got ''")
        object.__setattr__(self, "parts", FrozenDict(self.parts))
        object.__setattr__(self, "settings", FrozenDict(self.settings))

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}: {type(v).__name__}" for k, v in self.parts.items())
        return f"UserInstance(paper={self.paper!r}, {self.description!r}, parts=[{parts}])"


@dataclass(frozen=True, kw_only=True)
class Hypothesis:
    """One hypothesis of a claim on the instance: its value, the allowed range and whether it is met."""

    name: str
    value: Any
    allowed: str
    met: bool

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("name must be a non-empty string, got ''")
        if not isinstance(self.met, bool):
            raise TypeError(f"met must be a bool, got {self.met!r}")

    def line(self) -> str:
        """``name = value (allowed: range): met`` on one line."""
        return f"{self.name} = {_short(self.value)} (allowed: {self.allowed}): {'met' if self.met else 'NOT met'}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": _jsonable(self.value), "allowed": self.allowed, "met": self.met}


@dataclass(frozen=True, kw_only=True)
class Evaluation:
    """What an on-instance evaluator returns for one claim (the registry adds the claim's text)."""

    status: str
    summary: str
    quantity: str = ""
    value: float | None = None
    bound: float | None = None
    hypotheses: tuple[Hypothesis, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {self.status!r}")
        if not self.summary:
            raise ValueError("summary must be a non-empty string, got ''")
        object.__setattr__(self, "hypotheses", tuple(self.hypotheses))
        object.__setattr__(self, "details", FrozenDict(self.details))


@dataclass(frozen=True, kw_only=True)
class ClaimOutcome:
    """One claim of the paper decided (or not) on the user's instance, with the registry's text and verdict."""

    claim_id: str
    title: str
    citation: str
    expected: str
    evaluation: Evaluation
    corrected_by: str | None = None
    corrects: str | None = None

    @property
    def status(self) -> str:
        return self.evaluation.status

    @property
    def refuted_in_general(self) -> bool:
        """The project has refuted the claim as stated: it never decides the exit status itself."""
        return self.expected == "refuted"

    @property
    def fails(self) -> bool:
        """The instance breaks a hypothesis or a conclusion of a claim that is not refuted in general."""
        return self.status in DECIDING_STATUSES and not self.refuted_in_general

    def line(self) -> str:
        """One line: status, claim id and summary (and the corrected statement of a refuted claim)."""
        text = f"{self.status.upper()}: {self.claim_id}: {self.evaluation.summary}"
        if self.refuted_in_general:
            via = f"; decided through {self.corrected_by}" if self.corrected_by else ""
            text += f" [refuted in general{via}]"
        return text

    def to_json(self) -> dict[str, Any]:
        e = self.evaluation
        return {"claim_id": self.claim_id, "title": self.title, "citation": self.citation,
                "registry_verdict": self.expected, "corrected_by": self.corrected_by, "corrects": self.corrects,
                "status": e.status, "decides_exit": self.fails, "summary": e.summary, "quantity": e.quantity,
                "value": _finite_or_none(e.value), "bound": _finite_or_none(e.bound),
                "hypotheses": [h.to_json() for h in e.hypotheses], "details": _jsonable(e.details)}

    def __repr__(self) -> str:
        return f"ClaimOutcome({self.claim_id!r}, status={self.status!r}, value={e_num(self.evaluation.value)}, " \
               f"bound={e_num(self.evaluation.bound)})"


def e_num(x: float | None) -> str:
    return "None" if x is None else f"{x:.6g}"


def _finite_or_none(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


@dataclass(frozen=True, kw_only=True)
class InstanceCheck:
    """Every claim of one paper on one user instance, and the exit status they give."""

    paper: str
    description: str
    simulate: bool
    outcomes: tuple[ClaimOutcome, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "outcomes", tuple(self.outcomes))

    @property
    def failures(self) -> tuple[ClaimOutcome, ...]:
        """Outcomes that break a claim that is not refuted in general (exit status 1)."""
        return tuple(o for o in self.outcomes if o.fails)

    @property
    def exit_status(self) -> int:
        """1 if a claim is violated or its hypotheses are not met, else 3 if a solver did not converge, else 0."""
        if self.failures:
            return 1
        if any(o.status == "not_converged" for o in self.outcomes):
            return 3
        return 0

    def counts(self) -> dict[str, int]:
        """Outcomes per status (every status, zeros included)."""
        return {s: sum(o.status == s for o in self.outcomes) for s in STATUSES}

    def to_json(self) -> dict[str, Any]:
        """Strict-JSON-ready document (schema ``fedcheck.check/1``; non-finite numbers are null)."""
        return {"schema": "fedcheck.check/1", "paper": self.paper, "instance": self.description,
                "simulate": self.simulate, "exit_status": self.exit_status, "counts": self.counts(),
                "outcomes": [o.to_json() for o in self.outcomes]}

    def __repr__(self) -> str:
        counts = ", ".join(f"{k} {v}" for k, v in self.counts().items() if v)
        return f"InstanceCheck(paper={self.paper!r}, exit_status={self.exit_status}, {counts})"
