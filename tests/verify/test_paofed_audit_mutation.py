"""Mutations of the audited PAO-Fed checks: a wrong closed form is caught at the declared hardest points (where an
easy-point-only check would let it pass), an inflated bound is flagged "never nearly tight", and every result declares
its form (identity, decision or a bound with its tightness)."""

import numpy as np
import pytest

import verify.paofed.theorem1 as t1
import verify.paofed.theorem2 as t2
from theory.msd import analysis_moments, expected_server_weight, mean_operator, reference_instance
from verify.evidence import HARD_POINT
from verify.paofed._common import instance_to_dict
from verify.paofed.sim_faithful_gap import check_faithful_gap, exact_msd
from verify.records import CheckContext, Verdict

CTX = CheckContext(profile="ci", seed=0)


# ---- Theorem 1 corrected: rho(M(mu)) < 1 for mu < 2/lambda_max under E[B_n] >= 0 ---------------------------------

def _mean_step_5pct_long(m, mu):
    """A mean operator whose step is 5 % too long: wrong near mu = 2/lambda_max (the reference threshold is 2.0856)."""
    return mean_operator(m, 1.05 * mu)


def test_theorem1_sufficient_hard_points_sit_on_the_boundary_of_its_hypothesis():
    for _, inst in t1.boundary_configurations():
        assert 0.0 <= expected_server_weight(analysis_moments(inst)) <= 1e-8
        assert np.all(inst.alpha <= 1.0) and inst.alpha[0] == 1.0


def test_theorem1_sufficient_a_step_5pct_too_long_is_refuted_at_the_hard_points():
    """The declared hardest points alone refute the mutation (the reference instance at mu lambda_max 1.999 -> 2.099,
    past its threshold 2.0856); the unmutated hard points hold."""
    result = t1.check_theorem1_sufficient(CTX, mean_matrix_fn=_mean_step_5pct_long)
    assert result.verdict is Verdict.REFUTED, result.summary
    hard = t1._hard_points(12, _mean_step_5pct_long)
    assert any(not e.holds for e in hard) and all(e.parameters[HARD_POINT] for e in hard)
    assert all(e.holds for e in t1._hard_points(12, t1._default_mean_matrix))


def test_theorem1_sufficient_an_inflated_bound_is_never_nearly_tight():
    """rho(M) computed on 0.4 M (a bound with a factor 2.5 of slack) is flagged; the real check is nearly tight."""
    loose = t1.check_theorem1_sufficient(CTX, mean_matrix_fn=lambda m, mu: 0.4 * mean_operator(m, mu))
    assert loose.verdict is Verdict.CONFIRMED and loose.details["tightness"]["nearly_tight"] is False
    assert "never nearly tight" in loose.summary
    real = t1.check_theorem1_sufficient(CTX)
    assert real.details["tightness"]["hard_points"]["ratio"] > 0.9


# ---- Theorem 2 corrected: rho(F_seed) < 1 for mu < 1/lambda_max --------------------------------------------------

def _rho_inflated(moments, model, mu):
    return 1.0005 * t2._default_rho(moments, model, mu)


def test_theorem2_seed_model_a_radius_off_by_5e_4_is_refuted_at_a_hard_point():
    result = t2.check_theorem2_seed_model(CTX, rho_fn=_rho_inflated)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample.get(HARD_POINT), result.counterexample


def test_theorem2_seed_model_needs_the_papers_range_of_alpha(monkeypatch):
    """The reference instance with alpha_{l >= 1} scaled up past 1 onto E[B_n] = 0 (outside the paper's alpha_l in
    [0, 1]) is mean-stable but rho(F_seed) ~ 2 below 1/lambda_max: the check refutes it there, so the hypothesis
    alpha_l <= 1 is load-bearing."""
    ref = instance_to_dict(reference_instance())
    alpha = np.array(ref["alpha"])
    alpha[1:] *= 7.4022544  # 0.5, 0.25 -> 3.70, 1.85: E[B_n] about 0
    outside = t1.instance_from_dict({**ref, "alpha": alpha.tolist()})
    assert abs(expected_server_weight(analysis_moments(outside))) < 1e-6
    monkeypatch.setattr(t1, "boundary_configurations", lambda: (("alpha_l > 1", outside),))
    result = t2.check_theorem2_seed_model(CTX)
    assert result.verdict is Verdict.REFUTED and result.measured > 2.0, result.summary
    assert "alpha_l > 1" in result.counterexample[HARD_POINT]


# ---- the faithful algorithm against the analysis (one-sided) ------------------------------------------------------

def test_faithful_gap_a_prediction_1db_low_is_refuted_at_the_hard_point():
    """The analysis' MSD 1 dB too low: SIM-F (docs/papers/paofed.md#choice-simulators)'s upper confidence limit passes
    it at the smallest-gap step 0.2."""
    result = check_faithful_gap(CTX, theory=lambda inst: exact_msd(inst) * 10 ** (-0.1))
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample["mu_times_lambda_max"] == 0.2 and result.counterexample.get(HARD_POINT)


def test_faithful_gap_is_rated_on_its_linear_sides_and_an_inflated_one_is_flagged():
    real = check_faithful_gap(CTX)
    t = real.details["tightness"]
    assert real.verdict is Verdict.CONFIRMED and t["nearly_tight"] is True and t["hard_points"]["points"] == 2
    loose = check_faithful_gap(CTX, theory=lambda inst: 10.0 * exact_msd(inst))
    assert loose.verdict is Verdict.CONFIRMED and loose.details["tightness"]["nearly_tight"] is False


# ---- forms ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("check", "form"), [(t1.check_theorem1, "identity"), (t2.check_theorem2, "identity"),
                                             (t2.check_exact_threshold, "decision")],
                         ids=["theorem1", "theorem2", "theorem2_exact_threshold"])
def test_non_bounds_declare_their_form_and_reason(check, form):
    result = check(CTX)
    assert result.details["form"] == form and result.details["form_reason"] and "tightness" not in result.details


# ---- the paper-scale card: MSD_seed < MSD_exact ---------------------------------------------------------------------

def test_paper_scale_an_exact_msd_5pct_low_is_refuted_at_the_small_step(monkeypatch):
    """The exact model's MSD_inf 5 % low: still above the seed's at half the threshold (ratio 0.53 -> 0.55), but not
    at the declared hardest point, the small step where the dropped fourth-moment term vanishes (0.958 -> 1.008)."""
    import dataclasses

    import theory.msd.grouped as grouped
    from verify.paofed.paper_scale import check_paper_scale

    original = grouped.grouped_msd_steady_state

    def biased(inst, model, **kwargs):
        sol = original(inst, model, **kwargs)
        at_a_step = kwargs.get("mu") is not None  # the card's comparisons, not the reduction certificate
        return dataclasses.replace(sol, msd=sol.msd * 0.95) if model == "exact" and at_a_step else sol

    monkeypatch.setattr(grouped, "grouped_msd_steady_state", biased)
    result = check_paper_scale(CTX)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert "small step" in result.counterexample.get(HARD_POINT, ""), result.counterexample
