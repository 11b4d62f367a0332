"""Property tests of Theorem 3's condition on L (docs/papers/fedpdm.md#theorem-3, docs/papers/fedpdm.md#erratum-e17,
docs/papers/fedpdm.md#erratum-e18): the seed's range and the corrected one."""

import math

import pytest
from hypothesis import example, given

from verify.fedpdm.theorem3_constants import (
    CONDITION_COUNTEREXAMPLE,
    L_LOWER_SEED,
    evaluate_conditions,
    theorem3_conditions,
    theorem3_constants,
)
from verify.strategies import fedpdm_corrected_conditions_strict, fedpdm_seed_condition_violations


@pytest.mark.claim("fedpdm.theorem3_conditions")
@given(point=fedpdm_seed_condition_violations())
@example(point=(L_LOWER_SEED, 10.0))  # the seed's own endpoint (lines 221, 343)
@example(point=(2.5, 10.0))  # L = rho/4 with the experiment's rho = 10
def test_seed_range_admits_undefined_constants(point):
    """Property: inside the seed's range 2 sqrt5 - 4 <= L <= rho/4, at L <= 1/2 or L = rho/4 some constant of Lemmas 2-3
    is non-positive or undefined (B3, B8 at 4L - 2 <= 0; theta_1 = 0 and C_0 = inf at L = rho/4)."""
    L, rho = point
    assert theorem3_conditions(L, rho)["seed"]
    assert not evaluate_conditions({"L": L, "rho": rho, "N": 10, "K": 5}).holds


def test_lower_bound_is_a_root_of_l2_plus_8l_minus_4_and_spec_example():
    assert abs(L_LOWER_SEED**2 + 8 * L_LOWER_SEED - 4) <= 8 * 2.0**-52 * 4  # a few ulps of the terms
    c = theorem3_constants(1.0, 10.0, 10, 10)
    assert c["theta1"] == pytest.approx(3.6) and c["theta2"] == pytest.approx(105.2, rel=1e-3)
    assert c["C0"] == pytest.approx(29.22, rel=1e-3) and c["C3"] == 80.0
    assert c["C1"] == pytest.approx(1507.9, rel=1e-3) and c["C2"] == pytest.approx(1613.1, rel=1e-3)
    assert not evaluate_conditions(CONDITION_COUNTEREXAMPLE).holds
    assert theorem3_conditions(0.49, 10.0)["warning"]


@pytest.mark.claim("fedpdm.theorem3_conditions_corrected")
@given(point=fedpdm_corrected_conditions_strict())
@example(point=(1.0, 10.0, 10, 10))  # docs/papers/fedpdm.md#instance-nc: declared L = 1, rho = 10
def test_corrected_range_gives_finite_positive_constants(point):
    """Property: for 1/2 < L < rho/4, B2 > 0, B3 > 0, B8 > 0, theta_1 > 0 and C_0, C_1, C_2 are finite and positive."""
    L, rho, N, K = point
    evidence = evaluate_conditions({"L": L, "rho": rho, "N": N, "K": K})
    assert evidence.holds, evidence
    assert math.isfinite(theorem3_constants(L, rho, N, K)["C0"])
