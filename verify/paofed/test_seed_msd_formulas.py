"""Property tests of PAO-Fed's own MSD formulas (4.32)-(4.34) with the truncated F (a finding: biased low)."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.paofed.seed_msd_formulas import evaluate_seed_formulas


@pytest.mark.claim("paofed.seed_msd_formulas")
@settings(max_examples=examples("few"))
@given(seed=st.integers(min_value=0, max_value=2**31 - 1))
@example(seed=0)
def test_truncated_formula_is_below_the_analysis_model_simulation(seed):
    """Property: on the reference instance at mu lambda_max = 0.2, the seed's window-mean MSD from (4.32)-(4.33) with
    the truncated F lies below the lower confidence limit of SIM-A (docs/papers/paofed.md#choice-simulators)'s mean (150
    runs, 400 iterations, alpha = 1e-3)."""
    evidence = evaluate_seed_formulas(0.2, runs=150, iterations=400, seed=seed, alpha=1e-3)
    target(evidence.measured - evidence.bound, label="dB beyond the interval")
    assert not evidence.holds, evidence
    assert evidence.parameters["exact_db"] < evidence.parameters["lcl_db"], evidence
