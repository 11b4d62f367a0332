"""Property tests: the exact steady-state MSD lies in the analysis-model simulation's confidence interval."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.paofed.sim_steady_state import evaluate_steady_state
from verify.strategies import paofed_reference_step_sizes


@pytest.mark.claim("paofed.sim_steady_state")
@settings(max_examples=examples("few"))  # each example simulates 150 runs x 500 iterations and the exact transient
@given(scale=paofed_reference_step_sizes(), seed=st.integers(min_value=0, max_value=2**31 - 1))
@example(scale=0.1, seed=0)
def test_exact_msd_in_sim_a_confidence_interval(scale, seed):
    """Property: for any seed, on the reference instance (docs/papers/paofed.md#instance-reference) the window mean of
    the exact transient MSD (S1) lies in the two-sided confidence interval (failure probability 1e-3) of
    SIM-A (docs/papers/paofed.md#choice-simulators)'s mean time-averaged MSD over the second half of the horizon."""
    evidence = evaluate_steady_state(scale, runs=150, iterations=500, seed=seed)
    target(evidence.measured / evidence.bound, label="|SIM-A - exact| / CI half-width")
    assert evidence.holds, evidence
