"""Property tests of the zCDP-NFL network (matrix) form, P2 (14)-(17), on running iterates."""

import pytest
from hypothesis import example, given, settings, target

from verify.budget import examples
from verify.strategies import nfl_network_settings
from verify.zcdp_nfl.network_form import (
    CORRECTED,
    PAPER_POINT,
    PRINTED,
    evaluate_network_form,
)

SMALL = {"seed": 3, "K": 5, "mean_degree": 2.0, "P": 2, "M": 6, "objective": "lad", "rho": 1.0, "step": "constant",
         "eta0": 0.5, "noise": "S1", "sigma2_0": 1e-2, "tau": 0.95, "T": 30}


@pytest.mark.claim("zcdp_nfl.network_form")
@settings(max_examples=examples("many"))
@given(case=nfl_network_settings())
@example(case=PAPER_POINT)
def test_corrected_network_form_holds_on_running_iterates(case):
    """Property: with diag(1/eta) = 2 D^2 in (16) and L_- xi in (17), the incidence-built matrix form equals the
    running algorithm's iterates to a few multiples of machine epsilon (any graph, objective, step family, noise)."""
    evidence = evaluate_network_form(case, CORRECTED)
    target(evidence.measured, label="relative residual / allowed")
    assert evidence.holds, evidence.parameters["residuals"]


@pytest.mark.claim("zcdp_nfl.network_form_printed")
@settings(max_examples=examples("many"))
@given(case=nfl_network_settings())
@example(case=SMALL)
def test_printed_network_form_fails_whenever_there_is_noise(case):
    """Property: the printed (17) (2 M xi on the right) fails on every noisy run, even at eta = 1/2 where the
    printed 2D equals 2D^2 in (16)."""
    evidence = evaluate_network_form(case, PRINTED)
    assert not evidence.holds
    assert evidence.parameters["residuals"]["eq17_printed"] > 1e-6
