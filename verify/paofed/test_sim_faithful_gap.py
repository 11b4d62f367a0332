"""Property tests: the faithful PAO-Fed algorithm stays within 3 dB of the analysis' steady-state MSD."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.paofed.sim_faithful_gap import GATE_DB, evaluate_faithful_gap
from verify.strategies import paofed_reference_step_sizes


@pytest.mark.claim("paofed.sim_faithful_gap")
@settings(max_examples=2)  # each example simulates 150 runs x 500-1200 iterations of P1-P9
@given(scale=paofed_reference_step_sizes(), seed=st.integers(min_value=0, max_value=2**31 - 1))
@example(scale=0.2, seed=0)
def test_faithful_algorithm_within_three_db(scale, seed):
    """Property: for any seed, on the reference instance the whole confidence interval of the gap between
    SIM-F's steady-state MSD and the exact MSD_inf lies within +-3 dB (spec 4.3 item 9), and SIM-F is below
    the prediction (the algorithm's correlations help it, [E15])."""
    # horizons long enough for the second half to be in steady state (MSD_0 is ~30 dB above MSD_inf;
    # rho(F) = 0.976 at 0.1, 0.954 at 0.2)
    evidence = evaluate_faithful_gap(scale, runs=150, iterations={0.1: 1200, 0.2: 500}[scale], seed=seed)
    target(evidence.measured / GATE_DB, label="|gap| / gate")
    assert evidence.holds, evidence
    assert evidence.parameters["gap_ci_db"][1] < 0.0
