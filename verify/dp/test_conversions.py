"""Property tests of the zCDP -> (eps, delta) conversions: ordering, and Bun-Steinke's validity for Gaussians."""

import math

import pytest
from hypothesis import example, given, target

from verify.dp.conversions import evaluate_bun_steinke_validity, evaluate_conversion_ordering
from verify.strategies import zcdp_conversion_points


# The papers' totals at delta = 1e-5: PGFL (seed 000 Theorem IV, eq. (51); phi^(0) = 1e-3, zeta = 0.99,
# N = 300: 1.93911 under convention I), zCDP-NFL (seed 004 Chapter 3 Corollary, T = 200), and 100 rounds
# of sigma / S = 2 (rho = 12.5).
@pytest.mark.claim("dp.zcdp_conversion.ordering")
@given(point=zcdp_conversion_points())
@example(point=(1.93911, 1e-5))
@example(point=(0.0221303461, 1e-5))
@example(point=(0.639918, 1e-5))
@example(point=(12.5, 1e-5))
@example(point=(1e4, 0.99))  # a corner where eps_CKS / eps_BS is close to 1
@example(point=(1e8, 1.0 - 1e-6))  # the limit delta -> 1, rho -> infinity: eps_CKS / eps_BS = 1 - 1.7e-7
def test_exact_gaussian_below_cks_below_bun_steinke(point):
    """Property: for every rho > 0 and delta in (0, 1), the exact-Gaussian epsilon is at most the
    Canonne-Kamath-Steinke epsilon, which is at most the Bun-Steinke epsilon rho + 2 sqrt(rho log(1/delta))."""
    rho, delta = point
    evidence = evaluate_conversion_ordering(rho, delta)
    target(evidence.measured, label="max(eps_exact/eps_CKS, eps_CKS/eps_BS)")
    assert evidence.holds, evidence


@pytest.mark.claim("dp.bun_steinke_prop13")
@given(point=zcdp_conversion_points())
@example(point=(1.93911, 1e-5))  # PGFL eq. (51)
@example(point=(1.91972, 1e-5))  # PGFL, convention II
@example(point=(0.639918, 1e-5))  # zCDP-NFL Corollary, phi^(1) = 1e-3, tau = 0.99, T = 200
@example(point=(2.020034, 1e-5))
@example(point=(1e4, 0.99))
@example(point=(1e8, 1.0 - 1e-12))  # the limit delta -> 1, rho -> infinity: the ratio's supremum 1/2 (0.49997)
def test_bun_steinke_conversion_valid_for_gaussian_compositions(point):
    """Property: for a composition of Gaussian mechanisms of total zCDP rho and every delta in (0, 1),
    the exact privacy profile at eps = rho + 2 sqrt(rho log(1/delta)) is at most delta, indeed below the proven cap
    Phi(-sqrt(2 ln(1/delta))) <= delta / 2."""
    rho, delta = point
    evidence = evaluate_bun_steinke_validity(rho, delta)
    target(evidence.measured, label="delta_exact / delta")
    assert evidence.holds and evidence.parameters["below_proven_cap"], evidence
    assert evidence.parameters["proven_cap"] <= 0.5 * (1.0 + 1e-12)
    assert math.isfinite(evidence.parameters["epsilon"])
