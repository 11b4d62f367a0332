"""Property tests of the sentence after (6.1), "a larger tau enforces more similarity" (docs/papers/npfl_rl.md#k8):
in the paper's own setting (6.1) and in fedcheck's networked reading."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.npfl_rl._common import paper_point
from verify.npfl_rl.similarity import constructed_instance, evaluate_similarity, evaluate_similarity_centralised
from verify.strategies import npfl_instances, npfl_symmetric_instances


@pytest.mark.claim("npfl_rl.similarity_monotone")
@settings(max_examples=examples("some"))
@given(case=st.one_of(npfl_instances(), npfl_symmetric_instances()))
@example(case=paper_point(0))
def test_cluster_models_of_61_get_closer_with_tau(case):
    """Property: with (6.1) read as the coupled system of the Q cluster problems and one global tau, the pairwise
    spread sum_{q<r} ||w_q - w_r||^2 of the cluster models is non-increasing on tau in {0, 1e-3, ..., 100}."""
    evidence = evaluate_similarity_centralised(case)
    target(evidence.measured, label="relative increase / slack")
    assert evidence.holds, evidence.parameters["P"]


@pytest.mark.claim("npfl_rl.similarity_monotone")
def test_cluster_models_of_61_get_closer_on_the_constructed_instance():
    """Property: on the instance where the networked reading fails (clusters of sizes 1, 10, 10 and curvatures 1,
    0.01, 1), the cluster-level spread of (6.1) still falls with tau."""
    evidence = evaluate_similarity_centralised({"instance": "constructed"}, constructed_instance())
    assert evidence.holds, evidence.parameters["P"]


@pytest.mark.claim("npfl_rl.similarity_monotone_networked")
@settings(max_examples=examples("some"))
@given(case=st.one_of(npfl_instances(), npfl_symmetric_instances()))
@example(case=paper_point(0))
def test_cross_cluster_spread_does_not_increase_with_tau(case):
    """Property: on the paper's generator, at the coupled fixed point with tau_k = tau, the mean squared distance
    between models of clients in different clusters is non-increasing on the grid tau in {0, .01, .05, .1, .2, .4,
    .8, 1.6}."""
    evidence = evaluate_similarity(case)
    target(evidence.measured, label="relative increase / slack")
    assert evidence.holds, evidence.parameters["S"]

