"""Property tests of FedPDM-DP Lemma 3 (B.2): fails under partial participation
(erratum E22, docs/papers/fedpdm.md#erratum-e22); at K = N holds without noise, and with noise fails where the noise
stays below the proximal threshold in large d (erratum E21)."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.fedpdm.lemma3_stationarity import (
    LEMMA3_COUNTEREXAMPLE,
    SMALL_NOISE_COUNTEREXAMPLE,
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


@pytest.mark.claim("fedpdm.lemma3_noiseless_full")
@settings(max_examples=examples("several"))
@given(params=fedpdm_noiseless_full_settings())
@example(params={**SMALL_NOISE_COUNTEREXAMPLE, "sigma": 0.0})  # d = 200, no noise: holds
def test_full_participation_without_noise_holds_pathwise(params):
    """Property: with K = N and no noise, P^t <= RHS_t of (B.2) in every round and run."""
    evidence = evaluate_lemma3_full(params)
    target(evidence.measured, label="max P / RHS")
    assert evidence.holds, evidence.parameters


@pytest.mark.claim("fedpdm.lemma3_corrected")
@settings(max_examples=examples("few"))
@given(seed=st.integers(min_value=0, max_value=2**31 - 1), d=st.sampled_from([200, 300]))
@example(seed=0, d=200)
def test_full_participation_with_noise_below_the_threshold_fails_in_large_d(seed, d):
    """Property: with K = N = 10, sigma = 1e-3 (sigma/sqrt(K) below gamma/rho = 1e-3) and d >= 200, some round of some
    run has P^t > RHS_t of (B.2): the noise term 8 rho sigma^2 does not grow with d, the thresholding residual does;
    while the noise that moves the clients (sigma in [0.03, 0.1], d <= 40) is absorbed (second property)."""
    evidence = evaluate_lemma3_full({**SMALL_NOISE_COUNTEREXAMPLE, "seed": seed, "d": d})
    target(-evidence.measured, label="minus max P / RHS")
    assert not evidence.holds, evidence.parameters


@pytest.mark.claim("fedpdm.lemma3_corrected")
@settings(max_examples=examples("few"))
@given(params=fedpdm_noisy_settings().map(lambda p: {**p, "K": p["N"]}))
def test_full_participation_with_noise_that_moves_the_clients_holds(params):
    """Property: with K = N and sigma in [0.03, 0.1] (d in {20, 40}), P^t <= RHS_t in every round and run."""
    evidence = evaluate_lemma3_full(params)
    target(evidence.measured, label="max P / RHS")
    assert evidence.holds, evidence.parameters
