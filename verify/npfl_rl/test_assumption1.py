"""Property tests of Assumption 1's eta in closed form for the generator (docs/papers/npfl_rl.md#k9)."""

import pytest
from hypothesis import example, given, settings, target

from verify.budget import examples
from verify.npfl_rl._common import paper_point
from verify.npfl_rl.assumption1 import evaluate_assumption1
from verify.strategies import npfl_instances


@pytest.mark.claim("npfl_rl.assumption1_eta")
@settings(max_examples=examples("many"))
@given(case=npfl_instances())
@example(case=paper_point(0))
def test_eta_closed_form_is_the_largest_pairwise_distance(case):
    """Property: with w_q = (1 + delta_q) w_0, max_{q,r} ||w_q - w_r||^2 = (max delta - min delta)^2 ||w_0||^2."""
    evidence = evaluate_assumption1(case)
    target(evidence.measured, label="relative mismatch / tolerance")
    assert evidence.holds, (evidence.parameters["eta"], evidence.parameters["max_pairwise"])
