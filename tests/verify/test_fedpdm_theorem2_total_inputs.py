"""verify.fedpdm.theorem2_total.epsilon_total at tiny epsilon or delta: a clear answer or a ValueError naming the
argument, never an OverflowError or a math domain error from dp-accounting."""

import math

import pytest

from verify.fedpdm.theorem2_total import epsilon_total


def test_in_house_rdp_answers_at_tiny_epsilon_and_subnormal_delta():
    lo, hi = epsilon_total("rdp", 1e-300, 1e-5, 15, 0.1)
    assert lo == hi and 0 < hi < 1e-3  # only the conversion term ln(1/delta)/(alpha - 1) at the largest order
    assert math.isfinite(epsilon_total("rdp", 0.5, 1e-320, 15, 0.1)[0])


@pytest.mark.parametrize(("accountant", "epsilon", "delta", "needle"), [
    ("rdp_wor", 1e-300, 1e-5, "epsilon = 1e-300 gives the noise multiplier"),
    ("pld", 1e-300, 1e-5, "epsilon = 1e-300 gives the noise multiplier"),
    ("pld", 0.5, 1e-300, "delta must be >= 1e-12 for the PLD accountant"),
    ("pld", 0.5, 1e-320, "delta must be >= 1e-12 for the PLD accountant"),
    ("rdp", 1e-320, 1e-5, "epsilon = 1e-320 is too small"),
    ("rdp_wor", 1e-320, 1e-5, "epsilon = 1e-320 is too small"),
])
def test_out_of_reach_inputs_raise_a_value_error_naming_the_argument(accountant, epsilon, delta, needle):
    with pytest.raises(ValueError, match=needle):
        epsilon_total(accountant, epsilon, delta, 15, 0.1)


def test_without_replacement_accountant_answers_at_subnormal_delta():
    assert math.isfinite(epsilon_total("rdp_wor", 0.5, 1e-320, 15, 0.1)[0])
