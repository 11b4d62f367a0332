"""Property tests of the zCDP-NFL Corollary (total privacy) and of the sum range printed in its proof."""

import math

import pytest
from hypothesis import example, given, target
from hypothesis import strategies as st

from verify.strategies import nfl_privacy_schedules
from verify.tolerance import gamma, relative_gap
from verify.zcdp_nfl.corollary_total import (
    TEST_VECTORS,
    evaluate_epsilon,
    evaluate_sum_range,
    evaluate_test_vector,
    evaluate_total,
)


@pytest.mark.claim("zcdp_nfl.corollary_sum_range")
@given(schedule=nfl_privacy_schedules())
@example(schedule=(1e-3, 0.99, 1))
@example(schedule=(1e-3, 0.99, 200))
def test_printed_range_misses_exactly_the_last_term(schedule):
    """Property: sum_{0<n<T} phi1 tau^-(n-1) differs from the closed form (the finding holds for every T),
    and adding the missing T-th term phi1 tau^-(T-1) recovers the closed form to rounding."""
    phi1, tau, T = schedule
    evidence = evaluate_sum_range(phi1, tau, T)
    assert not evidence.holds
    x = T * abs(math.log(tau))
    completed = evidence.parameters["sum_over_0_lt_n_lt_T"] + phi1 * tau ** -(T - 1)
    assert relative_gap(completed, evidence.parameters["closed_form"]) <= gamma(math.ceil(4 * x) + 12) + gamma(
        math.ceil(x) + T + 12)


@pytest.mark.claim("zcdp_nfl.corollary")
@given(schedule=nfl_privacy_schedules())
@example(schedule=(1e-4, 0.999, 200))
@example(schedule=(1e-3, 0.99, 200))
@example(schedule=(1e-2, 0.9999, 200))
@example(schedule=(1e-4, 0.9, 200))
@example(schedule=(1e-3, 0.99, 1))
def test_composed_releases_equal_the_closed_form(schedule):
    """Property: the T Gaussian releases of Theorem I under S2 compose to phi1 (1 - tau^T)/(tau^(T-1) - tau^T),
    which also equals the printed expression evaluated in 50-digit arithmetic, within rounding."""
    phi1, tau, T = schedule
    evidence = evaluate_total(phi1, tau, T)
    target(evidence.measured, label="gap / rounding allowance")
    assert evidence.holds, evidence


@pytest.mark.claim("zcdp_nfl.corollary")
@given(schedule=nfl_privacy_schedules(), log10_delta=st.floats(min_value=-12.0, max_value=-1.0))
@example(schedule=(1e-3, 0.99, 200), log10_delta=-5.0)
def test_epsilon_is_bun_steinke_and_above_the_tighter_converters(schedule, log10_delta):
    """Property: eps = Phi + 2 sqrt(Phi log(1/delta)) is the Bun-Steinke conversion of the total, and
    eps_Gauss <= eps_CKS <= eps."""
    phi1, tau, T = schedule
    evidence = evaluate_epsilon(phi1, tau, T, 10.0**log10_delta)
    target(evidence.measured, label="violation / allowance")
    assert evidence.holds, evidence


@pytest.mark.claim("zcdp_nfl.corollary")
@pytest.mark.parametrize("row", range(len(TEST_VECTORS)))
def test_spec_test_vectors(row):
    """Property: the Corollary's test-vector table (Phi, eps_Corollary, eps_CKS, eps_Gauss at delta = 1e-5, T = 200) is
    reproduced to its printed digits."""
    evidence = evaluate_test_vector(row)
    assert evidence.holds, evidence
