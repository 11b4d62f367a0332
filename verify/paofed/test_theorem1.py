"""Property tests of Theorem 1 (mean convergence) and its corrected statement."""

import numpy as np
import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from theory.msd import mean_threshold, paper_mean_bound, reference_instance, spectral_radius_M
from verify.paofed._common import e8_instance, instance_to_dict
from verify.paofed.theorem1 import evaluate_mean_sufficient
from verify.strategies import paofed_instances, paofed_spd_stacks

_EXAMPLES = max(5, settings.default.max_examples // 5)


@pytest.mark.claim("paofed.theorem1_sufficient")
@settings(max_examples=_EXAMPLES)
@given(params=paofed_instances())
@example(params=instance_to_dict(reference_instance()))
def test_mean_stable_below_two_over_lambda_max_when_server_weight_nonnegative(params):
    """Property: if p_m sum_l alpha_l P(K_l nonempty) <= 1 and every R_k > 0, rho(M(mu)) < 1 for every
    mu lambda_max in [0.05, 1.999] (Theorem 1's condition is sufficient)."""
    evidence = evaluate_mean_sufficient(params, grid=8)
    target(evidence.measured, label="max rho(M)")
    assert evidence.holds, evidence


@pytest.mark.claim("paofed.theorem1")
@settings(max_examples=_EXAMPLES)
@given(R=paofed_spd_stacks(4, 5), f=st.floats(min_value=0.0, max_value=2.0))
@example(R=reference_instance().R.tolist(), f=0.05 * reference_instance().lambda_max)
def test_e8_configuration_is_mean_unstable_for_every_step_size(R, f):
    """Property (the finding erratum E8 (docs/papers/paofed.md#erratum-e8)): with m = D = 5, alpha_l = 1, p_k = 1, delta
    = 0.8, l_max = 5, K = 4 and any positive definite R_k, rho(M(mu)) >= rho(M(0)) = 1.116 > 1 for every mu in [0,
    2/lambda_max]: Theorem 1's range does not guarantee convergence in mean without a condition on alpha_l."""
    inst = e8_instance(np.array(R))
    rho = spectral_radius_M(inst, f / inst.lambda_max)
    target(-rho, label="-rho(M)")
    assert rho > 1.11


@pytest.mark.claim("paofed.theorem1")
def test_reference_instance_is_mean_stable_beyond_two_over_lambda_max():
    """Property (the finding erratum E7 (docs/papers/paofed.md#erratum-e7)): the reference instance converges in mean at
    mu = 2.04/lambda_max, outside Theorem 1's range (exact threshold 2.0856/lambda_max): the condition is not
    necessary."""
    inst = reference_instance()
    assert spectral_radius_M(inst, 2.04 / inst.lambda_max) < 1.0
    assert mean_threshold(inst).lo > paper_mean_bound(inst)
