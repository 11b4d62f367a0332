"""Mutation tests of the FedPDM-DP checks changed by the tightness audit: each check's verdict follows the statement
(a correct calibration confirms, a wrong constant refutes), its tightness is rated on the bound's own points only, and
a wrong bound is caught at the declared hardest points (docs/papers/fedpdm.md)."""

from theory.privacy.conversions import gaussian_sigma_analytic
from theory.privacy.subsampled import abadi_constant_c0
from verify.evidence import HARD_POINT
from verify.fedpdm.lemma1_gaussian import check_classical_calibration, evaluate_minimality
from verify.fedpdm.lemma2_descent import check_lemma2_corrected
from verify.fedpdm.theorem1_sensitivity import SECTION_V_ROUNDS, check_adaptive_q, section_v_point
from verify.fedpdm.theorem2_realised import check_realised_corrected
from verify.fedpdm.upload_simulation import evaluate_adaptive_q
from verify.records import CheckContext, Verdict

CI = CheckContext(profile="ci", seed=0)


def _analytic(epsilon, delta):
    return gaussian_sigma_analytic(1.0, epsilon, delta)


def test_lemma1_with_the_exact_minimal_noise_is_confirmed():
    """With the analytic Gaussian mechanism's noise (the exact minimum) in place of (5) both parts of Lemma 1 hold:
    minimal (ratio 1) and sufficient at every eps; with (5) the paper's own setting (eps = 0.5) refutes minimality."""
    assert not evaluate_minimality(0.5, 1e-5).holds
    assert evaluate_minimality(0.5, 1e-5, z_fn=_analytic).holds
    assert check_classical_calibration(CI, z_fn=_analytic).verdict is Verdict.CONFIRMED
    refuted = check_classical_calibration(CI)
    assert refuted.verdict is Verdict.REFUTED and refuted.counterexample["epsilon"] == 0.5


def test_theorem1_in_section_v_holds_with_the_capped_q_and_fails_with_rule_11():
    """Section V's rounds: the rule-(11) Q breaks the release except at eta rho = 1 (t = 99); with sigma from
    s(Q_max) (Q public) every round holds, and the whole check confirms."""
    adaptive = {t: evaluate_adaptive_q(section_v_point(t)).holds for t in SECTION_V_ROUNDS}
    assert adaptive == {25: False, 50: False, 99: True, 150: False, 299: False}
    assert all(evaluate_adaptive_q(section_v_point(t), noise_q="cap").holds for t in SECTION_V_ROUNDS)
    assert check_adaptive_q(CI, noise_q="cap").verdict is Verdict.CONFIRMED


def test_lemma2_corrected_is_rated_on_the_decrease_and_nearly_tight_at_its_hard_points():
    """The decrease (B.1) guarantees over the decrease realised: nearly tight (>= 0.5) at the full-batch, nu = 1e-8
    points; the literal sign reading (2 - K: inexactness helps) is not what the check confirms."""
    result = check_lemma2_corrected(CI)
    t = result.details["tightness"]
    assert result.verdict is Verdict.CONFIRMED and t["nearly_tight"] and t["hard_points"]["ratio"] >= 0.5


def test_realised_corrected_controls_are_not_rated_and_a_smaller_c0_is_refuted_at_n15():
    """The controls (busiest client at its own count, ratio 1 by construction) are left out of the tightness (0.79,
    not 1); 0.7 x the Abadi constant is refuted at the declared hardest point n_i = 15."""
    result = check_realised_corrected(CI)
    assert result.verdict is Verdict.CONFIRMED and result.details["tightness"]["ratio"] < 0.99
    mutated = check_realised_corrected(CI, c0_fn=lambda delta: 0.7 * abadi_constant_c0(delta))
    assert mutated.verdict is Verdict.REFUTED and mutated.counterexample.get(HARD_POINT), mutated.counterexample
