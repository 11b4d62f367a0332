"""Property tests of FedPDM-DP Theorem 3 (22): the noise floor breaks C3 = 8 rho; C3 = 2 rho^2 d N/K^2 holds."""

import pytest
from hypothesis import example, given, settings, target

from verify.budget import examples
from verify.fedpdm.theorem3_convergence import (
    THEOREM3_COUNTEREXAMPLE,
    evaluate_theorem3,
)
from verify.strategies import fedpdm_any_noise_settings, fedpdm_noisy_settings


@pytest.mark.claim("fedpdm.theorem3")
@settings(max_examples=examples("several"))  # each example simulates 3 runs of 200 rounds
@given(params=fedpdm_noisy_settings().map(lambda p: {**p, "K": min(p["K"], 5)}))  # d rho/(8K) >= 5
@example(params={**THEOREM3_COUNTEREXAMPLE, "T": 200,
                 "runs": 3})  # docs/papers/fedpdm.md#erratum-e21: sigma = 0.1, K = 5, d = 20
def test_noise_floor_exceeds_eight_rho_sigma2(params):
    """Property: with per-coordinate noise sigma in [0.03, 0.1] and d rho/(8K) >= 5, the average stationarity measure
    exceeds zeta of (22) with C3 = 8 rho (lower confidence limit above zeta)."""
    evidence = evaluate_theorem3(params)
    target(evidence.parameters["lhs_mean"] / evidence.parameters["zeta"], label="LHS / zeta")
    assert not evidence.holds, evidence.parameters


@pytest.mark.claim("fedpdm.theorem3_corrected")
@settings(max_examples=examples("several"))
@given(params=fedpdm_any_noise_settings())
@example(params={**THEOREM3_COUNTEREXAMPLE, "T": 200, "runs": 3})
def test_corrected_noise_constant_bounds_the_average(params):
    """Property: with C3 = 2 rho^2 d N/K^2, (1/T) sum E[P] <= zeta (upper confidence limit) for noisy and noiseless
    settings of instance NC."""
    evidence = evaluate_theorem3(params, noise_constant="corrected")
    target(evidence.parameters["lhs_mean"] / evidence.parameters["zeta"], label="LHS / corrected zeta")
    assert evidence.holds, evidence.parameters
