"""The Theorem I checks discriminate (mutation tests) and their closed forms agree with the reference."""

import math

import numpy as np
import pytest

from reference_impl.pgfl import PGFLConfig, cluster_optima, fixed_point_tau0, iteration_spectral_radius, run_pgfl
from theory.pgfl.consensus import consensus_bias, fixed_point_state, pi_weighted_optimum
from theory.pgfl.stability import (
    alg2_contraction_bound,
    identical_clients_threshold,
    iteration_radius,
    stability_threshold_factor,
)
from verify.pgfl._instances import build_instance, four_cycle_identical_params
from verify.pgfl._tau0_iteration import affine_parts, exact_mean_square, fit_contraction_factor, state_vectors
from verify.pgfl.theorem1 import (
    check_theorem1,
    check_theorem1_fixed_point,
    evaluate_theorem1,
    reproduce_theorem1,
    smallest_stable_rho,
)
from verify.pgfl.theorem1_private import check_theorem1_private, check_theorem1_private_rate, private_target_factor
from verify.records import CheckContext, Verdict
from verify.tolerance import EPS, TARGET_RTOL

_SMALL = {"seed": 3, "servers": 3, "clients_per_server": 4, "clusters": 2, "d": 3, "lam": 0.05, "samples": (3, 10),
          "data": "gaussian", "edges": [(0, 1), (1, 2)], "rho_factor": 0.3}


# ---- injected wrong closed forms (module-level so that process executors could pickle them) ----------------

def limit_as_target(problem, config):
    """The true limit (Pc) in place of (Pa): the theorem 'holds' against it (control)."""
    return fixed_point_tau0(problem, config)[0]


def slightly_wrong_fixed_point(problem, config):
    u, w, residual = fixed_point_state(problem, config)
    return u * (1.0 + 1e-7), w * (1.0 + 1e-7), residual


def radius_too_small(problem, config):
    return iteration_spectral_radius(problem, config) - 0.02


def radius_too_large(problem, config):
    return iteration_spectral_radius(problem, config) + 0.06


def slightly_wrong_pi_optimum(problem):
    return pi_weighted_optimum(problem) * (1.0 + 1e-6)


def factor_off(radius, zeta):
    return private_target_factor(radius, zeta) + 0.02


def factor_r_squared(radius, zeta):
    """The wrong regime: the noise-free rate r(T)^2 instead of max(r(T)^2, zeta)."""
    return radius**2


# ---- mutation tests ------------------------------------------------------------------------------------------

def test_theorem1_check_confirms_against_the_true_limit():
    """Control: with (Pc) as the target the same runs 'confirm' Theorem I, so its refutation is about the target."""
    result = check_theorem1(CheckContext(), optimum_fn=limit_as_target)
    assert result.verdict is Verdict.CONFIRMED, result.summary


def test_theorem1_refutes_a_slightly_wrong_target_even_with_one_server():
    evidence = evaluate_theorem1({**_SMALL, "servers": 1, "edges": []},
                                 optimum_fn=lambda p, c: cluster_optima(p) * (1.0 + 1e-8))
    assert not evidence.holds and evidence.measured > TARGET_RTOL


@pytest.mark.parametrize("kwargs", [{"fixed_point_fn": slightly_wrong_fixed_point}, {"radius_fn": radius_too_small},
                                    {"radius_fn": radius_too_large}, {"pi_optimum_fn": slightly_wrong_pi_optimum}],
                         ids=["fixed-point-1e-7", "radius-0.02-low", "radius-0.06-high", "pi-optimum-1e-6"])
def test_fixed_point_check_refutes_a_slightly_wrong_closed_form(kwargs):
    result = check_theorem1_fixed_point(CheckContext(), **kwargs)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample and result.measured > result.bound


def factor_zeta_only(radius, zeta):
    """The wrong regime on the other branch: zeta (the noise term's factor) whatever r(T) is."""
    return zeta


@pytest.mark.parametrize("factor_fn", [factor_off, factor_r_squared, factor_zeta_only],
                         ids=["factor+0.02", "r^2", "zeta"])
