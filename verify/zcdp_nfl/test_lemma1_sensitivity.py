"""Property tests of zCDP-NFL Lemma I (sensitivity of the primal update) and of the update's closed form."""

import math

import pytest
from hypothesis import example, given, target
from hypothesis import strategies as st

from theory.privacy import gaussian_sigma_for_zcdp, sensitivity_zcdp_nfl
from verify.strategies import nfl_update_settings
from verify.tolerance import gamma
from verify.zcdp_nfl._instances import REPLACEMENTS
from verify.zcdp_nfl.lemma1_sensitivity import (
    PAPER_SETTING,
    evaluate_closed_form_argmin,
    evaluate_sensitivity,
    instance_from_settings,
    sensitivity_margins,
)

PAPER = ({**PAPER_SETTING, "loss": "lad"}, 2024)


@pytest.mark.claim("zcdp_nfl.lemma1")
@given(case=nfl_update_settings(), replacement=st.sampled_from(REPLACEMENTS))
@example(case=PAPER, replacement="reflect")
@example(case=PAPER, replacement="random")
@example(case=({**PAPER_SETTING, "loss": "clipped_squared"}, 7), replacement="reflect")
def test_update_difference_is_within_the_lemma1_bound(case, replacement):
    """Property: for every client, given the same released history, the primal updates for replace-one
    neighbours differ by at most 2 c1/(M (2 rho d + 1/eta)) (plus counted rounding), and the difference
    equals -(l'(x_M) - l'(x'))/(M (2 rho d + 1/eta)) to rounding."""
    settings, seed = case
    evidence = evaluate_sensitivity(settings, replacement, seed)
    target(evidence.measured, label="||w_D - w_D'|| / allowed bound")
    assert evidence.holds, evidence


@pytest.mark.claim("zcdp_nfl.lemma1")
@given(case=nfl_update_settings())
@example(case=PAPER)
def test_reflected_label_attains_the_bound(case):
    """Property: with x' = x_M (||x_M|| = c1) and the label reflected, y' = 2 x_M^T w~ - y_M, the two
    subgradients are antiparallel and ||w_D - w_D'|| equals the Lemma I bound to rounding (the bound is tight)."""
    settings, seed = case
    m = sensitivity_margins(instance_from_settings(settings, "reflect", seed))
    slack = m["allowed"] - m["bound"]
    target(float(max(abs(m["distance"] - m["bound"]) / slack)), label="|ratio - 1| / rounding")
    assert all(abs(m["distance"] - m["bound"]) <= slack)


@pytest.mark.claim("zcdp_nfl.lemma1")
@given(case=nfl_update_settings())
@example(case=PAPER)
def test_closed_form_is_the_argmin_of_p2_7(case):
    """Property: the closed-form update equals Clarabel's solution of P2 (7) within the strong-convexity
    certified radius of the solver's point (and that radius is within what the solver tolerance allows)."""
    settings, seed = case
    evidence = evaluate_closed_form_argmin(settings, seed, client=seed % settings["K"])
    target(evidence.measured, label="distance / certified radius")
    assert evidence.holds, evidence


@pytest.mark.claim("zcdp_nfl.lemma1")
def test_paper_test_vector():
    """Property: the test vector (5.1): c1 = 1, M = 50, rho = 1, d = 3, eta = 0.1 gives Delta = 0.0025,
    and phi = 0.01 gives sigma^2 = 3.125e-4 (Theorem I)."""
    delta = sensitivity_zcdp_nfl(1.0, 50, 1.0, 3, 0.1)
    assert math.isclose(delta, 0.0025, rel_tol=gamma(6), abs_tol=0.0)
    assert math.isclose(gaussian_sigma_for_zcdp(delta, 0.01) ** 2, 3.125e-4, rel_tol=gamma(12), abs_tol=0.0)
