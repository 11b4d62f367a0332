"""Property tests of zCDP-NFL Lemma II: printed (D) vs corrected (D^2) one-step bound on running iterates."""

import pytest
from hypothesis import example, given, settings, target

from verify.budget import examples
from verify.strategies import nfl_run_settings
from verify.tolerance import MC_ALPHA
from verify.zcdp_nfl.lemma2 import (
    MC_BASE,
    evaluate_lemma2_expectation,
    evaluate_lemma2_pathwise,
)

#: The paper's size (K = 50, P = 8, M = 50), ridge, eta = 0.05/sqrt(n), no noise.
PAPER = {"seed": 2024, "K": 50, "P": 8, "M": 50, "objective": "ridge", "rho": 1.0, "step": "inv_sqrt", "eta0": 0.05,
         "T": 100}


@pytest.mark.claim("zcdp_nfl.lemma2_corrected")
@settings(max_examples=examples("many"))
@given(case=nfl_run_settings(T=100))
@example(case=PAPER)
@example(case={"objective": "lad", "rho": 0.5, "step": "inv", "eta0": 0.05, "T": 100})
def test_corrected_lemma2_holds_at_every_iteration_without_noise(case):
    """Property: without noise, the D^2 form of Lemma II (r = 0) holds at every iteration, for the three objectives,
    rho in [0.3, 3] and constant, eta0/sqrt(n) or eta0/n steps."""
    evidence = evaluate_lemma2_pathwise(case, "D2")
    target(evidence.measured, label="max (LHS - RHS)/scale")
    assert evidence.holds, evidence


@pytest.mark.claim("zcdp_nfl.lemma2_corrected")
def test_corrected_lemma2_holds_in_expectation_with_noise():
    """Property: with S2 noise the mean of LHS - RHS over 200 runs is significantly below 0 at every n (LAD,
    constant eta), although single paths violate the inequality."""
    evidence, _ = evaluate_lemma2_expectation({**MC_BASE, "objective": "lad", "step": "constant", "T": 60,
                                               "runs": 200, "noise_seed": 11}, MC_ALPHA / 59)
    assert evidence.holds, evidence
    assert evidence.parameters["pathwise_violations"] > 0


@pytest.mark.claim("zcdp_nfl.lemma2")
@settings(max_examples=examples("many"))
@given(case=nfl_run_settings(steps=("inv_sqrt", "inv"), T=100))
@example(case={**PAPER, "step": "inv"})
@example(case={"objective": "ridge", "rho": 0.5, "step": "inv_sqrt", "eta0": 0.05, "T": 100})
def test_printed_lemma2_fails_without_noise_for_decaying_steps(case):
    """Property: with the printed (2/rho) D^(n+1) term and a decaying step (eta^(n) -> 0, so D -> infinity but
    D^2 grows faster), Lemma II fails at some iteration of a noise-free run."""
    evidence = evaluate_lemma2_pathwise(case, "D")
    assert not evidence.holds
