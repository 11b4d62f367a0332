"""Mutation tests of the GTV stopping-rule checks: an orbit that does reach the dual domain, or a projection that does
not project, makes the corresponding check change its verdict."""

from fractions import Fraction

import pytest

import verify.gtv.stopping_rule as stopping_rule
from theory.gtv.stopping import DualDomainProjector, two_node_orbit, two_node_step
from verify.records import CheckContext, Verdict

CTX = CheckContext(profile="ci", seed=0)


@pytest.fixture(autouse=True)
def _fresh_caches():
    for cache in (stopping_rule.evaluate_two_node, stopping_rule.projected_gap_trajectory):
        cache.cache_clear()
    yield
    for cache in (stopping_rule.evaluate_two_node, stopping_rule.projected_gap_trajectory):
        cache.cache_clear()


def test_unmutated_orbit_matches_and_never_vanishes():
    x = (Fraction(0), Fraction(0), Fraction(0))
    for k in range(1, 30):
        x = two_node_step(*x)
        assert x == two_node_orbit(k) and x[2] != 0


def test_refutation_goes_away_when_the_dual_iterate_reaches_zero(monkeypatch):
    """A dual update that lands exactly on u = 0 from iteration 5 on (the only point of dom L_1*): the gap becomes
    finite, the exact run no longer matches the certified orbit, and the check stops refuting."""
    original = two_node_step
    calls = {"n": 0}

    def snapping(w1, w2, u, lam=Fraction(1, 2)):
        calls["n"] += 1
        n1, n2, n3 = original(w1, w2, u, lam)
        return (n1, n2, Fraction(0)) if calls["n"] % 200 >= 5 else (n1, n2, n3)

    monkeypatch.setattr(stopping_rule, "two_node_step", snapping)
    assert stopping_rule.check_gap_stopping_rule(CTX).verdict is Verdict.CONFIRMED


def test_projected_rule_fails_without_the_projection(monkeypatch):
    """Pi replaced by the identity: the dual point stays outside the domain (m_i < d), the projected gap is (34),
    +inf along the MOCHA run (which never reaches round-off convergence within the run), so the rule is refuted."""
    monkeypatch.setattr(DualDomainProjector, "__call__", lambda self, u: u)
    result = stopping_rule.check_gap_projected_stopping_rule(CTX)
    assert result.verdict is Verdict.REFUTED
    assert all(v is None for v in result.details["termination"]["seed 0, mocha"]
               ["first_k_gap_pi_below_eta_scaled"].values())


def test_projected_rule_detects_an_infeasible_scaling(monkeypatch):
    """Pi that doubles the projected point (outside the nLasso capacity balls): the dual value is -inf, the gap +inf,
    so the rule fails on the nLasso instance."""
    original = DualDomainProjector.__call__
    monkeypatch.setattr(DualDomainProjector, "__call__", lambda self, u: 2.0 * original(self, u))
    result = stopping_rule.check_gap_projected_stopping_rule(CTX)
    assert result.verdict is Verdict.REFUTED
    assert result.details["termination"]["seed 0, l2"]["first_k_gap_pi_below_eta_scaled"]["0.01"] is None
