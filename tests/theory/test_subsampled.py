"""Unit tests of theory.privacy.subsampled: validation, defining properties, and dp-accounting as an oracle."""

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.rdp import RdpAccountant

from theory.privacy.conversions import gaussian_sigma_classical
from theory.privacy.subsampled import (
    abadi_constant_c0,
    noise_multiplier_fedpdm,
    rdp_poisson_subsampled_gaussian,
    rdp_to_approx_dp,
    total_epsilon_fedpdm_linear,
    total_epsilon_fedpdm_printed,
)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: noise_multiplier_fedpdm(0.0, 1e-5), r"epsilon must be a finite real in \(0, inf\), got 0.0"),
    (lambda: noise_multiplier_fedpdm(1.0, 1.0), r"delta must be a finite real in \(0, 1\), got 1.0"),
    (lambda: total_epsilon_fedpdm_printed(1.0, 1.0, 0.05, 300, 1.0), r"q must be a finite real in \(0, 1\), got 1.0"),
    (lambda: total_epsilon_fedpdm_printed(1.0, 0.1, 0.0, 300, 1.0), r"p must be a finite real in \(0, 1\], got 0.0"),
    (lambda: total_epsilon_fedpdm_linear(1.0, 0.1, 0.05, 0, 1.0), r"T must be an integer >= 1, got 0"),
    (lambda: total_epsilon_fedpdm_linear(1.0, 0.1, 0.05, 300, -1.0), r"c0 must be a finite real in \(0, inf\)"),
    (lambda: abadi_constant_c0(0.9), r"delta must be a finite real in \(0, 0.8\), got 0.9"),
    (lambda: rdp_poisson_subsampled_gaussian(0.0, 1.0, [2]), r"q must be a finite real in \(0, 1\], got 0.0"),
    (lambda: rdp_poisson_subsampled_gaussian(0.1, 0.0, [2]), r"z must be a finite real in \(0, inf\)"),
    (lambda: rdp_poisson_subsampled_gaussian(0.1, 1.0, [1, 2]), r"orders\[0\] must be an integer >= 2, got 1"),
    (lambda: rdp_poisson_subsampled_gaussian(0.1, 1.0, [2.5]), r"orders must be integers >= 2"),
    (lambda: rdp_to_approx_dp([0.1, 0.2], [2], 1e-5), r"rdp must have the shape of orders"),
    (lambda: rdp_to_approx_dp([-0.1], [2], 1e-5), r"rdp\[0\] must be a finite real in \[0, inf\)"),
    (lambda: rdp_to_approx_dp([0.1], [2], 0.0), r"delta must be a finite real in \(0, 1\)"),
])
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_noise_multiplier_is_the_classical_calibration_below_one_and_extends_it():
    for eps in (1e-3, 0.3, 0.999):
        for delta in (1e-12, 1e-5, 0.5):
            assert noise_multiplier_fedpdm(eps, delta) == pytest.approx(gaussian_sigma_classical(1.0, eps, delta),
                                                                         rel=4e-16)
    # eq. (5) for eps >= 1, where the Dwork-Roth theorem (and gaussian_sigma_classical) stops.
    assert noise_multiplier_fedpdm(10.0, 1e-5) * 10.0 == pytest.approx(math.sqrt(2 * math.log(1.25e5)), rel=4e-16)


def test_printed_and_linear_forms():
    lin = total_epsilon_fedpdm_linear(0.7, 0.25, 0.05, 300, 1.4007)
    assert lin == pytest.approx(1.4007 * 0.25 * 0.7 * math.sqrt(15 / 0.75), rel=1e-15)
    assert total_epsilon_fedpdm_printed(0.7, 0.25, 0.05, 300, 1.4007) == pytest.approx(0.25 * lin, rel=1e-15)
    # Regression value (docs/papers/fedpdm.md#theorem-2): c0 = 1.4007 at delta = 1e-5; it tends to sqrt(2) from below.
    assert abadi_constant_c0(1e-5) == pytest.approx(1.4007044775966355, rel=1e-14)
    assert abadi_constant_c0(1e-5) < abadi_constant_c0(1e-8) < math.sqrt(2)


def test_rdp_reduces_to_gaussian_without_subsampling_and_grows_with_q():
    orders = np.array([2, 3, 17, 256, 4096])
    assert np.allclose(rdp_poisson_subsampled_gaussian(1.0, 3.0, orders), orders / 18.0, rtol=1e-12, atol=0)
    small, large = (rdp_poisson_subsampled_gaussian(q, 3.0, orders) for q in (0.01, 0.2))
    assert np.all(small < large) and np.all(large < orders / 18.0)
    # Order 2 in closed form: A_2 = 1 + q^2 (e^{1/z^2} - 1).
    q, z = 0.07, 1.7
    assert rdp_poisson_subsampled_gaussian(q, z, [2])[0] == pytest.approx(math.log1p(q * q * math.expm1(1 / z**2)),
                                                                          rel=1e-14)


@pytest.mark.parametrize(("q", "z"), [(0.02, 9.69), (0.3, 4.84), (0.05, 1.0), (0.5, 0.7)])
def test_rdp_matches_dp_accounting(q, z):
    """Oracle: dp-accounting's RdpAccountant on PoissonSampledDpEvent(GaussianDpEvent) at integer orders."""
    orders = [2, 3, 5, 8, 16, 32, 64, 128, 256, 512, 1024]
    acc = RdpAccountant(orders=orders)
    acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), 1)
    ours = rdp_poisson_subsampled_gaussian(q, z, orders)
    assert np.allclose(ours, np.asarray(acc.rdp), rtol=1e-9, atol=0)


def test_rdp_conversion_takes_the_grid_minimum():
    orders = np.arange(2, 200)
    rdp = 15 * rdp_poisson_subsampled_gaussian(0.1, 4.0, orders)
    eps, order = rdp_to_approx_dp(rdp, orders, 1e-5)
    values = rdp + math.log(1e5) / (orders - 1)
    assert eps == values.min() and order == orders[np.argmin(values)]
