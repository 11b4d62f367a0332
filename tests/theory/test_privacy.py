"""Unit tests of theory.privacy.gaussian."""

import math

import numpy as np
import pytest

from theory.privacy import gaussian_sigma_for_zcdp, gaussian_zcdp, renyi_divergence_gaussians


@pytest.mark.parametrize("sigma", [0.0, -1.0, math.nan, -math.inf])
def test_sigma_must_be_positive(sigma):
    with pytest.raises(ValueError, match=r"sigma must be a finite real in \(0, inf\)"):
        gaussian_zcdp(1.0, sigma)


@pytest.mark.parametrize("sensitivity", [-1.0, -1e-300, math.nan, math.inf])
def test_sensitivity_must_be_nonnegative_and_finite(sensitivity):
    with pytest.raises(ValueError, match=r"sensitivity must be a finite real in \[0, inf\)"):
        gaussian_zcdp(sensitivity, 1.0)


def test_type_errors_name_the_parameter():
    with pytest.raises(TypeError, match="sigma must be a real number"):
        gaussian_zcdp(1.0, "2")
    with pytest.raises(TypeError, match="sensitivity must be a real number"):
        gaussian_zcdp(True, 1.0)


def test_degenerate_values_are_explicit():
    assert gaussian_zcdp(0.0, 1.0) == 0.0
    assert gaussian_zcdp(5.0, math.inf) == 0.0  # infinite noise releases nothing
    assert gaussian_sigma_for_zcdp(0.0, 0.3) == 0.0
    with pytest.raises(ValueError, match=r"rho must be a finite real in \(0, inf\)"):
        gaussian_sigma_for_zcdp(1.0, 0.0)


def test_extreme_scales_neither_overflow_nor_underflow():
    # sensitivity^2 / (2 sigma^2) with both at 1e+-200: squaring either alone over/underflows a double
    assert gaussian_zcdp(1e200, 1e200) == 0.5
    assert gaussian_zcdp(1e-200, 1e-200) == 0.5


@pytest.mark.parametrize("sensitivity", [1e-6, 0.3, 1.0, 7.5, 1e4])
@pytest.mark.parametrize("rho", [1e-8, 1e-3, 0.5, 10.0])
def test_sigma_and_rho_round_trip(sensitivity, rho):
    sigma = gaussian_sigma_for_zcdp(sensitivity, rho)
    assert abs(gaussian_zcdp(sensitivity, sigma) - rho) <= 8 * np.finfo(float).eps * rho  # ~4 roundings each way


def test_renyi_divergence_validation_and_linearity_in_alpha():
    with pytest.raises(ValueError, match=r"alpha must be a finite real in \(1, inf\)"):
        renyi_divergence_gaussians(1.0, 1.0, 1.0)
    values = [renyi_divergence_gaussians(2.0, 3.0, a) for a in (2.0, 4.0, 8.0)]
    assert values[1] == 2 * values[0] and values[2] == 2 * values[1]
