"""Unit tests of theory.privacy.history: validation, exact values, closed-form limits, (un)boundedness."""

import math

import numpy as np
import pytest

from theory.privacy.history import history_coefficients_fedpdm, history_factor_limit_fedpdm, history_factors_fedpdm
from theory.privacy.sensitivity import sensitivity_fedpdm


@pytest.mark.parametrize(("call", "match"), [
    (lambda: history_factors_fedpdm([0.1, -0.1], [5, 5], 10.0), r"etas\[1\] must be a finite real in \(0, inf\)"),
    (lambda: history_factors_fedpdm([0.1, 0.1], [5], 10.0), r"Qs must have the shape of etas"),
    (lambda: history_factors_fedpdm([0.1], [0], 10.0), r"Qs must hold integers >= 1"),
    (lambda: history_factors_fedpdm([0.1], [5], 0.0), r"rho must be a finite real in \(0, inf\)"),
    (lambda: history_factors_fedpdm([0.1], [5], 10.0, local_start="cold"), r"local_start must be one of"),
    (lambda: history_factors_fedpdm([1.0], [400], 10.0), r"overflowing sensitivity"),
    (lambda: history_factor_limit_fedpdm(0.1, 10.0, 0), r"Q must be an integer >= 1"),
    (lambda: history_factor_limit_fedpdm(1e-9, 10.0, 1), r"too small"),
])
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("start", ["warm", "global"])
def test_unit_step_gives_exactly_three_halves(start):
    """docs/papers/fedpdm.md#review-notes: 1.5 +- 1e-9 at eta rho = 1 from the second participation on (6 eta G vs 4 eta
    G)."""
    for Q in (1, 2, 7):
        kappa = history_factors_fedpdm([0.1] * 20, [Q] * 20, 10.0, local_start=start)
        assert kappa[0] == 1.0
        assert np.all(np.abs(kappa[1:] - 1.5) <= 1e-9)
        assert history_factor_limit_fedpdm(0.1, 10.0, Q, local_start=start) == pytest.approx(1.5, abs=1e-12)


def test_global_start_recursion_reaches_the_closed_form():
    """docs/papers/fedpdm.md#review-notes: after >= 200 participations the recursion equals 1 + |1-2b|/(2(1-|b|)) to
    1e-6 for |b| <= 0.6."""
    for eta, Q in ((0.02, 5), (0.05, 5), (0.15, 5), (0.19, 5), (0.15, 1), (0.12, 1), (0.07, 3), (0.16, 2)):
        b = (1 - eta * 10.0) ** Q
        if abs(b) > 0.6:
            continue
        kappa = history_factors_fedpdm([eta] * 250, [Q] * 250, 10.0, local_start="global")[-1]
        closed = 1 + abs(1 - 2 * b) / (2 * (1 - abs(b)))
        assert abs(kappa - closed) <= 1e-6
        assert history_factor_limit_fedpdm(eta, 10.0, Q, local_start="global") == closed


def test_review_note_values_and_the_warm_start_boundary():
    # Regression values re-derived in docs/papers/fedpdm.md#review-notes (rho = 10, warm start).
    assert history_factor_limit_fedpdm(0.02, 10.0, 5) == pytest.approx(1.73, abs=5e-3)
    assert history_factor_limit_fedpdm(0.01, 10.0, 5) == pytest.approx(3.13, abs=5e-3)
    assert history_factor_limit_fedpdm(0.12, 10.0, 1) == pytest.approx(3.75, abs=1e-9)
    assert 58.0 <= history_factors_fedpdm([0.001] * 300, [5] * 300, 10.0)[-1] <= 61.0
    assert history_factor_limit_fedpdm(0.001, 10.0, 5, local_start="global") == pytest.approx(10.2, abs=5e-3)
    # b <= -1/3 (or |b| >= 1) is unbounded: inf, never a capped value; growth x1.366 per participation at b = -0.5.
    assert history_factor_limit_fedpdm(0.15, 10.0, 1) == math.inf
    assert history_factor_limit_fedpdm(0.2, 10.0, 2) == math.inf  # eta rho = 2, Q even: b = 1
    assert history_factor_limit_fedpdm(0.25, 10.0, 1, local_start="global") == math.inf  # b = -1.5
    kappa = history_factors_fedpdm([0.15] * 15, [1] * 15, 10.0)
    assert kappa[-1] == pytest.approx(313.7578125, rel=1e-12)
    assert kappa[-1] / kappa[-2] == pytest.approx(1.37, abs=1e-2)
    assert math.isfinite(history_factor_limit_fedpdm(0.1333, 10.0, 1))  # b = -0.333 > -1/3


def test_limit_is_the_supremum_of_the_sequence():
    for eta, Q in ((0.05, 5), (0.02, 5), (0.12, 1), (0.015, 3)):
        for start in ("warm", "global"):
            kappa = history_factors_fedpdm([eta] * 400, [Q] * 400, 10.0, local_start=start)
            limit = history_factor_limit_fedpdm(eta, 10.0, Q, local_start=start)
            assert np.all(np.diff(kappa) >= -1e-12)  # nondecreasing for a constant schedule
            assert kappa[-1] <= limit * (1 + 1e-12)


def test_coefficients_reproduce_the_factors():
    rng = np.random.default_rng(0)
    for start in ("warm", "global"):
        etas = rng.uniform(0.001, 0.19, 12)
        Qs = rng.integers(1, 8, 12)
        w = np.array([sensitivity_fedpdm(e, 10.0, int(q), 1.0) / 4 for e, q in zip(etas, Qs, strict=True)])
        kappa = history_factors_fedpdm(etas, Qs, 10.0, local_start=start)
        for m in range(1, 13):
            c = history_coefficients_fedpdm(etas[:m], Qs[:m], 10.0, local_start=start)
            assert c[-1] == -2.0
            assert np.sum(np.abs(c) * w[:m]) / (2 * w[m - 1]) == pytest.approx(kappa[m - 1], rel=1e-12)
