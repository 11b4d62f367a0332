"""Property test: fedcheck's conversions against dp-accounting's accountants."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.dp.accountants import evaluate_accountants


@pytest.mark.claim("dp.accountants_agree")
@settings(max_examples=examples("several"))  # each example builds a PLD (about a second); the registry check adds more
# points
@given(noise_multiplier=st.floats(min_value=1.0, max_value=20.0), rounds=st.integers(min_value=1, max_value=300),
       log_delta=st.floats(min_value=-10.0, max_value=-2.0))
@example(noise_multiplier=2.0, rounds=100, log_delta=-5.0)
def test_conversions_match_accountants(noise_multiplier, rounds, log_delta):
    """Property: for N Gaussian rounds, exact-Gaussian epsilon = PLD epsilon within the PLD discretisation,
    and CKS <= RDP accountant <= CKS (1 + 1e-2)."""
    evidence = evaluate_accountants(noise_multiplier, rounds, 10.0**log_delta)
    target(evidence.measured, label="normalised disagreement")
    assert evidence.holds, evidence
