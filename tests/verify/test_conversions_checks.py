"""The zCDP-conversion checks can fail: each refutes a slightly wrong converter (mutation tests)."""

import math

import pytest

from theory.privacy.conversions import (
    zcdp_to_approx_dp_bun_steinke,
    zcdp_to_approx_dp_cks,
    zcdp_to_approx_dp_exact_gaussian,
)
from verify.dp.conversions import check_bun_steinke_prop13, check_conversion_ordering
from verify.records import CheckContext, Verdict


def _exact_one_percent_high(rho, delta):
    return zcdp_to_approx_dp_exact_gaussian(rho, delta) * 1.01


def _cks_permille_high(rho, delta):
    return zcdp_to_approx_dp_cks(rho, delta) * 1.001


def _bun_steinke_permille_low(rho, delta):
    return zcdp_to_approx_dp_bun_steinke(rho, delta) * 0.999


def _bun_steinke_one_percent_low(rho, delta):
    return zcdp_to_approx_dp_bun_steinke(rho, delta) * 0.99


def _bun_steinke_sd_for_variance(rho, delta):
    """A plausible slip: the CDP step with tau = sqrt(rho) instead of sqrt(2 rho)."""
    return rho + math.sqrt(2.0 * rho * math.log(1.0 / delta))


@pytest.mark.parametrize(
    ("check", "kwargs"),
    [
        (check_conversion_ordering, {"exact_fn": _exact_one_percent_high}),
        (check_conversion_ordering, {"cks_fn": _cks_permille_high}),
        (check_conversion_ordering, {"bs_fn": _bun_steinke_permille_low}),
        (check_conversion_ordering, {"bs_fn": _bun_steinke_sd_for_variance}),
        (check_bun_steinke_prop13, {"epsilon_fn": _bun_steinke_one_percent_low}),
        (check_bun_steinke_prop13, {"epsilon_fn": _bun_steinke_sd_for_variance}),
    ],
    ids=["ordering-exact+1%", "ordering-cks+0.1%", "ordering-bs-0.1%", "ordering-bs-tau-slip",
         "prop13-bs-1%", "prop13-bs-tau-slip"],
)
def test_checks_refute_a_slightly_wrong_converter(check, kwargs):
    """The smallest gaps the checks see: exact/CKS 3.5e-3, CKS/BS 3.3e-4; BS loses validity at -1% (large rho)."""
    result = check(CheckContext(), **kwargs)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample and result.measured > result.bound


@pytest.mark.parametrize("check", [check_conversion_ordering, check_bun_steinke_prop13])
def test_same_seed_same_numbers_different_seed_different_points(check):
    a, b, c = check(CheckContext(seed=5)), check(CheckContext(seed=5)), check(CheckContext(seed=6))
    assert a.details == b.details
    assert a.details != c.details
