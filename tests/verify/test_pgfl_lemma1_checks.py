"""PGFL Lemma 1 / Theorem III checks: they can fail (mutation tests), and their certificates are sound."""

import itertools
import math

import numpy as np
import pytest
from scipy.special import expit

from theory.pgfl.sensitivity import certified_logistic_sensitivity, logistic_gradient_diameter
from theory.privacy import gaussian_sigma_for_zcdp, sensitivity_pgfl
from verify.pgfl._lemma1_records import neighbour_gap_records, neighbour_record, sample_instance
from verify.pgfl._neighbour_search import adversarial_neighbour_gap
from verify.pgfl.lemma1_sensitivity import (
    CLAIMS,
    check_lemma1_equality,
    check_lemma1_upper_bound,
    check_theorem3,
    evaluate_lemma1_equality,
    reproduce_lemma1_equality,
)
from verify.records import CheckContext, Verdict
from verify.tolerance import UNIT_ROUNDOFF


def _scaled(factor):
    def fn(C, rho, D):
        return sensitivity_pgfl(C, rho, D) * factor
    return fn


def _sigma_scaled(factor):
    def fn(delta, phi):
        return gaussian_sigma_for_zcdp(delta, phi) * factor
    return fn


@pytest.mark.parametrize(("check", "kwargs"), [
    (check_lemma1_upper_bound, {"sensitivity_fn": _scaled(1 - 1e-6)}),
    (check_lemma1_upper_bound, {"sensitivity_fn": _scaled(1 + 1e-6)}),
    (check_theorem3, {"sensitivity_fn": _scaled(1 - 1e-6)}),
    (check_theorem3, {"sigma_fn": _sigma_scaled(1 - 1e-6)}),
], ids=["upper-bound-deflated", "upper-bound-inflated-not-attained", "theorem3-sensitivity", "theorem3-sigma"])
def test_checks_refute_a_slightly_wrong_closed_form(check, kwargs):
    """A relative error of 1e-6 in the sensitivity or the noise scale is caught (through the Huber
    instances that attain the bound)."""
    result = check(CheckContext(), **kwargs)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample


def test_equality_check_refutes_values_outside_the_bracket_on_either_side():
    # the paper's value is above every certified maximum; a tenth of it is below every found gap
    for factor in (1.0, 0.1):
        result = check_lemma1_equality(CheckContext(), sensitivity_fn=_scaled(factor))
        assert result.verdict is Verdict.REFUTED, result.summary
    low = evaluate_lemma1_equality(neighbour_gap_records(CheckContext())[0] | {}, sensitivity_fn=_scaled(0.01))
    assert not low.holds and low.parameters["max_gap_lower"] > low.parameters["claimed"]


def test_equality_evidence_holds_for_a_value_inside_the_bracket():
    """The equality check can confirm: a claimed value between the found gap and the certificate passes."""
    record = next(r for r in neighbour_gap_records(CheckContext()) if r["kind"] == "paper_first_iteration")
    mid = 0.5 * (record["gap"] + record["certified"]["upper"])
    evidence = evaluate_lemma1_equality(record, sensitivity_fn=lambda C, rho, D: mid)
    assert evidence.holds, evidence


def test_counterexample_reproduces_from_scratch_and_is_the_papers_first_iteration():
    result = check_lemma1_equality(CheckContext())
    ce = result.counterexample
    assert ce["kind"] == "paper_first_iteration" and ce["w_server"] == [0.0, 0.0] and ce["phi_dual"] == [0.0, 0.0]
    again = reproduce_lemma1_equality(ce)
    assert not again.holds and again.measured < 0.7
    assert result.corrected_claim == "pgfl.lemma1_upper_bound"
    assert {c.id for c in CLAIMS} == {"pgfl.lemma1", "pgfl.lemma1_upper_bound", "pgfl.theorem3"}


def test_results_are_reproducible_and_records_are_shared():
    ctx = CheckContext(seed=0)
    assert neighbour_gap_records(ctx) is neighbour_gap_records(CheckContext(seed=0))
    a, b = check_lemma1_upper_bound(ctx), check_lemma1_upper_bound(CheckContext(seed=0))
    assert a.measured == b.measured and a.details == b.details


