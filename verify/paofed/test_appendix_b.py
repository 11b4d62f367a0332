"""Property tests of P4 Appendix B's non-negativity claim (a finding: Q_B can be negative)."""

import numpy as np
import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from theory.msd import analysis_moments, qa_matrix, qb_matrix
from verify.paofed._common import instance_from_dict, instance_to_dict
from verify.paofed.appendix_b import evaluate_corrected, evaluate_nonnegativity
from verify.paofed.expectations_enumeration import enumeration_instance
from verify.strategies import paofed_instances

_EXAMPLES = max(5, settings.default.max_examples // 10)


@pytest.mark.claim("paofed.appendix_b_nonnegative")
@settings(max_examples=_EXAMPLES)
@given(delta=st.floats(min_value=0.05, max_value=0.95))
@example(delta=0.5)  # docs/papers/paofed.md#review-note-6: min Q_B = -0.0694
def test_two_full_delay_groups_make_qb_negative(delta):
    """Property (the finding): with p = (1, 1), alpha = (1, 1), m = 2 of D = 3 and l_max = 1, Q_B has a
    negative entry for every delta in [0.05, 0.95], although every row of Q_B sums to one."""
    evidence = evaluate_nonnegativity(instance_to_dict(enumeration_instance([1.0, 1.0], delta, [1.0, 1.0])))
    target(evidence.measured, label="-(min entry)")
    assert not evidence.holds and evidence.parameters["min_QB"] < 0
    assert evidence.parameters["min_QB_enumerated"] < 0
    assert evidence.parameters["max_row_sum_error_QB"] <= 1e-14


@pytest.mark.claim("paofed.appendix_b_nonnegative")
@settings(max_examples=_EXAMPLES)
@given(params=paofed_instances(max_N=40, nonnegative_server_weight=False))
def test_row_sums_and_qa_nonnegativity_hold_and_lmax0_keeps_qb_nonnegative(params):
    """Property (the part of App. B that holds): Q_A >= 0 and every row of Q_A and Q_B sums to one for any
    instance; with a single delay group (l_max = 0) B_n in [0, 1] entrywise, so Q_B >= 0 as well."""
    inst = instance_from_dict(params)
    m = analysis_moments(inst)
    qa, qb = qa_matrix(m), qb_matrix(m)
    eps = np.finfo(float).eps
    assert qa.min() >= -8 * eps
    assert np.max(np.abs(np.asarray(qa.sum(axis=1)).ravel() - 1)) <= 64 * eps
    assert np.max(np.abs(np.asarray(qb.sum(axis=1)).ravel() - 1)) <= 1e-13
    single = instance_from_dict({**params, "l_max": 0, "alpha": [1.0]})
    assert qb_matrix(analysis_moments(single)).min() >= -8 * eps


@pytest.mark.claim("paofed.appendix_b_corrected")
@settings(max_examples=_EXAMPLES)
@given(params=paofed_instances(max_N=40, nonnegative_server_weight=False))
@example(params=instance_to_dict(enumeration_instance([1.0, 1.0], 0.5, [1.0], l_max=0)))
@example(params=instance_to_dict(enumeration_instance([1.0, 1.0], 0.5, [1.0, 1.0])))
@example(params=instance_to_dict(enumeration_instance([1.0, 1.0], 0.5, [1.0], "window", D=2, m=2, l_max=0)))
# K = D = m = 2 (window): the wrap-around case that the old window law got wrong
def test_corrected_row_sums_always_and_signs_with_one_delay_group(params):
    """Property (corrected App. B): Q_A, Q_B and E[B_e] have unit row sums on every instance; with l_max = 0 no
    entry is negative, so they are right-stochastic (every selection law, window laws with m + d > D included)."""
    evidence = evaluate_corrected(params)
    target(evidence.measured / evidence.bound, label="error / allowance")
    assert evidence.holds, evidence
