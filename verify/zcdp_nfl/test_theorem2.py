"""Property tests of zCDP-NFL Theorem II's positivity claim and the non-negative consensus gap."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.tolerance import MC_ALPHA
from verify.zcdp_nfl.theorem2 import (
    HETEROGENEOUS,
    NOISY,
    evaluate_consensus_gap,
    evaluate_positivity,
    objective_gaps,
)

#: The paper's size (K = 50, P = 8, M = 50), heterogeneous clients, ridge.
PAPER = {**HETEROGENEOUS, "heterogeneity": 2.0, "seed": 2024, "K": 50, "P": 8, "M": 50, "objective": "ridge", "T": 150}


@st.composite
def heterogeneous_settings(draw):
    """Heterogeneous clients (h in [1, 2]), ridge or elastic net, rho in [0.2, 0.5], eta = 0.5, noise-free."""
    return {**HETEROGENEOUS, "seed": draw(st.integers(0, 2**31 - 1)),
            "heterogeneity": draw(st.floats(min_value=1.0, max_value=2.0)),
            "objective": draw(st.sampled_from(["ridge", "elastic_net"])),
            "rho": draw(st.floats(min_value=0.2, max_value=0.5)), "T": 150}


@pytest.mark.claim("zcdp_nfl.theorem2")
@settings(max_examples=examples("many"))
@given(case=heterogeneous_settings())
@example(case=PAPER)
@example(case={**HETEROGENEOUS, "objective": "ridge", "T": 150})
def test_stacked_gap_goes_negative_with_heterogeneous_clients(case):
    """Property: with heterogeneous clients, f(w_hat^(T)) - f(w*) < 0 for some T <= 150 on a noise-free run
    (w* = 1 (x) w_c minimises f only on the consensus subspace), while F(w_bar^(T)) - F* >= 0 throughout."""
    evidence = evaluate_positivity(case)
    target(evidence.measured / max(evidence.parameters["f_star"], 1.0), label="-min gap / f*")
    assert not evidence.holds
    assert evaluate_consensus_gap(case).holds


@pytest.mark.claim("zcdp_nfl.theorem2")
def test_expected_stacked_gap_is_negative_with_noise():
    """Property: with S2 noise the upper confidence limit of E[f(w_hat^(T)) - f(w*)] is below 0 (T = 50, 200)."""
    evidence = evaluate_positivity({**HETEROGENEOUS, **NOISY, "objective": "elastic_net", "T": 200, "runs": 100,
                                    "noise_seed": 5}, MC_ALPHA / 2)
    assert not evidence.holds and all(float(u) < 0 for u in evidence.parameters["upper_confidence_limit"].values())


@pytest.mark.claim("zcdp_nfl.theorem2_consensus_gap")
@settings(max_examples=examples("many"))
@given(case=heterogeneous_settings(), noisy=st.booleans())
@example(case=PAPER, noisy=False)
def test_consensus_gap_is_non_negative(case, noisy):
    """Property: F(w_bar^(T)) - F* >= 0 for every T and run (w_bar the client average of w_hat), with or without
    noise, within the certified accuracy of the CVXPY optimum."""
    if noisy:
        case = {**case, **NOISY, "runs": 20}
    evidence = evaluate_consensus_gap(case)
    assert evidence.holds, evidence
    stacked, consensus, _ = objective_gaps(case)
    assert consensus.shape == stacked.shape
