"""Mutation tests of the PGFL, NPFL-RL and DP checks changed for the audit (forms, tightness, hardest points, the
paper's own setting): each mutation is one the changed check must catch, or a hardest point it must not do without."""

import math

import numpy as np
import pytest

import verify.dp.conversions as conv
import verify.dp.thesis_composition as comp
import verify.npfl_rl.dpg as dpg
import verify.npfl_rl.sac as sac
import verify.npfl_rl.similarity as sim
import verify.pgfl.theorem1 as t1
import verify.pgfl.theorem2 as t2
from reference_impl import npfl_rl as npfl
from theory.privacy.conversions import zcdp_to_approx_dp_bun_steinke, zcdp_to_approx_dp_cks
from verify.npfl_rl._common import paper_point
from verify.records import CheckContext, Verdict

CTX = CheckContext(profile="ci", seed=0)
SMALL = {"seed": 3, "K": 8, "d": 4, "D_lo": 3, "D_hi": 7, "mean_degree": 3.0, "lam": 0.2, "symmetric": False}


# ---- dp ----------------------------------------------------------------------------------------------------------

def test_bun_steinke_cap_flags_an_epsilon_a_tenth_of_a_percent_low():
    """The proven cap delta_exact/delta < Phi(-sqrt(2 ln 1/delta))/delta is met by the true eps_BS at every point and
    broken by an eps_BS 0.1 % too small, which the validity check alone (ratio <= 1) lets through at most points."""
    assert conv.check_bun_steinke_prop13(CTX).details["points_above_the_proven_cap"] == 0
    low = conv.check_bun_steinke_prop13(CTX, epsilon_fn=lambda r, d: zcdp_to_approx_dp_bun_steinke(r, d) * 0.999)
    assert low.details["points_above_the_proven_cap"] > 0


def test_ordering_is_refuted_at_its_limit_points_only(monkeypatch):
    """A CKS conversion 1e-6 too high stays below Bun-Steinke everywhere but at the declared limit points
    (delta -> 1, rho -> infinity, eps_CKS / eps_BS = 1 - 1.7e-7): without them the check would confirm it."""
    high = {"cks_fn": lambda r, d: zcdp_to_approx_dp_cks(r, d) * (1 + 1e-6)}
    result = conv.check_conversion_ordering(CTX, **high)
    assert result.verdict is Verdict.REFUTED and result.counterexample.get("hard_point")
    monkeypatch.setattr(conv, "LIMIT_POINTS", ())
    assert conv.check_conversion_ordering(CTX, **high).verdict is Verdict.CONFIRMED


def test_theorem2_2_is_nearly_tight_only_through_its_hardest_points(monkeypatch):
    """With one mechanism nearly trivial the chain's delta is 0.9999 of sum delta_i; without those points the check
    would report the bound never nearly tight (0.45)."""
    assert comp.check_approx_composition(CTX).details["tightness"]["ratio"] > 0.999
    monkeypatch.setattr(comp, "APPROX_HARD_POINTS", ())
    assert comp.check_approx_composition(CTX).details["tightness"]["nearly_tight"] is False


def test_db10_counterexample_is_at_ten_messages_and_needs_the_small_budgets(monkeypatch):
    """The reported counterexample of the accuracy claim has T = 10 messages (unambiguously 'several'); on the old
    grid (eps >= 0.5) only T = 2 cells failed."""
    result = comp.check_db10(CTX)
    assert result.verdict is Verdict.REFUTED and result.counterexample["rounds"] == 10
    assert not comp.reproduce_db10(result.counterexample).holds
    monkeypatch.setattr(comp, "DB10_GRID", {**comp.DB10_GRID, "epsilon": (0.5, 1.0, 4.0, 10.0)})
    old = comp.check_db10(CTX)
    assert old.counterexample["rounds"] == 2 and set(old.details["violated_cells_by_rounds"]) >= {2}
    assert sum(v for t, v in old.details["violated_cells_by_rounds"].items() if t > 2) == 0


# ---- npfl_rl -----------------------------------------------------------------------------------------------------

def test_descent_slack_ratio_is_about_one_half_and_an_overlong_step_is_refuted(monkeypatch):
    """The descent bound's slack ratio is ~1/2 (the constant 1/2 of the first-order decrease) with the hardest pairs
    declared; a derivative 2.2 times too large (a step 2.2 times too long for the required decrease) is refuted."""
    result = dpg.check_dpg_descent(CTX)
    t = result.details["tightness"]
    assert result.verdict is Verdict.CONFIRMED and 0.5 <= t["ratio"] < 0.6 and t["hard_points"]["points"] >= 1
    real = npfl.PrimalMap.derivative
    monkeypatch.setattr(npfl.PrimalMap, "derivative", lambda self, a: 2.2 * real(self, a))
    assert not dpg.evaluate_dpg_descent({**SMALL, "n0": 20}).holds


def test_sac_step_bound_is_attained_at_the_ends_of_the_exploration_interval(monkeypatch):
    """alpha = +-nu/2 gives |step| = delta nu / 2 exactly (slack ratio 1); a step 0.1 % too long breaks the bound
    there, where a random draw would almost never see it."""
    base = {**paper_point(0), "state_seed": 0, "delta": 0.1, "nu": 0.05, "draws": 2, "alpha": "extreme"}
    e = sac.evaluate_sac_rule(base)
    lhs, rhs = e.parameters["sides"]
    assert e.holds and math.isclose(lhs, rhs, rel_tol=1e-12) and e.parameters.get("hard_point")
    real = npfl.PrimalMap.sac_step
    monkeypatch.setattr(npfl.PrimalMap, "sac_step", lambda self, t, alpha, delta: 1.001 * real(self, t, alpha, delta))
    assert not sac.evaluate_sac_rule(base).holds


