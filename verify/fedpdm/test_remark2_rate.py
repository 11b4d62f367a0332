"""Property tests of FedPDM-DP Remarks 1(iv) and 2 (23): the arithmetic of (23), the privacy of its noise as the paper
states it (per-round eps set by zeta through Theorem 1), fedcheck's fixed-budget reading, and Remark 1(iv) in Section
V's schedule (docs/papers/fedpdm.md#remark-2)."""

import math

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.fedpdm.remark1_noise import evaluate_path, sensitivity_polynomial_certificate
from verify.fedpdm.remark2_rate import (
    DELTA,
    PAPER_POINT,
    evaluate_remark2_fixed_budget,
    evaluate_remark2_private,
    evaluate_remark2_terms,
    per_round_epsilon,
    zeta_star,
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
@example(point={**PAPER_POINT, "zeta": 1.0})
@example(point={**PAPER_POINT, "zeta": 1e-4})
def test_theorem1_per_round_eps_for_23_is_not_a_guarantee_below_zeta_star(point):
    """Property: (23b)'s noise is Theorem 1's (18) at eps(zeta) = s sqrt(2 ln(1.25/delta))/sigma; the legal pair's
    round-0 uploads differ by s of (19); eps(zeta) grows as zeta shrinks; below zeta* (where eps(zeta) leaves the
    classical calibration's range eps*) the release is NOT (eps(zeta), 1e-5)-DP, and at 1.01 zeta* it is (the
    boundary of the hypothesis decides, not the evaluation)."""
    evidence = evaluate_remark2_private(point)
    p = evidence.parameters
    # the legal pair attains s of (19) at its first participation (eta rho <= 1): relative 1e-12 is rounding
    assert math.isclose(p["norm_delta_y"], p["s_eq19"], rel_tol=1e-12)
    assert per_round_epsilon({**point, "zeta": point["zeta"] / 2.0}) > p["epsilon_round_theorem1"]
    star = zeta_star(point)
    below = evaluate_remark2_private({**point, "zeta": 0.5 * star})
    above = evaluate_remark2_private({**point, "zeta": 1.01 * star})
    target(-math.log10(max(below.parameters["delta_exact_at_epsilon_round"], 1e-300) / DELTA), label="-log10 ratio")
    assert not below.holds and above.holds, (below.parameters, above.parameters)
    assert evidence.holds == (point["zeta"] >= star * (1.0 + 1e-9)) or math.isclose(point["zeta"], star, rel_tol=1e-6)


@pytest.mark.claim("fedpdm.remark2_fixed_budget")
@settings(max_examples=examples("some"))
@given(point=fedpdm_remark2_points())
@example(point=PAPER_POINT)
def test_the_23_noise_breaks_a_fixed_budget_as_zeta_shrinks(point):
    """Property (fedcheck's fixed-budget reading): under sigma^2 = zeta/(4 C_3) the privacy loss of the round-0
    release grows as zeta shrinks, and at zeta' = zeta min(1, (mu/4)^2) (so that mu' = s/sigma' >= 4) that single
    release is NOT (7, 1e-5)-DP: no target zeta -> 0 keeps a fixed budget."""
    evidence = evaluate_remark2_fixed_budget(point)
    p = evidence.parameters
    finer = evaluate_remark2_fixed_budget({**point, "zeta": point["zeta"] / 2.0})
    assert finer.parameters["epsilon_exact_round0"] > p["epsilon_exact_round0"]
    # mu' = 4 is far past the budget: delta_G(7; 4) = Phi(0.25) - e^7 Phi(-3.75) ~ 0.5 >> 1e-5
    small = evaluate_remark2_fixed_budget({**point, "zeta": point["zeta"] * min(1.0, (p["mu"] / 4.0) ** 2)})
    target(-math.log10(max(small.parameters["delta_exact_round0"], 1e-300) / DELTA), label="-log10(delta_exact/delta)")
    assert not small.holds, small.parameters


@pytest.mark.claim("fedpdm.remark1_iv")
@settings(max_examples=examples("some"))
@given(Q=st.integers(1, 20), steps=st.integers(3, 60))
@example(Q=5, steps=41)
@example(Q=1, steps=41)
@example(Q=20, steps=3)
def test_the_noise_term_shrinks_as_eta_rho_moves_to_one_in_section_v(Q, steps):
    """Property: in Section V's schedule (rho = 10, eta^t = 1/sqrt(1+t), T = 300) max_t s_t of (19) decreases at every
    step of the path eta^t rho -> 1 and ends at 4G/rho, and (19) has the exact polynomial form that explains it."""
    evidence = evaluate_path(Q, steps)
    target(evidence.parameters["max_step_ratio"], label="largest step ratio")
    assert evidence.holds, evidence.parameters
    assert sensitivity_polynomial_certificate(Q).holds
