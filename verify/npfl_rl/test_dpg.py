"""Property tests of the DPG derivative and the descent of a small DPG step (docs/papers/npfl_rl.md#k5, #k6)."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.npfl_rl._common import paper_point
from verify.npfl_rl.dpg import evaluate_dpg_derivative, evaluate_dpg_descent
from verify.strategies import npfl_instances


@pytest.mark.claim("npfl_rl.dpg_derivative")
@settings(max_examples=examples("several"))
@given(case=npfl_instances(), n0=st.integers(1, 60))
@example(case=paper_point(0), n0=50)
def test_dpg_derivative_matches_complex_step(case, n0):
    """Property: dV_v(P(a))/da = grad V_v(P(a))^T A(a)^{-1}(m - omega P(a)) equals the complex-step derivative to
    1e-9 relative at every client and a in [0, 3], at mid-run states."""
    evidence = evaluate_dpg_derivative({**case, "n0": n0})
    target(evidence.measured, label="relative error / tolerance")
    assert evidence.holds, evidence.parameters["worst_relative_error"]


@pytest.mark.claim("npfl_rl.dpg_descent")
@settings(max_examples=examples("several"))
@given(case=npfl_instances(), n0=st.integers(1, 60))
@example(case=paper_point(0), n0=50)
def test_small_dpg_step_decreases_the_value(case, n0):
    """Property: with delta |g| <= 1e-4 the DPG step decreases V_v(P(t)) by at least delta g^2 / 2 (up to 1e-9 V_v
    rounding) at every client and t in [0, 3]."""
    evidence = evaluate_dpg_descent({**case, "n0": n0})
    target(evidence.measured, label="excess / slack")
    assert evidence.holds, evidence.parameters["worst_excess_ratio"]