@pytest.mark.parametrize("kappa", [0.0, 0.7, 3.0, 20.0, 150.0])
def test_diameter_certificate_dominates_a_dense_sample_of_the_gradient_set(kappa):
    """Soundness of the certificate: points sigma(kappa e1.xi) xi, ||xi|| <= 1, in R^3 (random radii,
    polar and azimuthal angles); no pair is farther apart than the certified diameter."""
    rng = np.random.default_rng(1)
    n = 20_000
    xi = rng.standard_normal((n, 3))
    xi *= (rng.uniform(0, 1, n) ** 0.25 / np.linalg.norm(xi, axis=1))[:, None]
    g = expit(kappa * xi[:, 0])[:, None] * xi
    # diameter of the sample: exact over its extreme directions (many directions, lower estimate)
    u = rng.standard_normal((1000, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    proj = g @ u.T
    sample_diameter = float(np.max(proj.max(0) - proj.min(0)))
    estimate, upper = logistic_gradient_diameter(kappa, kappa)
    assert sample_diameter <= upper
    assert upper - estimate <= 2e-3  # the certificate is tight, not vacuous
    assert sample_diameter >= estimate - 0.05


def test_diameter_is_increasing_and_tends_to_two():
    values = [logistic_gradient_diameter(k, k)[0] for k in (0.0, 1.0, 4.0, 16.0, 100.0, 1000.0)]
    assert all(a < b for a, b in itertools.pairwise(values))
    # kappa = 0: the ball of radius 1/2, diameter exactly 1 (the estimate is a width, so at most 1)
    assert values[0] <= 1.0 + 64 * UNIT_ROUNDOFF <= logistic_gradient_diameter(0.0, 0.0)[1]
    assert values[-1] > 1.999


def test_diameter_input_validation():
    with pytest.raises(ValueError, match="kappa_lo"):
        logistic_gradient_diameter(2.0, 1.0)
    with pytest.raises(ValueError, match=r"tol must be in \(0, 1\)"):
        logistic_gradient_diameter(0.0, 1.0, tol=0.0)
    with pytest.raises(ValueError, match="directions must be an integer >= 2"):
        logistic_gradient_diameter(0.0, 1.0, directions=1)


def test_adversarial_search_never_exceeds_the_certificate():
    rng = np.random.default_rng(4)
    for _ in range(4):
        problem, B = sample_instance(rng, "logistic")
        pair = adversarial_neighbour_gap(problem, B, rng, candidates=24, restarts=1)
        cert = certified_logistic_sensitivity(problem, B)
        assert pair["gap"] - pair["gap_error"] <= cert["upper"]


def test_certificate_rejects_batched_or_huber_instances():
    problem, B = sample_instance(np.random.default_rng(0), "huber")
    with pytest.raises(ValueError, match="unbatched"):
        certified_logistic_sensitivity(problem, B)


def test_sup_over_conditioning_inputs_approaches_the_bound():
    """The figure's claim: with lambda = 0, D = 1, the worst ratio tends to 1 as ||w_s + phi/rho|| grows."""
    result = check_lemma1_equality(CheckContext())
    sweep = result.details["sup_over_conditioning"]
    assert sweep["empirical_lower"][-1] > 0.99
    assert all(lo <= up for lo, up in zip(sweep["empirical_lower"], sweep["certified_upper"], strict=True))
    assert all(up < 1.0 for up in sweep["certified_upper"])
    assert math.isclose(result.measured, result.counterexample["certified_ratio"])


def test_features_outside_the_declared_ball_are_rejected():
    problem, B = sample_instance(np.random.default_rng(0), "logistic")
    with pytest.raises(ValueError, match=r"X must lie in the ball of radius feature_radius"):
        certified_logistic_sensitivity(problem, 0.5 * B)
    with pytest.raises(ValueError, match=r"x_new must lie in the ball"):
        neighbour_record(problem, B, problem.X[-1], 0.0, 2.0 * B * np.eye(problem.dim)[0], 0.0)
