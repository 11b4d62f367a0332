"""Unit tests of theory.privacy.composition."""

import math

import pytest

from theory.privacy import zcdp_compose, zcdp_total_geometric, zcdp_total_variance_decay


def test_validation_names_the_parameter():
    with pytest.raises(ValueError, match=r"rhos\[1\] must be a finite real in \[0, inf\)"):
        zcdp_compose([0.1, -0.2])
    with pytest.raises(ValueError, match="rounds must be an integer >= 1"):
        zcdp_total_geometric(0.1, 1.1, 0)
    with pytest.raises(ValueError, match=r"growth must be a finite real in \(0, inf\)"):
        zcdp_total_geometric(0.1, 0.0, 3)
    with pytest.raises(ValueError, match=r"zeta must be a finite real in \(0, 1\]"):
        zcdp_total_variance_decay(0.1, 1.5, 3, first_release_decayed=True)
    with pytest.raises(TypeError, match="first_release_decayed must be True or False"):
        zcdp_total_variance_decay(0.1, 0.9, 3, first_release_decayed=1)


def test_paper_values_and_conventions():
    # Regression values from docs/papers/pgfl.md#theorem-4 table (phi0 = 0.001, zeta = 0.99, 300 rounds), printed
    # to 5 decimals: abs=5e-6 is half a unit in the last printed place.
    assert zcdp_total_variance_decay(1e-3, 0.99, 300, first_release_decayed=True) == pytest.approx(1.93911, abs=5e-6)
    assert zcdp_total_variance_decay(1e-3, 0.99, 300, first_release_decayed=False) == pytest.approx(1.91972, abs=5e-6)
    assert zcdp_total_geometric(1e-3, 0.99, 300) == pytest.approx(0.09510, abs=5e-6)


def test_degenerate_and_overflowing_schedules():
    # growth 1: 7 x 0.2 = 1.4 up to the rounding of a 7-term sum (rel 1e-15 ~ 5 ulps)
    assert zcdp_total_geometric(0.2, 1.0, 7) == pytest.approx(1.4, rel=1e-15)
    assert zcdp_total_variance_decay(0.2, 1.0, 7, first_release_decayed=True) == pytest.approx(1.4, rel=1e-15)
    assert zcdp_total_geometric(0.1, 2.0, 2000) == math.inf  # 2^2000 overflows a double
    assert zcdp_total_geometric(0.0, 2.0, 2000) == 0.0


def test_zeta_near_one_keeps_full_relative_accuracy():
    """Forming 1/zeta first would lose about u/|ln zeta| relative accuracy; the sum must not."""
    zeta, rounds = 1.0 - 1e-9, 1000
    exact = math.fsum(1e-3 * zeta ** -n for n in range(1, rounds + 1))
    # full accuracy: 1e-13 relative, four decades below the u/|ln zeta| ~ 1e-7 a naive 1/zeta would lose
    assert zcdp_total_variance_decay(1e-3, zeta, rounds, first_release_decayed=True) == pytest.approx(exact, rel=1e-13)
