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
