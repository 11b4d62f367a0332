"""Mutation tests of the GTV digits experiment claims (verify/gtv/digits.py): the confirmation is not built in, and
the stand-in's claims are never refuted outside the paper's setting."""

import dataclasses

from verify.gtv import digits
from verify.harness import decide, swapped
from verify.records import CheckContext, Verdict

CI = CheckContext(profile="ci", seed=0)


def _mutant(statements, **changes):
    spec = digits.DIGITS_LOCAL
    return dataclasses.replace(spec, claim_id=spec.claim_id + "_mutant", statements=tuple(statements), figures=None,
                               details=None, **changes)


def test_swapped_arms_are_refuted_in_the_papers_setting():
    """'Local training above Algorithm 1' (the confirmed ordering with its arms swapped), decided as if in the
    paper's setting, is refuted, and the counterexample reproduces (its negation is the data's direction)."""
    spec = _mutant([swapped(s) for s in digits.DIGITS_LOCAL.statements], outside_setting="")
    result = decide(CI, spec)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert not spec.reproduce(result.counterexample).holds


def test_the_stand_in_cannot_refute():
    """The same swapped ordering on the stand-in (outside the paper's setting) is not_checkable: a negation shown on
    8x8 digits with logistic models says nothing about the paper's MNIST ANN."""
    result = decide(CI, _mutant([swapped(s) for s in digits.DIGITS_LOCAL.statements]))
    assert result.verdict is Verdict.NOT_CHECKABLE and "cannot be refuted" in result.summary, result.summary
