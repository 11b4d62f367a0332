"""Unit tests of theory.bounds: input validation and structural properties."""

import math

import numpy as np
import pytest

from theory.bounds import (
    corollary_single_step_bound,
    intercluster_bound,
    intercluster_bound_recursive,
    intercluster_bound_sum,
)

ALL_FORMS = [intercluster_bound, intercluster_bound_sum, intercluster_bound_recursive]


@pytest.mark.parametrize("form", ALL_FORMS)
@pytest.mark.parametrize(
    ("taus", "eta", "match"),
    [
        ([0.5, 1.5], 1.0, r"taus\[1\] must be a finite real in \[0, 1\]"),
        ([-1e-300], 1.0, r"taus\[0\] must be a finite real in \[0, 1\]"),
        ([0.2, math.nan], 1.0, r"taus\[1\] must be a finite real in \[0, 1\], got nan"),
        ([], 1.0, r"taus must have at least 1 element"),
        ([[0.1, 0.2]], 1.0, r"taus must be one-dimensional"),
        ([0.1], -1.0, r"eta must be a finite real in \[0, inf\)"),
        ([0.1], math.nan, r"eta must be a finite real"),
        ([0.1], math.inf, r"eta must be a finite real"),
    ],
)
def test_bad_input_raises_value_error_naming_the_parameter(form, taus, eta, match):
    with pytest.raises(ValueError, match=match):
        form(taus, eta)


@pytest.mark.parametrize("form", ALL_FORMS)
def test_non_numeric_input_raises_type_error(form):
    with pytest.raises(TypeError, match="eta must be a real number"):
        form([0.1], "1")
    with pytest.raises(TypeError, match="taus must be a sequence of real numbers"):
        form(["a"], 1.0)


def test_result_is_read_only_and_has_one_entry_per_iteration():
    bound = intercluster_bound([0.1, 0.2, 0.3], 2.0)
    assert bound.shape == (3,)
    with pytest.raises(ValueError):
        bound[0] = 0.0


def test_degenerate_schedules():
    assert np.all(intercluster_bound(np.zeros(5), 3.0) == 0.0)
    assert np.all(intercluster_bound([1.0, 0.0, 0.3], 3.0) == 3.0)  # tau = 1 saturates at eta forever
    assert np.all(intercluster_bound([0.3, 0.6], 0.0) == 0.0)


def test_tiny_taus_have_no_cancellation():
    """1 - prod(1 - tau) for tau = 1e-12 must come out to relative precision, not 1e-4."""
    taus = np.full(10, 1e-12)
    expected = -math.expm1(10 * math.log1p(-1e-12))
    assert intercluster_bound(taus, 1.0)[-1] == pytest.approx(expected, rel=1e-15)  # log1p/expm1: a few ulps
    assert intercluster_bound_sum(taus, 1.0)[-1] == pytest.approx(expected, rel=1e-14)  # + a 10-term sum's rounding


def test_corollary_validates_and_multiplies():
    assert corollary_single_step_bound(0.25, 4.0) == 1.0  # tau eta = 0.25 x 4, exact in binary
    with pytest.raises(ValueError, match=r"tau_n must be a finite real in \[0, 1\]"):
        corollary_single_step_bound(1.5, 1.0)
    with pytest.raises(ValueError, match=r"eta must be a finite real in \[0, inf\)"):
        corollary_single_step_bound(0.5, -2.0)


def _literal_loop(taus, eta):
    """The printed sum, one B_m at a time with fresh arrays (the former implementation of intercluster_bound_sum)."""
    tau = np.asarray(taus, dtype=np.float64)
    one_minus = 1.0 - tau
    out = np.empty_like(tau)
    for m in range(1, tau.size + 1):
        suffix = np.ones(m)
        suffix[:-1] = np.cumprod(one_minus[1:m][::-1])[::-1]
        out[m - 1] = np.sum(suffix * tau[:m] * eta)
    return out


@pytest.mark.parametrize("n", [1, 2, 3, 8, 9, 130, 700])
def test_the_literal_sum_keeps_its_bits(n):
    """intercluster_bound_sum works in one scratch row; every B_m keeps the bits of the textbook loop (the same
    products in the same order, the same summation), with taus of 0 and 1 among them."""
    rng = np.random.default_rng(n)
    taus = np.where(rng.random(n) < 0.2, rng.choice([0.0, 1.0], n), rng.random(n))
    eta = float(10.0 ** rng.uniform(-3, 3))
    assert np.array_equal(intercluster_bound_sum(taus, eta), _literal_loop(taus, eta))
