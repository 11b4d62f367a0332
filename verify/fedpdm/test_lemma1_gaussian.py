"""Property tests of FedPDM-DP Lemma 1 (classical Gaussian calibration): the finding and its correction."""

import pytest
from hypothesis import example, given, target

from verify.fedpdm.lemma1_gaussian import (
    crossover_epsilon,
    evaluate_classical_calibration,
    evaluate_classical_calibration_below_crossover,
    evaluate_crossover_sharpness,
)
from verify.strategies import eps_delta_below_crossover_fraction, fedpdm_classical_violations


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
@given(point=eps_delta_below_crossover_fraction())
@example(point=(0.5 / 8.4198, 1e-5))
@example(point=(0.999999, 1e-5))  # just below eps* = 8.4198 at the experiment's delta
@example(point=(0.999999, 1e-3))  # just below eps* = 7.4635
@example(point=(0.999, 0.5))
@example(point=(1e-4, 1e-300))
def test_classical_calibration_is_dp_below_the_crossover(point):
    """Property: for delta in (0, 1) and eps = u eps*(delta), u in (0, 1), where eps*(delta) is the crossover of the
    exact Gaussian profile, sigma = s sqrt(2 ln(1.25/delta))/eps is (eps, delta)-DP; just above eps* it is not."""
    fraction, delta = point
    epsilon = fraction * crossover_epsilon(delta)
    evidence = evaluate_classical_calibration_below_crossover(epsilon, delta)
    target(evidence.measured, label="delta_exact / delta")
    assert evidence.holds, evidence
    assert evaluate_crossover_sharpness(delta).holds


def test_crossover_values_of_the_review_notes():
    """eps*(1e-5) = 8.4198 and eps*(1e-3) = 7.4635 (docs/papers/fedpdm.md#lemma-1, docs/papers/fedpdm.md#erratum-e1), to
    the printed digits."""
    assert abs(crossover_epsilon(1e-5) - 8.4198) < 5e-5 and abs(crossover_epsilon(1e-3) - 7.4635) < 5e-5
