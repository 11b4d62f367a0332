"""Issue 26's last cards: every confirmed bound shows its tightness, every sufficient condition its measured slack,
every experiment its grid (even when it is not run). Each card is checked for its new field, with a mutation where
one makes sense (a limit inflated 2x is reported as slack; a range shrunk inside is reported as not attained)."""

import dataclasses

import pytest
from threadpoolctl import threadpool_limits

import verify.fedpdm.theorem2_total as t2
import verify.zcdp_nfl.tradeoff_accuracy as tradeoff
from theory.gtv import cluster_constants
from verify.evidence import tightness_line
from verify.fedpdm.experiments import MNIST_DP_LOSS
from verify.fedpdm.theorem3_constants import boundary_attained, check_conditions_corrected
from verify.gtv.corollary38 import check_corollary38, condition_slack, single_cluster_instance
from verify.harness.declaration import _planned_grid
from verify.npfl_rl.similarity import check_similarity_centralised
from verify.records import CheckContext, Verdict
from verify.registry import get_claim
from verify.runner import run_claim
from verify.zcdp_nfl.constant_step import check_constant_step_conditions, step_condition_slack
from verify.zcdp_nfl.corollary_total import check_corollary
from verify.zcdp_nfl.theorem2 import check_consensus_gap

CTX = CheckContext(profile="ci", seed=0)


# ---- 1. fedpdm.theorem2_corrected: a bound on the spread of the fitted constant -------------------------------------

def test_fedpdm_theorem2_corrected_reports_worst_spread_over_its_limit():
    r = t2.check_linear_scaling(CTX)
    assert r.verdict is Verdict.CONFIRMED and r.details["form"] == "bound"
    t = r.details["tightness"]
    at = t["attained_at"]
    assert t["ratio"] == pytest.approx(max(at["fitted_c0"]) / min(at["fitted_c0_lower"]) / t2.SPREAD_BOUND)
    assert 0.5 <= t["ratio"] <= 1.0 and t["hard_points"]["labels"] == [f"n = pT = {t2.HARD_N} (the smallest n covered)"]
    assert t["points_rated"] < t["points_checked"]  # the RDP cross-check points are not bound points


def test_fedpdm_theorem2_corrected_with_its_limit_inflated_2x_is_never_nearly_tight(monkeypatch):
    """Mutation: the limit 1.5 inflated to 3 still confirms, but the card now shows the slack (ratio halved, < 0.5)."""
    base = t2.check_linear_scaling(CTX).details["tightness"]["ratio"]
    monkeypatch.setattr(t2, "SPREAD_BOUND", 2.0 * t2.SPREAD_BOUND)
    r = t2.check_linear_scaling(CTX)
    assert r.verdict is Verdict.CONFIRMED and r.details["tightness"]["ratio"] == pytest.approx(base / 2.0)
    assert r.details["tightness"]["nearly_tight"] is False and "never nearly tight" in r.summary


# ---- 2. zcdp_nfl.theorem2_consensus_gap: a lower bound at 0 --------------------------------------------------------

def test_consensus_gap_tightness_is_one_minus_smallest_gap_over_initial_gap():
    r = check_consensus_gap(CTX)
    t = r.details["tightness"]
    assert r.verdict is Verdict.CONFIRMED and t["ratio"] is not None and t["points_rated"] == t["points_checked"]
    at = t["attained_at"]
    assert t["slack"] == pytest.approx(at["min_gap"] / at["initial_gap"], rel=1e-9, abs=1e-15)
    assert t["slack"] == pytest.approx(min(g / at["initial_gap"] for g in r.details["min_gaps"]), rel=1e-6)
    assert "lower bound at 0" in r.details["tightness_reading"] and "tightest measured/bound" in tightness_line(t)


# ---- 3. sufficient conditions and inequalities -----------------------------------------------------------------------

def test_gtv_corollary38_reports_the_conditions_slack():
    r = check_corollary38(CTX)
    slack = r.details["condition_slack"]
    assert r.verdict is Verdict.CONFIRMED and r.details["form"] == "decision"
    assert slack["holds_down_to_factor"] is not None and slack["holds_down_to_factor"] <= 0.5
    assert slack["threshold_over_needed_at_least"] == pytest.approx(1.0 / slack["holds_down_to_factor"])
    assert "condition_slack" in r.details["form_reason"]


def test_gtv_corollary38_threshold_inflated_2x_shows_more_slack_and_a_deflated_one_none():
    """Mutation: with the threshold doubled the conclusion holds down to a smaller factor (more slack is reported);
    with the threshold cut 1e4-fold it fails at once (no slack)."""
    inst = single_cluster_instance(123, 15)
    with threadpool_limits(limits=1, user_api="blas"):
        threshold = float(cluster_constants(inst).delta.sum() / inst.A.min())
        real = condition_slack(inst, threshold)["smallest_factor_holding"]
        inflated = condition_slack(inst, 2.0 * threshold)["smallest_factor_holding"]
        deflated = condition_slack(inst, 1e-4 * threshold, factors=(1.0,))["smallest_factor_holding"]
    assert real is not None and inflated is not None and inflated < real
    assert deflated is None


