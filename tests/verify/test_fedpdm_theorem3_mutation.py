"""Mutation tests of the FedPDM-DP Theorem 3 / Lemma 2-3 / realised-count checks: a slightly wrong constant or
reading makes the confirmed corrections refute."""

import pytest

from verify.fedpdm.lemma2_descent import check_lemma2_corrected
from verify.fedpdm.lemma3_stationarity import check_lemma3_noiseless
from verify.fedpdm.theorem2_realised import check_realised_corrected
from verify.fedpdm.theorem3_constants import check_conditions_corrected
from verify.fedpdm.theorem3_convergence import check_theorem3_corrected
from verify.records import CheckContext, Verdict

CI = CheckContext(profile="ci", seed=0)


def _seed_c3(rho, d, N, K):
    """The seed's C3 = 8 rho in the corrected check."""
    return 8.0 * rho


def _half_c0(delta):
    return 0.5


@pytest.mark.parametrize(("check", "kwargs"), [
    (check_theorem3_corrected, {"C3_fn": _seed_c3}),
    (check_conditions_corrected, {"lower": 0.45}),
    (check_lemma2_corrected, {"reading": "literal"}),
    (check_lemma3_noiseless, {"rhs_scale": 0.005}),  # loose by design (max ratio 0.010): 200x is caught
    (check_realised_corrected, {"c0_fn": _half_c0}),
])
def test_corrected_checks_refute_mutants(check, kwargs):
    result = check(CI, **kwargs)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample
