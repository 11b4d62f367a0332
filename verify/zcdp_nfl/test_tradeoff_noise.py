"""Property tests of the noise term of the zCDP-NFL privacy-accuracy trade-off, P2 (23)-(24)."""

from fractions import Fraction

import pytest
from hypothesis import example, given

from verify.strategies import nfl_tradeoff_points
from verify.zcdp_nfl.tradeoff_noise import (
    evaluate_noise_term,
    noise_term_23,
    noise_term_24_corrected,
    noise_term_24_printed,
)


@pytest.mark.claim("zcdp_nfl.tradeoff_1_over_k")
@given(point=nfl_tradeoff_points())
@example(point=([1.0, 1.0], 1.0, 0.5))
@example(point=([0.0025] * 50, 1e-3, 0.99))
def test_printed_noise_term_is_1_over_k_of_23(point):
    """Property: at equal budgets the printed (24) is exactly (23)/K, so it equals (23) only for K = 1."""
    deltas, phi, tau = point
    printed = noise_term_24_printed(deltas, phi, tau)
    reference = noise_term_23(deltas, [phi] * len(deltas), tau)
    assert printed * len(deltas) == reference
    assert evaluate_noise_term(deltas, phi, tau, equal_budget_fn=noise_term_24_printed).holds == (len(deltas) == 1)


@pytest.mark.claim("zcdp_nfl.tradeoff_noise_term")
@given(point=nfl_tradeoff_points())
@example(point=([0.0025] * 50, 1e-3, 0.99))
def test_corrected_noise_term_equals_23(point):
    """Property: sum_k Delta_k^2/(2 phi (1 - tau)) equals (23) with phi_k = phi, in exact rational arithmetic."""
    deltas, phi, tau = point
    evidence = evaluate_noise_term(deltas, phi, tau)
    assert evidence.holds, evidence
    assert noise_term_24_corrected(deltas, phi, tau) == noise_term_23(deltas, [phi] * len(deltas), tau) > Fraction(0)
