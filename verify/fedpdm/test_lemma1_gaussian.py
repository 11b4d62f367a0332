"""Property tests of FedPDM-DP Lemma 1 (classical Gaussian calibration): the finding and its correction."""

import pytest
from hypothesis import example, given, target

from verify.fedpdm.lemma1_gaussian import evaluate_classical_calibration, evaluate_classical_calibration_below_one
from verify.strategies import eps_delta_below_one, fedpdm_classical_violations


@pytest.mark.claim("fedpdm.lemma1")
@given(point=fedpdm_classical_violations())
@example(point=(10.0, 1e-5))  # the experiment's budgets, used as per-round eps, at its delta (seed lines 263-278)
@example(point=(20.0, 1e-5))
@example(point=(30.0, 1e-5))
def test_classical_calibration_is_not_dp_above_the_crossover(point):
    """Property: for eps above the crossover (eps >= 11 > eps*(delta) for delta >= 1e-12), the seed's noise
    sigma = s sqrt(2 ln(1.25/delta))/eps is not (eps, delta)-DP: the exact Gaussian profile exceeds delta."""
    epsilon, delta = point
    evidence = evaluate_classical_calibration(epsilon, delta)
    target(evidence.measured, label="delta_exact / delta")
    assert not evidence.holds, evidence


@pytest.mark.claim("fedpdm.lemma1_corrected")
@given(point=eps_delta_below_one())
@example(point=(0.5, 1e-5))
@example(point=(0.999, 0.5))  # the largest ratio found by the check (about 0.094)
@example(point=(1e-4, 1e-300))
def test_classical_calibration_is_dp_below_one(point):
    """Property: for eps in (0, 1) and delta in (0, 1), sigma = s sqrt(2 ln(1.25/delta))/eps is (eps, delta)-DP
    (Dwork & Roth Thm. A.1): the exact Gaussian profile is at most delta."""
    epsilon, delta = point
    evidence = evaluate_classical_calibration_below_one(epsilon, delta)
    target(evidence.measured, label="delta_exact / delta")
    assert evidence.holds, evidence
