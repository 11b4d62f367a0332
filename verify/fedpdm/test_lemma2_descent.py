"""Property tests of FedPDM-DP Lemma 2 (B.1): fails with noise (erratum E20, docs/papers/fedpdm.md#erratum-e20), holds
noiseless at K = N."""

import pytest
from hypothesis import example, given, settings, target

from verify.budget import examples
from verify.fedpdm.lemma2_descent import LEMMA2_COUNTEREXAMPLE, evaluate_lemma2
from verify.strategies import fedpdm_noiseless_full_settings, fedpdm_noisy_settings


@pytest.mark.claim("fedpdm.lemma2")
@settings(max_examples=examples("several"))
@given(params=fedpdm_noisy_settings())
@example(params={**LEMMA2_COUNTEREXAMPLE, "T": 200})  # docs/papers/fedpdm.md#erratum-e20: sigma = 0.03, d = 20, K = N
def test_noise_keeps_the_lagrangian_level_against_a_negative_bound(params):
    """Property: with DP-sized noise, the run average of N (L^{t+1} - L^t) minus the right side of (B.1) (conservative
    reading) is positive with its lower confidence limit: the lemma's descent is not there."""
    evidence = evaluate_lemma2(params)
    target(evidence.measured, label="gap / |RHS|")
    assert not evidence.holds, evidence.parameters


@pytest.mark.claim("fedpdm.lemma2_corrected")
@settings(max_examples=examples("several"))
@given(params=fedpdm_noiseless_full_settings())
@example(params={**LEMMA2_COUNTEREXAMPLE, "sigma": 0.0, "T": 200})
def test_noiseless_full_participation_descends(params):
    """Property: without noise and with K = N, the run average (t >= 1) of N dL_t - RHS_t is <= 0 (upper limit)."""
    evidence = evaluate_lemma2(params, side="upper")
    target(evidence.measured, label="gap / |RHS|")
    assert evidence.holds, evidence.parameters
