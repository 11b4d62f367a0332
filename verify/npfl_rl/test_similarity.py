"""Property tests of K8 (cross-cluster spread of the fixed point non-increasing in tau)."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.npfl_rl._common import paper_point
from verify.npfl_rl.similarity import evaluate_similarity
from verify.strategies import npfl_instances, npfl_symmetric_instances


@pytest.mark.claim("npfl_rl.similarity_monotone")
@settings(max_examples=examples("some"))
@given(case=st.one_of(npfl_instances(), npfl_symmetric_instances()))
@example(case=paper_point(0))
def test_cross_cluster_spread_does_not_increase_with_tau(case):
    """Property: at the coupled fixed point with tau_k = tau, the mean squared distance between models of clients
    in different clusters is non-increasing on the grid tau in {0, .01, .05, .1, .2, .4, .8, 1.6}."""
    evidence = evaluate_similarity(case)
    target(evidence.measured, label="relative increase / slack")
    assert evidence.holds, evidence.parameters["S"]
