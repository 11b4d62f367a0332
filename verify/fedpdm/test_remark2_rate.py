"""Property tests of FedPDM-DP Remark 2 (23): its arithmetic, and its privacy at the paper's budget (spec E27)."""

import math

import pytest
from hypothesis import example, given, settings, target

from verify.budget import examples
from verify.fedpdm.remark2_rate import (
    DELTA,
    PAPER_POINT,
    evaluate_remark2_private,
    evaluate_remark2_terms,
)
from verify.strategies import fedpdm_remark2_points


@pytest.mark.claim("fedpdm.remark2")
@settings(max_examples=examples("many"))
@given(point=fedpdm_remark2_points())
@example(point=PAPER_POINT)
def test_each_term_of_22_is_a_quarter_of_zeta_under_23(point):
    """Property: with (23) (T rounded up) A_0 <= zeta/4 and A_1 = A_2 = A_3 = zeta/4 to rounding, and T zeta stays
    within zeta of 4 (L^0 - f) C_0: T = O(1/zeta)."""
    evidence = evaluate_remark2_terms(point)
    target(evidence.measured, label="max A_k / (zeta/4)")
    assert evidence.holds, evidence.parameters


@pytest.mark.claim("fedpdm.remark2_private")
@settings(max_examples=examples("some"))
@given(point=fedpdm_remark2_points())
@example(point=PAPER_POINT)
def test_the_23_noise_breaks_the_papers_budget_as_zeta_shrinks(point):
    """Property: under sigma^2 = zeta/(4 C_3) the legal one-record pair's round-0 uploads differ by s of (19), its
    privacy loss grows as zeta shrinks, and at zeta' = zeta min(1, (mu/4)^2) (so that mu' = s/sigma' >= 4) that
    single release is NOT (7, 1e-5)-DP: no target zeta -> 0 keeps the paper's budget."""
    evidence = evaluate_remark2_private(point)
    p = evidence.parameters
    # the legal pair attains s of (19) at its first participation (eta rho <= 1): relative 1e-12 is rounding
    assert math.isclose(p["norm_delta_y"], p["s_eq19"], rel_tol=1e-12)
    finer = evaluate_remark2_private({**point, "zeta": point["zeta"] / 2.0})  # halve the target
    assert finer.parameters["epsilon_exact_round0"] > p["epsilon_exact_round0"]
    # mu' = 4 is far past the budget: delta_G(7; 4) = Phi(0.25) - e^7 Phi(-3.75) ~ 0.5 >> 1e-5
    small = evaluate_remark2_private({**point, "zeta": point["zeta"] * min(1.0, (p["mu"] / 4.0) ** 2)})
    target(-math.log10(max(small.parameters["delta_exact_round0"], 1e-300) / DELTA), label="-log10(delta_exact/delta)")
    assert not small.holds, small.parameters