def test_private_rate_check_refutes_a_wrong_factor(factor_fn):
    result = check_theorem1_private_rate(CheckContext(), factor_fn=factor_fn)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.monte_carlo is not None and result.monte_carlo.n >= 200


def test_private_as_stated_check_confirms_against_the_true_limit():
    """Control: with (Pc) as the target the private statement would be confirmed: its refutation is about (Pa)."""
    result = check_theorem1_private(CheckContext(), optimum_fn=limit_as_target)
    assert result.verdict is Verdict.CONFIRMED, result.summary


def test_refuted_counterexample_reproduces_from_its_parameters():
    result = check_theorem1(CheckContext())
    assert result.verdict is Verdict.REFUTED and result.corrected_claim == "pgfl.theorem1_fixed_point"
    again = reproduce_theorem1(result.counterexample)
    assert not again.holds and again.measured == pytest.approx(result.measured, rel=1e-6)
    assert again.parameters["relative_distance_to_Pc"] <= 1e-9  # it converged, to (Pc)


# ---- closed forms against the reference and against each other ----------------------------------------------

@pytest.mark.parametrize("data", ["gaussian", "identical", "conditioned"])
@pytest.mark.parametrize("kwargs", [{}, {"algorithm": "alg2"}, {"algorithm": "alg2", "dual_ref": "server_model"}])
def test_closed_form_radius_and_affine_map_match_the_reference(data, kwargs):
    problem = build_instance({**_SMALL, "data": data})
    for factor in (0.05, 0.3, 1.5):
        config = PGFLConfig(rho=factor * problem.max_curvature, **kwargs)
        reference = iteration_spectral_radius(problem, config)
        T, _ = affine_parts(problem, config, with_noise=False)
        assert abs(iteration_radius(problem, config) - reference) <= 64 * math.sqrt(EPS)
        assert abs(float(np.max(np.abs(np.linalg.eigvals(T)))) - reference) <= 64 * math.sqrt(EPS)


def test_fixed_point_state_is_the_limit_of_the_iterates_for_both_dual_references():
    problem = build_instance(_SMALL)
    for kwargs in ({}, {"algorithm": "alg2"}):
        config = PGFLConfig(rho=0.3 * problem.max_curvature, **kwargs)
        u_star, _, residual = fixed_point_state(problem, config)
        state = run_pgfl(problem, config, 400, np.random.default_rng(0)).state
        assert residual <= 1e3 * EPS
        assert np.linalg.norm(state_vectors(state)[0] - u_star) <= 1e3 * EPS * np.linalg.norm(u_star)


def test_identical_clients_threshold_is_exact_on_the_four_cycle():
    """rho_c = L_max m/(1+m) = L_max/4: r(T) > 1 just below, < 1 just above (reference radius)."""
    problem = build_instance(four_cycle_identical_params(0.1))
    rho_c = identical_clients_threshold(problem)
    assert rho_c == pytest.approx(problem.max_curvature / 4, rel=1e-12)
    assert iteration_spectral_radius(problem, PGFLConfig(rho=0.99 * rho_c)) > 1.0
    assert iteration_spectral_radius(problem, PGFLConfig(rho=1.01 * rho_c)) < 1.0
    a = 0.1 / 1.1  # rho = 0.1 L_max: r(T) = |(2a - 1)(-1/3) + 1 - a|
    assert iteration_spectral_radius(problem, PGFLConfig(rho=0.1 * problem.max_curvature)) == pytest.approx(
        4 / 3 - 5 * a / 3, rel=1e-10)


