"""Mutation tests of the FedPDM-DP Remark 2 checks: a slightly wrong (23) refutes the arithmetic claim, and the
privacy check confirms when the noise comes from the budget instead of from zeta (it can tell the two apart)."""

import math

from verify.fedpdm import remark2_rate
from verify.fedpdm.remark2_rate import PAPER_POINT, check_remark2, evaluate_remark2_private
from verify.records import CheckContext, Verdict

CI = CheckContext(profile="ci", seed=0)


def test_t_rounded_down_refutes_remark2(monkeypatch):
    """T = floor(4 (L^0 - f) C_0 / zeta) - 1 (one round short): A_0 exceeds zeta/4."""
    choice = remark2_rate.remark2_choice

    def short(p):
        ch = choice(p)
        return {**ch, "T": max(1, math.floor(4.0 * float(p["gap"]) * ch["C0"] / float(p["zeta"])) - 1)}

    monkeypatch.setattr(remark2_rate, "remark2_choice", short)
    result = check_remark2(CI)
    assert result.verdict is Verdict.REFUTED, result.summary


def test_sigma_with_c3_in_the_wrong_place_refutes_remark2(monkeypatch):
    """sigma^2 = zeta C_3 / 4 (C_3 multiplied instead of divided): A_3 is C_3^2 zeta/4."""
    choice = remark2_rate.remark2_choice
    monkeypatch.setattr(remark2_rate, "remark2_choice",
                        lambda p: {**choice(p), "sigma2": float(p["zeta"]) * choice(p)["C3"] / 4.0})
    assert check_remark2(CI).verdict is Verdict.REFUTED


def test_budget_calibrated_noise_passes_the_privacy_evaluation(monkeypatch):
    """Control: with sigma = s / mu* for mu* = 1 (delta_G(7; 1) ~ 5e-12, far below 1e-5) the same
    release is (7, 1e-5)-DP, so the refutation is about (23)'s sigma, not about the evaluation."""
    choice = remark2_rate.remark2_choice
    s = 4.0 * PAPER_POINT["G"] / PAPER_POINT["rho"]  # s of (19) at eta rho = 1 (E30)
    monkeypatch.setattr(remark2_rate, "remark2_choice", lambda p: {**choice(p), "sigma2": s * s})
    evidence = evaluate_remark2_private(PAPER_POINT)
    assert evidence.holds, evidence.parameters
    assert math.isclose(evidence.parameters["mu"], 1.0, rel_tol=1e-12)  # rounding of s / sigma only
