"""Unit tests of theory.privacy.subsampled_accounting: dp-accounting's RDP and PLD accountants as oracles for the
DP-SGD-style schedule (T steps of the Poisson-subsampled Gaussian at rate q, noise multiplier z)."""

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld, rdp

from theory.privacy.subsampled import rdp_poisson_subsampled_gaussian, rdp_to_approx_dp
from theory.privacy.subsampled_accounting import (
    SUBSAMPLED_ORDERS,
    calibrate_noise_multiplier_subsampled,
    calibrate_steps_subsampled,
    epsilon_fedcheck_rdp_subsampled,
    epsilon_pld_accountant_subsampled,
    epsilon_rdp_accountant_subsampled,
    rdp_to_approx_dp_improved,
)

#: (q, z, T, delta): DP-SGD's MNIST setting (Abadi et al. 2016: q = 0.01, z = 1.1), a large-q and a small-T case.
SCHEDULES = [(0.01, 1.1, 1000, 1e-5), (0.2, 3.0, 50, 1e-6), (0.001, 0.8, 20, 1e-5), (0.05, 2.0, 3000, 1e-5)]


def _dp_accounting_rdp(q, z, T, delta, orders=None) -> float:
    acc = rdp.RdpAccountant() if orders is None else rdp.RdpAccountant(orders=[float(a) for a in orders])
    acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), T)
    return float(acc.get_epsilon(delta))


@pytest.mark.parametrize(("q", "z", "T", "delta"), SCHEDULES)
def test_fedcheck_rdp_matches_dp_accounting_on_the_same_orders(q, z, T, delta):
    """Oracle: dp-accounting's RdpAccountant, built independently here, on fedcheck's integer orders."""
    ours = epsilon_fedcheck_rdp_subsampled(z, q, T, delta)[0]
    assert ours == pytest.approx(_dp_accounting_rdp(q, z, T, delta, SUBSAMPLED_ORDERS), rel=1e-9)
    # the wrapper is the same library call
    assert epsilon_rdp_accountant_subsampled(z, q, T, delta, orders=SUBSAMPLED_ORDERS) == pytest.approx(ours,
                                                                                                         rel=1e-12)


@pytest.mark.parametrize(("q", "z", "T", "delta"), SCHEDULES)
def test_the_three_accountants_agree_as_upper_bounds(q, z, T, delta):
    """The PLD (pessimistic: an upper bound, and the tightest) sits below both RDP accounts (fedcheck's integer grid
    and the library's own grid with fractional orders: neither grid is finer everywhere, so neither RDP value is
    ordered against the other; at q = 0.001, z = 0.8, T = 20 they differ by 1 %)."""
    ours = epsilon_fedcheck_rdp_subsampled(z, q, T, delta)[0]
    library = epsilon_rdp_accountant_subsampled(z, q, T, delta)
    assert library == pytest.approx(_dp_accounting_rdp(q, z, T, delta), rel=1e-12)
    acc = pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), T)
    oracle = float(acc.get_epsilon(delta))
    ours_pld = epsilon_pld_accountant_subsampled(z, q, T, delta)
    assert ours_pld == pytest.approx(oracle, rel=1e-12)
    assert ours_pld <= min(ours, library)


def test_abadi_mnist_value():
    """Regression value (provenance: dp-accounting's PLD accountant, pessimistic, interval 1e-4): q = 0.01, z = 1.1,
    T = 1000 steps (10 epochs), delta = 1e-5 gives epsilon about 1.5; RDP about 1.7."""
    assert 1.50 <= epsilon_pld_accountant_subsampled(1.1, 0.01, 1000, 1e-5) <= 1.53
    assert 1.70 <= epsilon_fedcheck_rdp_subsampled(1.1, 0.01, 1000, 1e-5)[0] <= 1.74


def test_without_subsampling_t_steps_are_one_step_at_z_over_sqrt_t():
    a = epsilon_fedcheck_rdp_subsampled(3.0, 1.0, 9, 1e-5)[0]
    b = epsilon_fedcheck_rdp_subsampled(1.0, 1.0, 1, 1e-5)[0]
    assert a == pytest.approx(b, rel=1e-12)


