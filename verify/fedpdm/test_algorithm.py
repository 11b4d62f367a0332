"""Property tests of FedPDM-DP Algorithm 1 (docs/papers/fedpdm.md#algorithm-1) and its noiseless convex
limit (docs/papers/fedpdm.md#stationarity, docs/papers/fedpdm.md#instance-cvx)."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.fedpdm.algorithm import (
    PROPERTY_SETTINGS,
    evaluate_noiseless_limit,
    evaluate_properties,
    evaluate_prox_step,
)
from verify.strategies import fedpdm_algorithm_settings


@pytest.mark.claim("fedpdm.algorithm_properties")
@given(setting=fedpdm_algorithm_settings(), seed=st.integers(min_value=0, max_value=2**31 - 1))
@example(setting=PROPERTY_SETTINGS[0], seed=0)  # K = 5 of N = 10, b = 10, Q_max = 5, per-round
# eps (docs/papers/fedpdm.md#instance-nc NC)
@example(setting=PROPERTY_SETTINGS[2], seed=0)  # K = N, full batch, nu = 1e-12, no
# noise (docs/papers/fedpdm.md#algorithm-1)
def test_update_equations_hold_in_every_round(setting, seed):
    """Property: in every round, y = 2x^{t+1} - x_0^t - lambda^t/rho; after (11) fired with full batches
    ||lambda^{t+1} - grad f(x^{t+1})|| <= sqrt(nu)(1 + eta(L + rho)); with K = N and no noise the x_0 block of
    (21) vanishes; 1 <= Q <= Q_max, disjoint batches, |S_0| = N, |S_t| = K; noise variance (z s)^2 with s of (19);
    unsampled clients unchanged."""
    evidence = evaluate_properties(setting, seed, 6)
    worst = max(e.measured / e.bound for e in evidence if e.parameters["property"] != "noise_variance_chi2")
    target(worst, label="worst property ratio")
    assert all(e.holds for e in evidence), [e for e in evidence if not e.holds]


@pytest.mark.claim("fedpdm.noiseless_stationarity")
@settings(max_examples=examples("several"))  # each example solves a conic program and runs 1500 rounds (about a second)
@given(seed=st.integers(min_value=0, max_value=2**31 - 1))
@example(seed=0)
def test_noiseless_full_participation_reaches_cvxpy_optimum(seed):
    """Property: on a convex l1-logistic instance (beta = 0), K = N, full batch, no noise, FedPDM's x_0 after 1500
    rounds has F gap <= 1e-8 to the CVXPY optimum with the same support, and P(x*) <= 1e-10; the prox at gamma/rho
    equals CVXPY's x_0-subproblem solution."""
    evidence = evaluate_noiseless_limit(seed, 1500)
    target(evidence.parameters["distance_to_cvxpy"], label="distance to the CVXPY optimum")
    assert evidence.holds, evidence.parameters
    assert evaluate_prox_step(seed).holds


@pytest.mark.claim("fedpdm.noiseless_stationarity")
@settings(max_examples=examples("several"))
@given(seed=st.integers(min_value=0, max_value=2**31 - 1), factor=st.sampled_from([0.1, 0.25]))
def test_wrong_prox_thresholds_miss_the_optimum(seed, factor):
    """Property: the thresholds gamma/(N rho) (factor 1/N) and rho gamma (factor rho^2 = 0.25) do not reach the optimum
    (F gap > 1e-8): only the seed's gamma/rho is the x_0-step (docs/papers/fedpdm.md#erratum-e12,
    docs/papers/fedpdm.md#erratum-e13)."""
    assert not evaluate_noiseless_limit(seed, 600, threshold_factor=factor).holds
