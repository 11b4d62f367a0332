"""Mutation tests of FedPDM-DP's experiment claims: swapped arms of a confirmed ordering refute it (once the
reconstruction guard is lifted), and the guard turns that refutation into not_checkable."""

import dataclasses

import numpy as np
import pytest

from verify.fedpdm._experiment_design import DESIGN, SCALES, Arm, Scale, simulate_fedpdm
from verify.fedpdm.experiments import BASELINES, DP_GAP, DP_LOSS, arm, gap_statement
from verify.harness import below, decide
from verify.records import CheckContext, Verdict

CI = CheckContext(profile="ci", seed=0)


def _swapped(spec, statements):
    return dataclasses.replace(spec, statements=statements, outside_setting="", baselines=())


def test_swapped_loss_ordering_is_refuted_without_the_guard():
    """Baselines below FedPDM-DP at epsbar = 7 (the confirmed ordering reversed): its negation is shown."""
    spec = _swapped(DP_LOSS, tuple(below(arm(b), arm("fedpdm"), "final_loss") for b in BASELINES))
    result = decide(CI, spec)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample["claim"] == DP_LOSS.claim_id


def test_swapped_loss_ordering_is_not_refuted_against_reconstructions():
    """Property: the same reversed ordering against the reconstructed baselines is not_checkable, its observed
    ordering (the negation shown) in the card: a reconstruction decides neither way."""
    spec = dataclasses.replace(DP_LOSS, statements=tuple(below(arm(b), arm("fedpdm"), "final_loss") for b in BASELINES))
    result = decide(CI, spec)
    assert result.verdict is Verdict.NOT_CHECKABLE
    assert "reconstructed baseline" in result.summary and "observed ordering: its negation is shown" in result.summary


def test_gap_with_fedpdm_and_the_baseline_swapped_is_refuted():
    """The gap contrast with FedPDM-DP's arms and the baseline's exchanged (every weight negated): refuted."""
    def swapped(baseline):
        s = gap_statement(baseline)
        return dataclasses.replace(s, terms=tuple(dataclasses.replace(t, weight=-t.weight) for t in s.terms))

    result = decide(CI, _swapped(DP_GAP, tuple(swapped(b) for b in ("fedavg", "fedprox"))))
    assert result.verdict is Verdict.REFUTED, result.summary


def test_arms_share_the_replicate_data_and_are_reproducible():
    """Common random numbers: the same replicate gives the same curves for the same arm, and the initial loss
    (x_0 = 0: ln 2 plus nothing) is the same for every arm."""
    scale = Scale(dataset="digits", N=10, K=3, b=5, Q_max=5, T=6, eval_every=3)
    arms = [Arm(label="a", algorithm="fedpdm"), Arm(label="b", algorithm="fedavg", epsilon=None)]
    first = simulate_fedpdm(arms, (), scale, 3, (0, 1))
    again = simulate_fedpdm(arms[:1], (), scale, 3, (0, 1))
    np.testing.assert_array_equal(first[0], again[0])
    # F(0) = ln 2 exactly up to the mean's rounding (relative 1e-12 allows ~4500 ulps of summation error)
    np.testing.assert_allclose(first[0][:, 0, 0], np.log(2.0), rtol=1e-12)
    np.testing.assert_allclose(first[1][:, 0, 0], np.log(2.0), rtol=1e-12)


@pytest.mark.parametrize("field, value", [("dataset", "cifar"), ("K", 0), ("eval_every", 7), ("T", 2.5)])
def test_scale_rejects_bad_fields(field, value):
    fields = {**dataclasses.asdict(SCALES["digits"]["ci"]), field: value}
    with pytest.raises(ValueError, match=field):
        Scale(**fields)


def test_design_has_a_store_namespace_per_data_set():
    assert len({d.namespace for d in DESIGN.values()}) == len(DESIGN)
