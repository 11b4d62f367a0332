"""Property tests of the Gaussian mechanism's zCDP parameter against numerical integration."""

import pytest
from hypothesis import example, given, target

from verify.dp.gaussian_zcdp import evaluate_gaussian_zcdp
from verify.strategies import gaussian_mechanisms, renyi_orders


@pytest.mark.claim("dp.gaussian_zcdp")
@given(mechanism=gaussian_mechanisms(), alpha=renyi_orders())
@example(mechanism=(1.0, 1.0), alpha=2.0)
@example(mechanism=(2.0 / (0.5 * 5), 0.3), alpha=32.0)  # a PGFL-style Delta = 2C/(rho D_k)
def test_renyi_divergence_matches_alpha_rho(mechanism, alpha):
    """Property: for every sensitivity Delta >= 0, sigma > 0 and order alpha > 1, the Rényi divergence
    of N(0, sigma^2) from N(Delta, sigma^2), integrated numerically, equals alpha Delta^2/(2 sigma^2)."""
    sensitivity, sigma = mechanism
    evidence = evaluate_gaussian_zcdp(sensitivity, sigma, alpha)
    target(evidence.measured, label="gap / quadrature error bound")
    assert evidence.holds, evidence
