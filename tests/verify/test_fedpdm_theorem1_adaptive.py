"""fedpdm.theorem1 (adaptive Q of rule (11)): the refutation is about the data-dependent Q, not the machinery."""

import numpy as np
import pytest

from verify.fedpdm.theorem1_sensitivity import check_adaptive_q, reproduce_adaptive_q
from verify.fedpdm.upload_simulation import ADAPTIVE_Q_PAPER_POINT, adaptive_round, evaluate_adaptive_q
from verify.records import CheckContext, Verdict


def test_capped_q_control_is_confirmed():
    """Control: the same pairs with sigma calibrated to s(Q_max) are (eps, delta)-DP, so the check confirms."""
    result = check_adaptive_q(CheckContext(), noise_q="cap")
    assert result.verdict is Verdict.CONFIRMED, result.summary


def test_counterexample_reproduces():
    result = check_adaptive_q(CheckContext())
    assert result.verdict is Verdict.REFUTED and result.corrected_claim == "fedpdm.theorem1_fixed_q"
    again = reproduce_adaptive_q(result.counterexample)
    assert not again.holds and again.measured == pytest.approx(result.measured, rel=1e-9)


def test_paper_point_step_counts_and_gap_by_hand():
    """Q(D) = 1 (g = 0 at the stationary point), Q(D') = 2: g_0 = -2a/b = -0.2, x^1 = 0.002, g_1 = rho x^1 = 0.02
    (0.0004 <= nu), x^2 = 0.0018; y gap = 2 x^2 = 0.0036; s(1) = 4 eta G = 0.04, s(2) = 0.04 (1 + 0.9) = 0.076."""
    e = evaluate_adaptive_q(ADAPTIVE_Q_PAPER_POINT).parameters
    assert (e["Q_D"], e["Q_D_prime"]) == (1, 2)
    assert e["mean_gap"] == pytest.approx(0.0036, rel=1e-12)
    assert (e["s_D"], e["s_D_prime"]) == (pytest.approx(0.04), pytest.approx(0.076))


def test_adaptive_round_stops_at_the_first_small_gradient():
    data = np.ones((6, 1))
    y, Q = adaptive_round(data, 2, np.zeros(1), np.ones(1), np.zeros(1), 0.1, 1.0, 1e-3, 3)
    assert Q == 1 and y == pytest.approx([-1.0])


@pytest.mark.parametrize("bad, match", [({"eta": 0.3}, "eta \\* rho"), ({"nu": 1.0}, "nu must be")])
def test_bad_pairs_are_rejected(bad, match):
    with pytest.raises(ValueError, match=match):
        evaluate_adaptive_q({**ADAPTIVE_Q_PAPER_POINT, **bad})
