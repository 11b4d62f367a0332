"""Property tests of Theorem 2 (mean-square stability) and its corrected (seed-model) statement."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from theory.msd import reference_instance, spectral_radius_F
from verify.budget import examples
from verify.paofed._common import instance_to_dict, review_note2_instance
from verify.paofed.theorem2 import evaluate_exact_threshold, evaluate_seed_model
from verify.strategies import paofed_hard_instances, paofed_instances

_EXAMPLES = max(4, settings.default.max_examples // 20)


@pytest.mark.claim("paofed.theorem2_seed_model")
@settings(max_examples=_EXAMPLES)
@given(params=paofed_instances(max_N=30))
@example(params=instance_to_dict(reference_instance()))
def test_truncated_F_is_stable_below_one_over_lambda_max(params):
    """Property: for the seed's truncated F, rho(F_seed(mu)) < 1 at mu lambda_max in {0.5, 0.999} for instances
    with E[B_n] >= 0 and R_k > 0 (Theorem 2's bound is sufficient for the seed's own model)."""
    evidence = evaluate_seed_model(params, (0.5, 0.999))
    target(evidence.measured, label="max rho(F_seed)")
    assert evidence.holds, evidence


@pytest.mark.claim("paofed.theorem2")
@settings(max_examples=_EXAMPLES)
@given(f=st.floats(min_value=0.68, max_value=0.999))
@example(f=0.9)
def test_exact_F_unstable_inside_theorem2_range_on_reference_instance(f):
    """Property (the finding erratum E9 (docs/papers/paofed.md#erratum-e9)): on the reference instance with Gaussian
    regressors, rho(F_exact(mu)) > 1 for every mu lambda_max in [0.68, 0.999], inside Theorem 2's range (exact threshold
    0.6724/lambda_max)."""
    inst = reference_instance(f)
    rho = spectral_radius_F(inst, "exact")
    target(-rho, label="-rho(F_exact)")
    assert rho > 1.0


@pytest.mark.claim("paofed.theorem2")
def test_one_over_lambda_max_is_not_necessary_either():
    """Property (docs/papers/paofed.md#review-note-2): K = 4, D = 2, R_k = I, m = D, p = 1, delta = 0.01, l_max = 0 is
    mean-square stable at mu = 1.05/lambda_max with the exact F, outside Theorem 2's range (threshold
    1.136/lambda_max)."""
    inst = review_note2_instance()
    assert spectral_radius_F(inst, "exact", mu=1.05 / inst.lambda_max) < 1.0
    assert spectral_radius_F(inst, "seed", mu=1.05 / inst.lambda_max) > 1.0


@pytest.mark.claim("paofed.theorem2_seed_model")
@settings(max_examples=examples("several"))
@given(params=paofed_hard_instances(max_N=30))
def test_search_for_a_seed_model_counterexample_on_hard_instances(params):
    """Property (a search pushed toward a counterexample): on mid-size instances with ill-conditioned R_k (condition
    numbers up to 1e4), participation probabilities down to 1e-2 and E[B_n] >= 0, rho(F_seed(mu)) < 1 at
    mu lambda_max in {0.99, 0.999}; target() maximises rho(F_seed)."""
    evidence = evaluate_seed_model(params, (0.99, 0.999), lyapunov_max_n=0)
    target(max(evidence.parameters["rho_F_seed"].values()), label="rho(F_seed)")
    assert evidence.holds, evidence


@pytest.mark.claim("paofed.theorem2_seed_model")
@settings(max_examples=examples("several"))
@given(params=paofed_hard_instances(max_N=10))
def test_lyapunov_certificate_on_small_hard_instances(params):
    """Property: for N <= 10 a Lyapunov matrix P > 0 with ||F^T P F - P + I|| < 1 exists at the worst step size below
    1/lambda_max (a certificate of rho(F_seed) < 1 independent of Arnoldi)."""
    evidence = evaluate_seed_model(params, (0.999,), lyapunov_max_n=10)
    assert evidence.parameters["lyapunov_certified"] and evidence.holds, evidence


@pytest.mark.claim("paofed.theorem2_exact_threshold")
@settings(max_examples=examples("few"))
@given(params=paofed_instances(max_K=2, max_D=2, max_l=1))
@example(params=instance_to_dict(review_note2_instance()))
def test_exact_F_is_stable_below_its_own_threshold(params):
    """Property: with Gaussian regressors rho(F_exact(mu)) < 1 below the certified threshold mu*_exact and >= 1 at
    1.1 times its upper end; mu*_exact lambda_max is instance dependent (1.136 on docs/papers/paofed.md#review-note-2's
    instance)."""
    evidence = evaluate_exact_threshold(params)
    target(evidence.measured, label="rho below threshold")
    assert evidence.holds, evidence
