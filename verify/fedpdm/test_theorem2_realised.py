"""Property tests of the realised-count accounting (spec Review notes): pT understates the busiest client."""

import pytest
from hypothesis import example, given, settings, target

from verify.budget import examples
from verify.fedpdm.theorem2_realised import (
    REALISED_COUNTEREXAMPLE,
    evaluate_realised,
    evaluate_realised_corrected,
)
from verify.strategies import fedpdm_federations


@pytest.mark.claim("fedpdm.theorem2_realised")
@settings(max_examples=examples("some"))
@given(params=fedpdm_federations())
@example(params=REALISED_COUNTEREXAMPLE)  # the experiment: N = 100, K = 5, T = 300 (seed line 261-263)
def test_busiest_client_exceeds_the_expected_count_account(params):
    """Property: for uniform K-subset sampling with S_0 = [N], the busiest client's realised count exceeds ceil(pT), so
    its accountant total exceeds the pT account of (20)."""
    evidence = evaluate_realised(params)
    target(evidence.measured, label="total(max n_i) / total(pT)")
    assert not evidence.holds and evidence.parameters["max_n_i"] > evidence.parameters["pT"]


@pytest.mark.claim("fedpdm.theorem2_realised_corrected")
@settings(max_examples=examples("some"))
@given(params=fedpdm_federations())
@example(params=REALISED_COUNTEREXAMPLE)
def test_realised_count_account_is_within_the_linear_form(params):
    """Property: accounted at its realised n_i >= 15, every client's total is <= c0 q eps sqrt(n_i/(1-q)) with the
    Abadi constant, and the realised-count account bounds the busiest client."""
    assert all(e.holds for e in evaluate_realised_corrected(params))
    assert evaluate_realised(params, count="realised").holds
