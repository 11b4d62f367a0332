"""Property tests: the explicit F (dense) and the structured covariance recursion agree."""

import pytest
from hypothesis import given, settings, target

from verify.paofed.naive_structured import evaluate_naive_structured
from verify.strategies import paofed_instances

_EXAMPLES = max(3, settings.default.max_examples // 25)


@pytest.mark.claim("paofed.naive_equals_structured")
@settings(max_examples=_EXAMPLES)
@given(params=paofed_instances(max_N=20))
def test_naive_and_structured_routes_agree(params):
    """Property: for any small instance (N <= 20) and both models, MSD_inf, MSD_n (n <= 30) and rho(F) from the
    explicit block-Kronecker F equal those of the matrix-free (S1)/(S2)/Arnoldi route (1e-10 / 1e-8 relative)."""
    for evidence in evaluate_naive_structured(params):
        label = f"{evidence.parameters['quantity']} ({evidence.parameters['model']})"
        target(evidence.measured / evidence.bound, label=label)
        assert evidence.holds, evidence