def test_alg1_is_stable_for_every_rho_when_the_mixing_matrix_is_psd_and_alg2_for_every_rho():
    """lambda_min(A_srv) >= 0 (a path of 2 servers, a triangle) => Algorithm 1 stable at any rho; literal
    Algorithm 2 contracts at any rho on any graph, with r(T) below the proven bound."""
    for edges, S in (([(0, 1)], 2), ([(0, 1), (1, 2), (0, 2)], 3)):
        problem = build_instance({**four_cycle_identical_params(0.1), "servers": S, "edges": edges})
        assert stability_threshold_factor(problem.adjacency) == 0.0
        scan = smallest_stable_rho(problem, np.geomspace(1e-3, 1.0, 7))
        assert scan["largest_unstable_rho_over_Lmax"] is None
    problem = build_instance(four_cycle_identical_params(0.1))
    for factor in (1e-3, 0.05, 0.3, 2.0):
        rho = factor * problem.max_curvature
        radius = iteration_spectral_radius(problem, PGFLConfig(rho=rho, algorithm="alg2"))
        assert radius <= alg2_contraction_bound(problem, rho) < 1.0


def test_bias_identity_and_single_server_consensus():
    problem = build_instance(_SMALL)
    rho = 0.3 * problem.max_curvature
    w, _ = fixed_point_tau0(problem, PGFLConfig(rho=rho))
    for cluster in consensus_bias(problem, rho, w):
        assert cluster["kappa"] > 0 and cluster["identity_gap"] <= 1e3 * EPS * cluster["scale"]
    one = build_instance({**_SMALL, "servers": 1, "edges": []})
    w1, _ = fixed_point_tau0(one, PGFLConfig(rho=rho))
    assert np.max(np.abs(w1[0] - pi_weighted_optimum(one))) <= 1e3 * EPS * np.max(np.abs(w1))
    assert np.max(np.abs(pi_weighted_optimum(one) - cluster_optima(one))) <= 1e3 * EPS * np.max(np.abs(w1))


def test_exact_mean_square_matches_monte_carlo_at_one_iteration():
    """One noisy step from the origin: E||u^(1) - u*||^2 = ||u_bar^(1) - u*||^2 + tr(B Sigma B^T) (exact)."""
    problem = build_instance({**_SMALL, "data": "conditioned"})
    config = PGFLConfig(rho=0.3 * problem.max_curvature, algorithm="alg2", phi0=0.05, zeta=0.9, C=1.0)
    u_star, _, _ = fixed_point_state(problem, PGFLConfig(rho=config.rho, algorithm="alg2"))
    exact = exact_mean_square(problem, config, u_star, 1)[0]
    sq = run_pgfl(problem, config, 1, np.random.default_rng(5), runs=4000,
                  observe=lambda st: np.sum((state_vectors(st) - u_star) ** 2, axis=1)).observations[0]
    z = abs(sq.mean() - exact) / (sq.std(ddof=1) / math.sqrt(sq.size))
    assert z <= 5.0  # two-sided, alpha ~ 6e-7


def test_fit_contraction_factor_recovers_a_geometric_sequence():
    n = np.arange(200)
    fit = fit_contraction_factor(0.5 * 0.8**n)
    assert fit["factor"] == pytest.approx(0.8, rel=1e-12)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: fit_contraction_factor([1.0, 0.5]), "never enter the window|fewer than 3"),
    (lambda: fit_contraction_factor(np.geomspace(1, 1e-12, 50), window=(1e-3, 1e-11)), "window must satisfy"),
    (lambda: build_instance({**_SMALL, "clients_per_server": 1}), "clients_per_server must be >= clusters"),
    (lambda: build_instance({**_SMALL, "data": "uniform"}), "data must be"),
    (lambda: build_instance({**_SMALL, "samples": (1, 9), "data": "conditioned"}), "needs samples >= d"),
    (lambda: build_instance({**_SMALL, "edges": [(0, 0)]}), "edges must join distinct servers"),
    (lambda: stability_threshold_factor(np.zeros((2, 3))), "adjacency must be a square matrix"),
    (lambda: alg2_contraction_bound(build_instance(_SMALL), 0.0), "rho must be a finite real"),
    (lambda: private_target_factor(0.5, 1.5), "zeta in"),
    (lambda: iteration_radius(build_instance(_SMALL), PGFLConfig(rho=1.0, taus=(0.3,))), "needs tau = 0"),
])
def test_bad_input_raises_value_error_naming_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()
