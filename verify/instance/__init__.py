"""Claims decided on a user's own instance: the public checking API behind ``fedcheck check CONFIG.toml``.

One module per paper (``verify/instance/<slug>.py``) holds one small function per claim id that can be evaluated
on a user's configuration, registered with :func:`evaluates`; every other claim of the paper gets the module's
reason why it cannot be (``not_evaluable(claim)``). The claim's title, citation and verdict come from the claim
registry (:mod:`verify.registry`), never written twice. :func:`check_instance` runs them all on a
:class:`UserInstance` and returns an :class:`InstanceCheck` whose ``exit_status`` is the command's.

The statuses and the exit rule are in :mod:`verify.instance.records`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from verify.instance._common import evaluates
from verify.instance.records import (
    DECIDING_STATUSES,
    STATUSES,
    ClaimOutcome,
    Evaluation,
    Hypothesis,
    InstanceCheck,
    NotConvergedOnInstance,
    UserInstance,
)

__all__ = ["DECIDING_STATUSES", "PAPERS", "STATUSES", "CheckOptions", "ClaimOutcome", "Evaluation", "Hypothesis",
           "InstanceCheck", "NotConvergedOnInstance", "UserInstance", "check_instance", "evaluates",
           "evaluators"]

#: Paper slug -> module of its on-instance evaluators.
PAPERS = {slug: f"verify.instance.{slug}" for slug in ("pgfl", "paofed", "zcdp_nfl", "gtv", "fedpdm", "npfl_rl")}


@dataclass(frozen=True, kw_only=True)
class CheckOptions:
    """How claims are evaluated: ``simulate`` (run the short simulations a claim needs) and the root ``seed``."""

    simulate: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.simulate, bool):
            raise TypeError(f"simulate must be a bool, got {self.simulate!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {self.seed!r}")


Evaluator = Callable[[UserInstance, CheckOptions], Evaluation]


def _module(paper: str):
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)}, got {paper!r}")
    return importlib.import_module(PAPERS[paper])


def evaluators(paper: str) -> dict[str, Evaluator]:
    """The on-instance evaluators of ``paper``: claim id -> function (every id is a registered claim)."""
    from verify.registry import all_claims

    found = dict(_module(paper).EVALUATORS)
    known = {c.id for c in all_claims()}
    unknown = sorted(set(found) - known)
    if unknown:
        raise ValueError(f"evaluators of unregistered claims: {', '.join(unknown)}")
    return found


def _no_verdict_on_nan(evaluation: Evaluation) -> Evaluation:
    """A claim decided on a quantity or bound that is NaN decides nothing: ``not_evaluable`` (an adversarial audit
    found 'violated: the limit (Pc) is nan' on data whose squares overflow; a NaN compares false either way)."""
    import math

    if evaluation.status not in ("holds", "violated"):
        return evaluation
    bad = [name for name, x in (("value", evaluation.value), ("bound", evaluation.bound))
           if x is not None and math.isnan(x)]   # an infinite value or bound is ordered; NaN is not
    if not bad:
        return evaluation
    return Evaluation(status="not_evaluable", quantity=evaluation.quantity,
                      summary=f"not evaluated: the {' and '.join(bad)} is NaN; the instance's numbers leave the double "
                              f"range, so nothing is decided (was: {evaluation.summary})",
                      hypotheses=evaluation.hypotheses, details=evaluation.details)


def check_instance(instance: UserInstance, options: CheckOptions | None = None) -> InstanceCheck:
    """Every claim of ``instance.paper`` on ``instance``: evaluated where it can be, with the reason where not.

    Examples
    --------
    >>> from theory.msd.instance import reference_instance
    >>> user = UserInstance(paper="paofed", description="reference", parts={"instance": reference_instance()})
    >>> result = check_instance(user, CheckOptions(simulate=False))
    >>> result.exit_status, result.outcomes[0].claim_id.startswith("paofed.")
    (0, True)
    """
    from verify.registry import select_claims

    options = options or CheckOptions()
    mod = _module(instance.paper)
    table = evaluators(instance.paper)
    outcomes = []
    for claim in select_claims([instance.paper]):
        fn = table.get(claim.id)
        if fn is None:
            evaluation = Evaluation(status="not_evaluable",
                                    summary=f"not evaluable on a user instance: {mod.not_evaluable(claim, instance)}")
        else:
            try:
                evaluation = fn(instance, options)
            except NotConvergedOnInstance as exc:
                evaluation = Evaluation(status="not_converged", summary=f"a solver did not converge: {exc}")
            evaluation = _no_verdict_on_nan(evaluation)
        outcomes.append(ClaimOutcome(claim_id=claim.id, title=claim.title,
                                     citation="; ".join(str(c) for c in claim.citations),
                                     expected=claim.expected.value, evaluation=evaluation,
                                     corrected_by=claim.corrected_by, corrects=claim.corrects))
    return InstanceCheck(paper=instance.paper, description=instance.description, simulate=options.simulate,
                         outcomes=tuple(outcomes))