def test_similarity_in_61_catches_a_repulsive_coupling(monkeypatch):
    """A solve that moves the cluster models the wrong way (W(0) - (W(tau) - W(0)): tau pushes them apart) makes
    P(tau) grow: refuted."""
    real = sim.centralised_models

    def repulsive(problem, tau):
        w0, _ = real(problem, 0.0)
        w, res = real(problem, tau)
        return 2.0 * w0 - w, res

    monkeypatch.setattr(sim, "centralised_models", repulsive)
    assert sim.check_similarity_centralised(CTX).verdict is Verdict.REFUTED


def test_the_networked_reading_fails_outside_the_generator_but_61_does_not():
    """On the constructed instance (cluster sizes 1, 10, 10, curvatures 1, 0.01, 1) the networked reading's client-pair
    spread rises with tau while (6.1)'s cluster-level spread falls: the two readings are different claims."""
    outside = sim.evaluate_similarity({"instance": "constructed"}, sim.constructed_instance())
    assert not outside.holds and outside.parameters["S"][2] > outside.parameters["S"][1]
    paper = sim.evaluate_similarity_centralised({"instance": "constructed"}, sim.constructed_instance())
    assert paper.holds and np.all(np.diff(paper.parameters["P"]) < 0)
    card = sim.check_similarity_monotone(CTX)
    assert card.verdict is Verdict.CONFIRMED
    assert card.details["outside_the_generator"]["largest_relative_increase"] > 0.1


# ---- pgfl --------------------------------------------------------------------------------------------------------

def test_bias_bound_tightness_flags_an_inflated_kappa_and_refutes_a_halved_one(monkeypatch):
    """The O(1/rho) bound of the corrected Theorem I is nearly tight (0.92) at its declared hardest point, the largest
    rho'; with kappa three times too large it is flagged never nearly tight, with kappa halved it is refuted there."""
    real = t1.consensus_bias

    def scaled(factor):
        return lambda problem, rho, w: [{**cb, "kappa": factor * cb["kappa"]} for cb in real(problem, rho, w)]

    base = t1.check_theorem1_fixed_point(CTX).details["tightness"]
    assert base["nearly_tight"] and base["hard_points"]["ratio"] > 0.9
    monkeypatch.setattr(t1, "consensus_bias", scaled(3.0))
    assert t1.check_theorem1_fixed_point(CTX).details["tightness"]["nearly_tight"] is False
    monkeypatch.setattr(t1, "consensus_bias", scaled(0.5))
    halved = t1.check_theorem1_fixed_point(CTX)
    assert halved.verdict is Verdict.REFUTED


def test_theorem1_records_the_reading_independent_disagreement():
    """One server: the limit is (Pa) and the servers trivially agree; several servers with more than one edge: the
    servers' models of a cluster still disagree at the limit (so no reading of (2) makes it an optimum)."""
    result = t1.check_theorem1(CTX)
    assert result.details["form"] == "decision" and result.verdict is Verdict.REFUTED
    assert max(result.details["multi_server_consensus_gap"]) > 1e-3


def test_equal_optima_gap_is_exact_and_tied_to_the_simulation(monkeypatch):
    """The exact D_n (rational arithmetic) agrees with the simulated one wherever it is resolvable; a closed form 1 %
    off no longer agrees, and the Theorem II and Corollary checks stop with a harness error instead of refuting."""
    e = t2.evaluate_equal_optima(1.0, 3.0, 1.0, 100.0, 0.9, 20)
    assert e.parameters["resolvable"] and e.parameters["closed_form_agrees"] and e.measured > 0 and not e.holds
    real = t2.exact_single_step_gap
    monkeypatch.setattr(t2, "exact_single_step_gap", lambda *a: real(*a) * 101 / 100)
    with pytest.raises(AssertionError, match="disagrees with the closed form"):
        t2.check_corollary(CTX)


def test_corollary_is_refuted_with_its_hypothesis_non_vacuous_and_confirmed_with_an_inflated_bound(monkeypatch):
    """The Corollary's reported counterexample has n = 20 (tau^(i) = 0 for 19 iterations); every n of the grid violates
    it. With the bound inflated by 1 (tau eta + 1) the same check confirms: it is not refuted by construction."""
    result = t2.check_corollary(CTX)
    assert result.verdict is Verdict.REFUTED and result.counterexample["n"] == 20
    assert all(v == 6 for v in result.details["equal_optima_violations_by_n"].values())
    assert not t2._reproduce_equal_optima(result.counterexample).holds
    real = t2.intercluster_bound
    monkeypatch.setattr(t2, "intercluster_bound", lambda taus, eta: np.asarray(real(taus, eta)) + 1.0)
    monkeypatch.setattr(t2, "corollary_single_step_bound", lambda tau, eta: tau * eta + 1.0)
    assert t2.check_corollary(CTX).verdict is Verdict.CONFIRMED


def test_theorem2_tightness_rates_the_paper_like_sweep_and_declares_its_hardest_points():
    """Theorem II's result is a bound whose slack ratios come from the paper-like sweep (eta > 0) and whose hardest
    points are the eta = 0 instance and the largest rho tried."""
    result = t2.check_theorem2(CTX)
    t = result.details["tightness"]
    assert result.details["form"] == "bound" and t["points_rated"] > 0
    assert "largest rho tried" in t["hard_points"]["attained_at"]
    assert result.counterexample["hard_point"].startswith("eta = 0")
