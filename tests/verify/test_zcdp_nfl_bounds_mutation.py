"""Mutation tests of the zCDP-NFL bound checks changed for the audit: Theorem II (19) printed and corrected, the
trade-off (22) and its noise part, and Theorem IV under the printed Assumption 4."""

import pytest

import reference_impl.zcdp_nfl as ref
import verify.zcdp_nfl.theorem2_bound as t2b
import verify.zcdp_nfl.tradeoff_bound as tb
from verify.records import CheckContext, Verdict
from verify.zcdp_nfl import _runs, theorem4

CTX = CheckContext(profile="ci", seed=0)


@pytest.fixture(autouse=True)
def _fresh_caches():
    for cache in (_runs._problem, _runs._truth, t2b._trajectory):
        cache.cache_clear()
    yield
    for cache in (_runs._problem, _runs._truth, t2b._trajectory):
        cache.cache_clear()


def test_printed_bound_check_stops_refuting_when_printed_means_corrected(monkeypatch):
    """If the 'printed' variant silently evaluated the corrected form, the printed (19) would no longer be refuted."""
    original = t2b.network_theorem2_sides
    monkeypatch.setattr(t2b, "network_theorem2_sides",
                        lambda problem, **kw: original(problem, **{**kw, "variant": t2b.CORRECTED}))
    assert t2b.check_theorem2_bound(CTX).verdict is Verdict.CONFIRMED


def test_corrected_bound_check_detects_a_dropped_last_term(monkeypatch):
    """The corrected form without its last term (rho/2)||w~(0) - w*||^2_L+ / T fails at the noise-free hard points."""
    original = t2b.network_theorem2_sides
    monkeypatch.setattr(t2b, "network_theorem2_sides",
                        lambda problem, **kw: original(problem, **{**kw, "variant": "D2"}))
    result = t2b.check_theorem2_bound_corrected(CTX)
    assert result.verdict is Verdict.REFUTED
    assert float(result.counterexample["sigma2_0"]) in (0.0, 1e-8)


def test_noise_part_check_detects_a_noise_term_without_its_constants(monkeypatch):
    """The noise term of (22) without c_xi and without 1/(1 - tau) (about 3.5e4 times smaller): the noise-induced
    increase is shown above it (a lower confidence limit exceeds the term), so the check refutes."""
    original = tb.noise_term

    def small(settings, T):
        return (original(settings, T) * (1.0 - float(settings["tau"]))
                / tb.network_matrices(tb.problem_from(settings)).c_xi)

    monkeypatch.setattr(tb, "noise_term", small)
    assert tb.check_tradeoff_noise_part(CTX).verdict is Verdict.REFUTED


def test_tradeoff_bound_and_theorem4_stop_refuting_when_the_step_does_not_grow(monkeypatch):
    """eta = 0.05 n^2 silently replaced by a constant 0.05 (which violates Assumption 4): the runs converge, so
    neither (22) nor Theorem IV is refuted by them any more."""
    exponent = ref.StepSchedule.exponent.fget
    monkeypatch.setattr(ref.StepSchedule, "exponent",
                        property(lambda self: 0.0 if self.kind == "growing" else exponent(self)))
    assert tb.check_tradeoff_bound(CTX).verdict is Verdict.CONFIRMED
    assert theorem4.check_theorem4(CTX).verdict is Verdict.CONFIRMED
