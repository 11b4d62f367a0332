"""Mutation tests of the FedPDM-DP Remark 1(iv) and Remark 2 checks: a slightly wrong (23) refutes the arithmetic
claim; the privacy checks confirm when the noise is a valid calibration (they can tell the two apart); Remark 1(iv)'s
check refutes a sensitivity that does not shrink as eta rho -> 1."""

import math

from theory.privacy.conversions import gaussian_sigma_analytic
from theory.privacy.sensitivity import sensitivity_fedpdm
from verify.fedpdm import remark2_rate
from verify.fedpdm.remark1_noise import check_remark1_iv
from verify.fedpdm.remark2_rate import (
    DELTA,
    PAPER_POINT,
    check_remark2,
    check_remark2_private,
    evaluate_remark2_fixed_budget,
    evaluate_remark2_private,
)
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


def test_budget_calibrated_noise_passes_the_fixed_budget_evaluation(monkeypatch):
    """Control: with sigma = s / mu* for mu* = 1 (delta_G(7; 1) ~ 5e-12, far below 1e-5) the same release is
    (7, 1e-5)-DP, so the fixed-budget refutation is about (23)'s sigma, not about the evaluation."""
    choice = remark2_rate.remark2_choice
    s = 4.0 * PAPER_POINT["G"] / PAPER_POINT["rho"]  # s of (19) at eta rho = 1
    monkeypatch.setattr(remark2_rate, "remark2_choice", lambda p: {**choice(p), "sigma2": s * s})
    evidence = evaluate_remark2_fixed_budget(PAPER_POINT)
    assert evidence.holds, evidence.parameters
    assert math.isclose(evidence.parameters["mu"], 1.0, rel_tol=1e-12)  # rounding of s / sigma only


def test_an_exact_per_round_calibration_confirms_remark2_private(monkeypatch):
    """Mutation of the calibration the check attributes to Theorem 1: with the per-round eps at which the analytic
    Gaussian mechanism (the exact profile) needs (23b)'s sigma, every point is (eps, 1e-5)-DP and the check confirms;
    with the classical (18) it refutes at Section V's set-up. The verdict rests on the calibration, not the harness."""
    def exact_eps(p):
        sigma = math.sqrt(remark2_rate.remark2_choice(p)["sigma2"])
        s = sensitivity_fedpdm(float(p["eta_rho"]) / float(p["rho"]), float(p["rho"]), int(p["Q"]), float(p["G"]))
        lo, hi = 1e-6, 1e12  # bisection on eps: the analytic sigma for sensitivity s is decreasing in eps
        for _ in range(200):
            mid = math.sqrt(lo * hi)
            lo, hi = (mid, hi) if gaussian_sigma_analytic(s, mid, DELTA) > sigma else (lo, mid)
        return hi * (1.0 + 1e-9)  # a margin far above the bisection's and the profile's rounding

    assert check_remark2_private(CI).verdict is Verdict.REFUTED
    monkeypatch.setattr(remark2_rate, "per_round_epsilon", exact_eps)
    assert evaluate_remark2_private(PAPER_POINT).holds
    assert check_remark2_private(CI).verdict is Verdict.CONFIRMED


def test_a_sensitivity_that_grows_toward_eta_rho_one_refutes_remark1_iv():
    """Mutation of (19): s multiplied by (eta rho)^2 grows along the path at every Q: refuted; unmutated: confirmed."""
    assert check_remark1_iv(CI).verdict is Verdict.CONFIRMED

    def growing(eta, rho, Q, G):
        return sensitivity_fedpdm(eta, rho, Q, G) * (eta * rho) ** 2 * 1e3 if eta * rho < 1 else \
            sensitivity_fedpdm(eta, rho, Q, G) * 1e3

    assert check_remark1_iv(CI, sensitivity_fn=growing).verdict is Verdict.REFUTED
