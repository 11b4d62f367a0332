"""Property tests of the PAO-Fed communication savings (counted by the reference simulator)."""

import pytest
from hypothesis import example, given, settings, target

from verify.budget import examples
from verify.paofed.sim_communication import PAPER_CASES, evaluate_communication_savings
from verify.strategies import paofed_communication_cases


@pytest.mark.claim("paofed.communication_savings")
@settings(max_examples=examples("most"))
@given(case=paofed_communication_cases())
@example(case=PAPER_CASES[0])
@example(case=PAPER_CASES[-1])
def test_counted_savings_are_one_minus_m_over_d(case):
    """Property: whatever the availability, data arrival, delays and schedule, an exchanging client moves
    exactly m entries per direction (D for full models), so the counted savings equal 1 - m/D up to
    rounding and the load is 32 m bits per exchanging client and iteration (128 bits for m = 4, D = 200)."""
    evidence = evaluate_communication_savings(case)
    target(evidence.measured, label="|counted - formula| / gamma_4")
    assert evidence.holds, evidence
