"""Property tests of the accuracy side of the zCDP-NFL privacy-accuracy trade-off (P2 (22)-(24))."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from verify.budget import examples
from verify.tolerance import MC_ALPHA
from verify.zcdp_nfl.tradeoff_accuracy import SETTING, evaluate_tradeoff, final_errors


@pytest.mark.claim("zcdp_nfl.tradeoff_accuracy")
@settings(max_examples=examples("some"))
@given(seed=st.integers(0, 2**31 - 1), phi_low=st.floats(min_value=1e-4, max_value=1e-3),
       ratio=st.floats(min_value=3.0, max_value=10.0))
@example(seed=2024, phi_low=1e-4, ratio=10.0)
def test_smaller_budget_gives_larger_final_error(seed, phi_low, ratio):
    """Property: for LAD under S2 with common random numbers, a budget phi1 three to ten times smaller gives a
    significantly larger mean NE after 200 rounds (paired lower confidence limit > 0), and a smaller epsilon."""
    settings_ = {**SETTING, "seed": seed, "runs": 30, "noise_seed": seed}
    evidence, summary = evaluate_tradeoff(settings_, MC_ALPHA, budgets=(phi_low, phi_low * ratio))
    assert evidence[0].holds, evidence[0]
    assert summary["epsilon"][0] < summary["epsilon"][1]


@pytest.mark.claim("zcdp_nfl.tradeoff_accuracy")
def test_common_random_numbers_make_the_error_monotone_on_most_paths():
    """Property: with the same noise draw scaled by each sigma, NE_T decreases with phi1 on most single paths."""
    ne, eps = final_errors({**SETTING, "runs": 20, "noise_seed": 3})
    assert np.all(np.diff(eps) > 0)
    assert np.mean(np.diff(ne, axis=0) < 0) > 0.9