def test_epsilon_is_monotone_in_each_parameter():
    base = epsilon_fedcheck_rdp_subsampled(1.5, 0.02, 500, 1e-5)[0]
    assert epsilon_fedcheck_rdp_subsampled(1.6, 0.02, 500, 1e-5)[0] < base  # more noise
    assert epsilon_fedcheck_rdp_subsampled(1.5, 0.01, 500, 1e-5)[0] < base  # sampled less often
    assert epsilon_fedcheck_rdp_subsampled(1.5, 0.02, 400, 1e-5)[0] < base  # fewer steps
    assert epsilon_fedcheck_rdp_subsampled(1.5, 0.02, 500, 1e-4)[0] < base  # larger delta


def test_improved_conversion_is_never_above_the_standard_one_and_takes_the_grid_minimum():
    orders = np.arange(2, 300)
    values = 200 * rdp_poisson_subsampled_gaussian(0.05, 1.3, orders)
    improved, order = rdp_to_approx_dp_improved(values, orders, 1e-5)
    assert improved <= rdp_to_approx_dp(values, orders, 1e-5)[0]
    a = orders.astype(float)
    candidates = values + np.log1p(-1 / a) - np.log(1e-5 * a) / (a - 1)
    assert improved == pytest.approx(max(0.0, candidates.min()), rel=1e-15) and order == orders[np.argmin(candidates)]


@pytest.mark.parametrize("accountant", ["fedcheck_rdp", "rdp_accountant",
                                        pytest.param("pld_accountant", marks=pytest.mark.slow)])  # PLD: 30 s
def test_calibrated_noise_multiplier_is_the_smallest_that_meets_the_target(accountant):
    account = {"fedcheck_rdp": lambda z: epsilon_fedcheck_rdp_subsampled(z, 0.01, 500, 1e-5)[0],
               "rdp_accountant": lambda z: epsilon_rdp_accountant_subsampled(z, 0.01, 500, 1e-5),
               "pld_accountant": lambda z: epsilon_pld_accountant_subsampled(z, 0.01, 500, 1e-5)}[accountant]
    z, achieved = calibrate_noise_multiplier_subsampled(1.0, 1e-5, 0.01, 500, accountant=accountant, rtol=1e-6)
    assert achieved <= 1.0 and account(z) == pytest.approx(achieved, rel=1e-12)
    assert account(z * (1 - 2e-6)) > 1.0


def test_calibrated_steps_are_the_most_that_meet_the_target():
    T, achieved = calibrate_steps_subsampled(3.0, 1e-5, 1.1, 0.01)
    assert achieved <= 3.0 < epsilon_fedcheck_rdp_subsampled(1.1, 0.01, T + 1, 1e-5)[0]
    assert epsilon_fedcheck_rdp_subsampled(1.1, 0.01, T, 1e-5)[0] == achieved
    # a target no number of steps reaches within the cap returns the cap
    assert calibrate_steps_subsampled(1e6, 1e-5, 50.0, 0.001, max_steps=100)[0] == 100


@pytest.mark.parametrize(("call", "match"), [
    (lambda: epsilon_fedcheck_rdp_subsampled(0.0, 0.1, 10, 1e-5), r"noise_multiplier must be a finite real in \(0"),
    (lambda: epsilon_fedcheck_rdp_subsampled(1.0, 0.0, 10, 1e-5), r"sampling_rate must be a finite real in \(0, 1\]"),
    (lambda: epsilon_fedcheck_rdp_subsampled(1.0, 1.5, 10, 1e-5), r"sampling_rate must be a finite real in \(0, 1\]"),
    (lambda: epsilon_fedcheck_rdp_subsampled(1.0, 0.1, 0, 1e-5), r"steps must be an integer >= 1, got 0"),
    (lambda: epsilon_fedcheck_rdp_subsampled(1.0, 0.1, 2.5, 1e-5), r"steps must be an integer >= 1, got 2.5"),
    (lambda: epsilon_pld_accountant_subsampled(1.0, 0.1, 10, 1.0), r"delta must be a finite real in \(0, 1\)"),
    (lambda: calibrate_noise_multiplier_subsampled(1.0, 1e-5, 0.1, 10, accountant="x"), r"accountant must be one of"),
    (lambda: calibrate_noise_multiplier_subsampled(1e-9, 1e-12, 1.0, 10**6, z_max=10.0), r"not met .* even by"),
    (lambda: calibrate_steps_subsampled(0.01, 1e-5, 0.5, 0.5), r"a single step .* already has epsilon"),
    (lambda: rdp_to_approx_dp_improved([0.1, math.nan], [2, 3], 1e-5), r"rdp\[1\] must be a real in \[0, inf\]"),
])
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()
