"""Shared pieces of the on-instance evaluators: deciding from hypotheses and the reasons a claim is not evaluable."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from verify.instance.records import Evaluation, Hypothesis

__all__ = ["conclude", "default_reason", "evaluates", "is_experiment", "memo", "not_applicable"]

_MEMO: dict = {}


def is_experiment(claim) -> bool:
    """An experiment claim (arms compared over replicates of the paper's own experiment)."""
    return ".experiment" in claim.id or getattr(claim.check, "__module__", "").endswith(".experiments")


def default_reason(claim, reasons: Mapping[str, str]) -> str:
    """The paper module's own reason for ``claim``, else the reason of its kind, naming the command that decides it."""
    if claim.id in reasons:
        return reasons[claim.id]
    if is_experiment(claim):
        return (f"an experiment claim about the paper's own set-up and data (arms compared over replicates of the "
                f"paper's experiment), not about this configuration; `fedcheck report --only {claim.id}` decides it")
    return (f"a statement over the paper's whole parameter space or about the closed forms themselves, not a "
            f"property of one configuration; `fedcheck report --only {claim.id}` decides it")


def not_applicable(why: str, hypotheses: Sequence[Hypothesis] = ()) -> Evaluation:
    """The claim is about another set-up than the configured one."""
    return Evaluation(status="not_applicable", summary=f"not applicable: {why}", hypotheses=tuple(hypotheses))


def conclude(hypotheses: Sequence[Hypothesis], *, holds: bool | None, summary: str, quantity: str = "",
             value: float | None = None, bound: float | None = None,
             details: Mapping[str, Any] | None = None) -> Evaluation:
    """``hypotheses_not_met`` naming the first unmet hypothesis, else ``holds``/``violated`` by ``holds``.

    ``holds`` may be None when the conclusion is not computed once a hypothesis fails (it must then fail).
    """
    hypotheses = tuple(hypotheses)
    unmet = [h for h in hypotheses if not h.met]
    if unmet:
        return Evaluation(status="hypotheses_not_met", summary=f"hypothesis not met: {unmet[0].line()}; {summary}",
                          quantity=quantity, value=value, bound=bound, hypotheses=hypotheses, details=details or {})
    if holds is None:
        raise ValueError("holds must be given when every hypothesis is met")
    return Evaluation(status="holds" if holds else "violated", summary=summary, quantity=quantity, value=value,
                      bound=bound, hypotheses=hypotheses, details=details or {})


def memo(user, key: str, compute):
    """``compute()`` once per (user instance, key) while the instance lives (the evaluators of a paper share their
    analyses); at most the eight most recent instances are kept."""
    slot = _MEMO.setdefault(id(user), (user, {}))
    if slot[0] is not user:  # a recycled id: start afresh
        _MEMO[id(user)] = slot = (user, {})
    if len(_MEMO) > 8:
        for k in list(_MEMO)[:-8]:
            del _MEMO[k]
    if key not in slot[1]:
        slot[1][key] = compute()
    return slot[1][key]


def evaluates(registry: dict, claim_id: str) -> Callable:
    """Decorator: register ``fn`` as the on-instance evaluator of ``claim_id`` in ``registry``."""

    def register(fn: Callable) -> Callable:
        if claim_id in registry:
            raise ValueError(f"claim {claim_id!r} already has an on-instance evaluator")
        registry[claim_id] = fn
        return fn

    return register
