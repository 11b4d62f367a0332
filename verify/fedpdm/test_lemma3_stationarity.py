"""Property tests of FedPDM-DP Lemma 3 (B.2): fails under partial participation
(erratum E22, docs/papers/fedpdm.md#erratum-e22), holds at K = N."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.fedpdm.lemma3_stationarity import (
    LEMMA3_COUNTEREXAMPLE,
    evaluate_lemma3_exact,
    evaluate_lemma3_full,
)
from verify.strategies import fedpdm_noiseless_full_settings, fedpdm_noisy_settings


@pytest.mark.claim("fedpdm.lemma3")
@settings(max_examples=examples("several"))
@given(N=st.sampled_from([40, 80]), d=st.sampled_from([20, 30]))
@example(N=40, d=20)
def test_some_of_six_partial_participation_instances_violate(N, d):
    """Property: with K = 1, N >= 40 and d >= 20, among the first six instances (seeds 0-5) at least one has
    P^t > E_{S_t}[RHS of (B.2)] with the expectation over the sampled client computed exactly."""
    ratios = [evaluate_lemma3_exact({**LEMMA3_COUNTEREXAMPLE, "N": N, "d": d, "seed": s, "rounds": 4}).measured
              for s in range(6)]
    target(max(ratios), label="max P / E[RHS]")
    assert max(ratios) > 1.0, ratios


@pytest.mark.claim("fedpdm.lemma3_corrected")
@settings(max_examples=examples("several"))
@given(params=st.one_of(fedpdm_noiseless_full_settings(), fedpdm_noisy_settings().map(lambda p: {**p, "K": p["N"]})))
def test_full_participation_holds_pathwise(params):
    """Property: with K = N, P^t <= RHS_t of (B.2) in every round and run, with and without noise."""
    evidence = evaluate_lemma3_full(params)
    target(evidence.measured, label="max P / RHS")
    assert evidence.holds, evidence.parameters
