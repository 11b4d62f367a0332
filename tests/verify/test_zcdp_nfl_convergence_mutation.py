"""Mutation tests of the zCDP-NFL convergence checks: a slightly wrong algorithm, closed form or ground truth makes
the corresponding check stop confirming (REFUTED, or NOT_CHECKABLE for the three-way trade-off decision)."""

import dataclasses

import pytest

import reference_impl.zcdp_nfl as ref
import reference_impl.zcdp_nfl.algorithm as algorithm
import theory.zcdp_nfl.network as _network
from verify.records import CheckContext, Verdict
from verify.zcdp_nfl import (
    _runs,
    constant_step,
    empirical_rate,
    lemma2,
    network_form,
    theorem2,
    theorem3,
    tradeoff_accuracy,
)

CTX = CheckContext(profile="ci", seed=0)


@pytest.fixture(autouse=True)
def _fresh_caches():
    for cache in (_runs._problem, _runs._truth, empirical_rate._gaps):
        cache.cache_clear()
    yield
    for cache in (_runs._problem, _runs._truth, empirical_rate._gaps):
        cache.cache_clear()


def test_network_form_detects_a_wrong_primal_denominator(monkeypatch):
    """1/eta + 2 rho d_k + 1e-6 in the primal step: the matrix form no longer matches the iterates."""
    original = algorithm._primal_step
    monkeypatch.setattr(algorithm, "_primal_step", lambda wt, nb, ga, g, inv_eta, d, rho: original(
        wt, nb, ga, g, inv_eta + 1e-6, d, rho))
    assert network_form.check_network_form(CTX).verdict is Verdict.REFUTED


def test_lemma2_detects_d_instead_of_d_squared(monkeypatch):
    """The corrected Lemma II check evaluated with the printed (2/rho) D^(n+1) last term
    (erratum E13, docs/papers/zcdp_nfl.md#erratum-e13) is refuted."""
    original = _network.lemma2_sides
    monkeypatch.setattr(lemma2, "lemma2_sides", lambda *a, variant="D2": original(*a, variant="D"))
    assert lemma2.check_lemma2_corrected(CTX).verdict is Verdict.REFUTED


def test_consensus_gap_detects_a_wrong_optimum(monkeypatch):
    """F* reported 1e-3 too high (a wrong ground truth): F(w_bar) - F* goes negative."""
    original = _runs.truth_from
    monkeypatch.setattr(theorem2, "truth_from",
                        lambda s: dataclasses.replace(original(s), F_star=original(s).F_star + 1e-3))
    assert theorem2.check_consensus_gap(CTX).verdict is Verdict.REFUTED


def test_nonsummable_check_detects_a_summable_schedule(monkeypatch):
    """eta0/sqrt(n) silently replaced by eta0/n^2: the corrected Theorem III check fails."""
    monkeypatch.setattr(ref.StepSchedule, "exponent", property(lambda self: -2.0))
    assert theorem3.check_nonsummable(CTX).verdict is Verdict.REFUTED


def test_constant_step_check_detects_a_missing_1_over_k(monkeypatch):
    """The regulariser's subgradient without its 1/K: the runs converge to the wrong point."""
    original = ref.NFLProblem.regularizer_subgradient
    monkeypatch.setattr(ref.NFLProblem, "regularizer_subgradient", lambda self, w: original(self, w) * self.K)
    assert constant_step.check_constant_step_conditions(CTX).verdict is Verdict.REFUTED


def test_tradeoff_check_detects_noise_that_ignores_the_budget(monkeypatch):
    """S2 variances that do not depend on phi1: the error no longer falls with the budget."""
    original = ref.PrivacySchedule.variances
    monkeypatch.setattr(ref.PrivacySchedule, "variances",
                        lambda self, problem, rho, etas: original(dataclasses.replace(self, phi1=1e-3), problem, rho,
                                                                  etas))
    assert tradeoff_accuracy.check_tradeoff_accuracy(CTX).verdict is not Verdict.CONFIRMED


def test_rate_check_detects_a_schedule_that_is_not_harmonic(monkeypatch):
    """eta0/n silently replaced by eta0/sqrt(n): every setting converges fast, so the instance dependence is no longer
    shown (refuted) and the O(1/T) reading is no longer refuted."""
    exponent = ref.StepSchedule.exponent.fget
    monkeypatch.setattr(ref.StepSchedule, "exponent",
                        property(lambda self: -0.5 if self.kind == "inv" else exponent(self)))
    assert empirical_rate.check_rate_instance_dependent(CTX).verdict is Verdict.REFUTED
    assert empirical_rate.check_rate_one_over_t(CTX).verdict is Verdict.CONFIRMED
