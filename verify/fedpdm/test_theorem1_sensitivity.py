"""Property tests of FedPDM-DP Theorem 1 (eq. (19)): same-state sensitivity, the history finding, its correction."""

import math

import pytest
from hypothesis import example, given, target
from hypothesis import strategies as st

from verify.fedpdm.theorem1_history import HISTORY_COUNTEREXAMPLE
from verify.fedpdm.upload_simulation import (
    ADAPTIVE_Q_PAPER_POINT,
    evaluate_adaptive_q,
    evaluate_upload_sensitivity,
    history_sensitivity_bound,
)
from verify.strategies import (
    fedpdm_adaptive_q_pairs,
    fedpdm_local_rounds,
    fedpdm_participation_schedules,
    fedpdm_unit_step_schedules,
)


def _round(eta, rho, Q, seed=0):
    return {"etas": [eta], "Qs": [Q], "rho": rho, "G": 1.0, "d": 3, "local_start": "warm", "seed": seed,
            "state_scale": 1.0}


@pytest.mark.claim("fedpdm.theorem1")
@given(params=fedpdm_adaptive_q_pairs())
@example(params=ADAPTIVE_Q_PAPER_POINT)
def test_adaptive_q_release_is_not_eps_delta_dp(params):
    """Property: on the legal pair (round at the client's stationary point, one record negated) rule (11) stops D
    after one step and D' later, and with sigma from s(Q) of (18)-(19) the exact divergence of the two releases
    exceeds delta (eta rho <= 0.9, where s grows with Q); with sigma from s(Q_max) it does not."""
    evidence = evaluate_adaptive_q(params)
    target(math.log10(max(evidence.measured, 1e-300)), label="log10 delta_exact / delta")
    assert evidence.parameters["Q_D"] == 1 < evidence.parameters["Q_D_prime"], evidence
    assert not evidence.holds, evidence
    assert evaluate_adaptive_q(params, noise_q="cap").holds


@pytest.mark.claim("fedpdm.theorem1_fixed_q")
@given(params=fedpdm_local_rounds(), construction=st.sampled_from(["adversarial", "random"]))
@example(params=_round(1.0, 10.0, 5), construction="adversarial")  # eta^0 = 1, rho = 10 (seed line 263): s/G = 2.95e4
@example(params=_round(1.0 / math.sqrt(25.0), 10.0, 5), construction="adversarial")  # t = 24: eta rho = 2
@example(params=_round(0.1, 10.0, 19), construction="adversarial")  # t = 99: eta rho = 1
@example(params=_round(0.05, 10.0, 5), construction="random")
def test_one_round_sensitivity_is_bounded_by_eq19(params, construction):
    """Property: from the same round-start state, with the same Q and mini-batch gradients of norm <= G,
    the two neighbours' uploads differ by at most s of eq. (19); the adversarial construction attains s."""
    evidence = evaluate_upload_sensitivity({**params, "construction": construction})
    target(evidence.measured, label="||dy|| / s")
    assert evidence.holds, evidence
    if construction == "adversarial":
        assert evidence.measured >= 1.0 - evidence.parameters["allowance"], evidence


@pytest.mark.claim("fedpdm.theorem1_history")
@given(params=fedpdm_unit_step_schedules())
@example(params=HISTORY_COUNTEREXAMPLE)
def test_history_breaks_eq19_by_exactly_one_half_at_unit_step(params):
    """Property: at eta rho = 1, from the second participation on, the worst-case upload difference given the
    released history is 6 eta G = 1.5 s (both local starts): eq. (19) does not bound it."""
    evidence = evaluate_upload_sensitivity(params)
    target(evidence.measured, label="||dy_n|| / s_n")
    assert not evidence.holds
    assert abs(evidence.measured - 1.5) <= 1e-9 and abs(evidence.parameters["kappa_n"] - 1.5) <= 1e-9


@pytest.mark.claim("fedpdm.theorem1_history_corrected")
@given(params=fedpdm_participation_schedules(), construction=st.sampled_from(["adversarial", "random"]))
@example(params={**HISTORY_COUNTEREXAMPLE, "etas": [0.001] * 10, "Qs": [5] * 10}, construction="adversarial")
def test_history_sensitivity_is_kappa_times_eq19(params, construction):
    """Property: given the released history, ||y_n(D) - y_n(D')|| <= kappa_n s_n for every gradient-difference
    sequence with per-step norms <= 2G, with equality for the adversarial construction."""
    evidence = evaluate_upload_sensitivity({**params, "construction": construction}, bound_fn=history_sensitivity_bound,
                                           require_tight=construction == "adversarial")
    target(evidence.measured, label="||dy_n|| / (kappa_n s_n)")
    assert evidence.holds, evidence


@pytest.mark.claim("fedpdm.theorem1_history_corrected")
@given(n=st.integers(min_value=1, max_value=60))
def test_legal_one_record_pair_stays_below_kappa_s(n):
    """Property: the legal replace-one pair (one-record client, linear loss; eta = 0.001, rho = 10, Q = 5, warm)
    never exceeds kappa_n s_n, although it exceeds s_n from its second participation on."""
    params = {**HISTORY_COUNTEREXAMPLE, "etas": [0.001] * n, "Qs": [5] * n, "construction": "linear_loss"}
    evidence = evaluate_upload_sensitivity(params, bound_fn=history_sensitivity_bound)
    assert evidence.holds, evidence
    assert (evidence.parameters["ratio_to_eq19"] > 1.0 + 1e-6) == (n >= 2)