def test_zcdp_corollary_reports_the_ordering_ratios():
    r = check_corollary(CTX)
    o = r.details["ordering_tightness"]
    for pair in ("eps_gauss / eps_cks", "eps_cks / eps_corollary"):
        assert o[pair]["points"] > 0 and o[pair]["smallest_ratio"] < 1.0
        assert o[pair]["ratio"] <= 1.0 + 1e-9 and o[pair]["ratio"] >= o[pair]["smallest_ratio"]
    assert "ordering_tightness" in r.details["form_reason"]


def test_zcdp_constant_step_conditions_reports_how_far_beyond_the_step_condition_it_converges():
    r = check_constant_step_conditions(CTX)
    slack = r.details["condition_slack"]
    assert r.verdict is Verdict.CONFIRMED and slack["converges_up_to_c"] >= 1.0 and slack["instances_probed"] > 0


def test_zcdp_step_condition_slack_stops_where_the_run_diverges():
    """Mutation of the probe: at lambda = 10 a step ten times the condition diverges, so the reported slack is the c
    before it (5), not the end of the probe."""
    out = step_condition_slack({"seeds": (0,), "lams": (10.0,), "T": 1000}, beyond=(5.0, 10.0))
    ridge = next(item for item in out["per_instance"] if item["objective"] == "ridge")
    assert ridge["outcomes"]["10"] == "diverged" and ridge["converges_up_to_c"] == 5.0


def test_fedpdm_theorem3_corrected_range_is_attained_at_both_ends():
    r = check_conditions_corrected(CTX)
    b = r.details["boundary_attained"]
    assert r.verdict is Verdict.CONFIRMED and b["sharp"] is True
    assert b["below_lower"]["failing"] == b["below_lower"]["of"] == b["cases"] > 0


def test_a_range_shrunk_inside_is_reported_not_attained():
    """Mutation: a lower end of 0.55 (inside the true range) still holds just below it: not sharp there."""
    points = [{"L": 1.0, "rho": rho, "N": 10, "K": 5} for rho in (3.0, 10.0)]
    b = boundary_attained(points, lower=0.55)
    assert b["below_lower"]["failing"] == 0 and b["above_upper"]["failing"] == 2 and b["sharp"] is False


def test_npfl_similarity_monotone_reports_its_margin_and_why_no_tightness():
    r = check_similarity_centralised(CTX)
    m = r.details["monotonicity_margin"]
    assert r.details["form"] == "decision" and "no bound side" in r.details["form_reason"]
    assert m["instances"] == r.details["points_checked"] and m["smallest_relative_decrease"] > 0.0
    assert len(m["attained_at"]["tau_step"]) == 2


# ---- 4. zcdp_nfl.tradeoff_accuracy: its unreported choices gridded ------------------------------------------------

def test_tradeoff_accuracy_is_decided_over_its_grid_of_unreported_choices():
    r = tradeoff.check_tradeoff_accuracy(CTX)
    assert r.verdict is Verdict.CONFIRMED and set(r.details["unreported_choices"]) == {"rho", "eta0", "T"}
    assert [g["point"] for g in r.details["grid"]] == list(tradeoff.UNREPORTED_GRID)
    assert all(g["verdict"] == "confirmed" for g in r.details["grid"])


def test_tradeoff_accuracy_that_differs_across_the_grid_depends_on_it(monkeypatch):
    """Mutation: at T = 400 the ordering reversed (every pair significantly negative): the verdict is "depends on"."""
    original = tradeoff.evaluate_tradeoff

    def reversed_at_long_horizon(settings, alpha_each, budgets=tradeoff.BUDGETS):
        evidence, summary = original(settings, alpha_each, budgets)
        if settings["T"] == 400:
            evidence = [dataclasses.replace(e, holds=False, parameters={**e.parameters, "upper": -1.0})
                        for e in evidence]
        return evidence, summary

    monkeypatch.setattr(tradeoff, "evaluate_tradeoff", reversed_at_long_horizon)
    r = tradeoff.check_tradeoff_accuracy(CTX)
    assert r.verdict is Verdict.NOT_CHECKABLE and r.summary.startswith("depends on")


# ---- 5. an experiment without its data file shows its planned grid ------------------------------------------------

def test_mnist_card_shows_grid_and_unreported_choices_without_the_file():
    r = run_claim(get_claim("fedpdm.experiment_mnist_dp_loss"), CTX)
    assert r.verdict is Verdict.NOT_CHECKABLE
    assert r.details["grid_planned"] == [{}] and r.details["unreported_choices"]["none"] == MNIST_DP_LOSS.no_choices
    assert r.details["arms_planned"] and all(isinstance(a, str) for a in r.details["arms_planned"])


def test_planned_grid_lists_every_point_of_a_declared_grid():
    gridded = dataclasses.replace(MNIST_DP_LOSS, grid={"ci": {"b": (10, 30), "Q_max": (5,)}},
                                  choices={"b": "the batch", "Q_max": "the cap"}, no_choices="")
    planned = _planned_grid(gridded, "ci")
    assert planned["grid_planned"] == [{"Q_max": 5, "b": 10}, {"Q_max": 5, "b": 30}]
    assert planned["unreported_choices"] == {"Q_max": "the cap", "b": "the batch"}
