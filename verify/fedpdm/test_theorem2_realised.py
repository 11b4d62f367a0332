"""Property tests of the realised-count accounting (docs/papers/fedpdm.md#review-notes): pT understates the busiest
client."""

import pytest
from hypothesis import example, given, settings, target

from verify.budget import examples
from verify.fedpdm.theorem2_realised import (
    REALISED_COUNTEREXAMPLE,
    evaluate_fixed_client,
    evaluate_realised,
    evaluate_realised_corrected,
)
from verify.strategies import fedpdm_federations


@pytest.mark.claim("fedpdm.theorem2_realised")
@settings(max_examples=examples("few"))
@given(params=fedpdm_federations())
@example(params=REALISED_COUNTEREXAMPLE)  # the experiment: N = 100, K = 5, T = 300 (Section V)
def test_a_fixed_clients_transcript_exceeds_the_expected_count_account(params):
    """Property: for a client fixed before the run (uniform K-subset sampling, S_0 = [N], the schedule public), the
    transcript's eps at delta (its count n_i = 1 + Bin(T - 1, K/N) averaged over) is at least the pT account of (20)
    up to the PLD brackets (a few %), and at the experiment's federation it is certified above it (1.09x at eps = 0.5,
    q = 0.25)."""
    evidence = evaluate_fixed_client(params)
    target(evidence.measured, label="eps(transcript) / eps(pT)")
    assert evidence.measured > 0.95, evidence.parameters  # the PLD brackets leave a few % undecided near 1
    if params == REALISED_COUNTEREXAMPLE:
        assert not evidence.holds and evidence.measured > 1.08
    busiest = evaluate_realised(params)  # beside it: the busiest client chosen after the run exceeds it further
    assert busiest.parameters["max_n_i"] > busiest.parameters["pT"]


@pytest.mark.claim("fedpdm.theorem2_realised_corrected")
@settings(max_examples=examples("some"))
@given(params=fedpdm_federations())
@example(params=REALISED_COUNTEREXAMPLE)
def test_realised_count_account_is_within_the_linear_form(params):
    """Property: accounted at its realised n_i >= 15, every client's total is <= c0 q eps sqrt(n_i/(1-q)) with the
    Abadi constant, and the realised-count account bounds the busiest client."""
    assert all(e.holds for e in evaluate_realised_corrected(params))
    assert evaluate_realised(params, count="realised").holds
