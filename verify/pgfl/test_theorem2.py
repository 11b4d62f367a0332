"""Property tests of PGFL Theorem II and its Corollary on the running algorithm (findings and correction)."""

import pytest
from hypothesis import example, given, settings, target
from hypothesis import strategies as st

from verify.budget import examples
from verify.pgfl._instances import anisotropic_instance
from verify.pgfl._noise_sweep import PRIVACY_DEFAULTS
from verify.pgfl.theorem2 import evaluate_corollary_identity, evaluate_equal_optima, evaluate_noise_decomposition
from verify.pgfl.theorem2_limit import evaluate_limit_identity, evaluate_steady_state
from verify.strategies import pgfl_theorem2_instances

curvatures = st.floats(min_value=1e-2, max_value=1e2)


@st.composite
def equal_optima_points(draw):
    """(a1, a2, w0, rho, tau) with a1 != a2 by a factor >= 1.5, w0 != 0, rho > 0, tau in (0, 1)."""
    a1 = draw(curvatures)
    a2 = a1 * draw(st.floats(min_value=1.5, max_value=100.0))
    w0 = draw(st.floats(min_value=0.1, max_value=10.0)) * draw(st.sampled_from([-1.0, 1.0]))
    rho = 10.0 ** draw(st.floats(min_value=-2.0, max_value=2.0)) * a1
    tau = draw(st.floats(min_value=0.01, max_value=0.99))
    return a1, a2, w0, rho, tau


@pytest.mark.claim("pgfl.theorem2")
@pytest.mark.claim("pgfl.corollary")
@given(point=equal_optima_points())
@example(point=(1.0, 3.0, 1.0, 1.0, 0.4))
def test_equal_optima_violate_the_bound_for_every_rho(point):
    """Property: two clusters with equal optima (eta = 0, so B_n = tau eta = 0) and different curvatures have
    D_1 = tau^2 w0^2 (2a1/(2a1+rho) - 2a2/(2a2+rho))^2 > 0 for every rho > 0: Theorem II and the Corollary fail."""
    evidence = evaluate_equal_optima(*point)
    target(evidence.measured, label="D_1 (bound is 0)")
    assert evidence.parameters["closed_form_agrees"], evidence
    assert not evidence.holds and evidence.measured > 0.0


@pytest.mark.claim("pgfl.corollary")
@given(point=equal_optima_points(), n=st.integers(min_value=2, max_value=30))
@example(point=(1.0, 3.0, 1.0, 100.0, 0.9), n=20)  # the check's reported counterexample
def test_corollary_fails_with_its_hypothesis_non_vacuous(point, n):
    """Property: after n - 1 >= 1 steps of tau = 0 and one of tau on the equal-optima instance (eta = 0, so the
    Corollary's bound tau eta is 0) the exact gap tau^2 w0^2 (r_2^n - r_1^n)^2 is positive, and the simulation agrees
    with it wherever it is resolvable: the Corollary fails although its hypothesis tau^(i) = 0 (i < n) holds."""
    evidence = evaluate_equal_optima(*point, n)
    target(float(evidence.parameters["resolvable"]), label="resolvable in floating point")
    assert evidence.parameters["closed_form_agrees"], evidence
    assert evidence.parameters["exact_positive"] and not evidence.holds, evidence


#: The paper's regression setting (docs/papers/pgfl.md#choice-regression-data: S = 10, 15 clients per server, Q = 3,
#: d = 60, D_k in 2..9, lambda = 1, rho = 0.25 L_max, tau = 0.4, phi^(0) = 0.001, zeta = 0.99, nominal C = 1).
PAPER_SETTING = {"seed": 0, "servers": 10, "clients_per_server": 15, "clusters": 3, "d": 60, "lam": 1.0,
                 "samples": (2, 9), "data": "gaussian", "rho_factor": 0.25, "taus": (0.4,), **PRIVACY_DEFAULTS,
                 "iterations": 30, "runs": 3, "run_seed": 0}


@pytest.mark.claim("pgfl.theorem2")
@settings(max_examples=examples("most"))
@given(params=pgfl_theorem2_instances())
@example(params=PAPER_SETTING)
def test_privacy_noise_adds_a_data_independent_response_to_the_gap(params):
    """Property: with common random numbers and privacy noise, run by run the gap w_bar - w is the noise-free gap plus
    the gap of the same runs on y = 0 (a data-independent, mean-zero noise response), so E[D_n] >= D_n(xi = 0) and
    privacy noise never rescues Theorem II; target() pushes toward the largest noise-free excess (D_n - B_n) / eta."""
    evidence = evaluate_noise_decomposition(params)
    target(evidence.parameters["max_excess_over_eta"], label="max_n (D_n - B_n) / eta, noise-free")
    assert evidence.holds, evidence


@pytest.mark.claim("pgfl.theorem2_steady_state")
@settings(max_examples=examples("many"))
@given(rho_mult=st.floats(min_value=0.5, max_value=1.0), tau=st.floats(min_value=0.2, max_value=0.5))
@example(rho_mult=1.0, tau=0.4)
def test_limit_exceeds_eta_with_anisotropic_hessians(rho_mult, tau):
    """Property: on the anisotropic two-cluster instance the limit of D_n exceeds eta for tau in [0.2, 0.5],
    rho in [0.5, 1] L_max (the limit is the squared gap of the two exact fixed points; r(T) < 1 is checked)."""
    evidence = evaluate_steady_state(rho_mult * anisotropic_instance().max_curvature, tau, iterations=2)
    target(evidence.measured / evidence.bound, label="lim D_n / eta")
    assert not evidence.holds and evidence.parameters["fixed_point_residual"] < 1e-12


@pytest.mark.claim("pgfl.corollary_identity")
@settings(max_examples=examples("many"))
@given(seed=st.integers(0, 2**30), n=st.integers(1, 40), tau=st.floats(min_value=0.01, max_value=1.0),
       rho_mult=st.floats(min_value=0.1, max_value=2.0), noise=st.booleans())
def test_single_step_gap_is_tau_times_the_w_hat_spread(seed, n, tau, rho_mult, noise):
    """Property: with tau^(i) = 0 for i < n, w_bar^(n) - w^(n) = tau^(n)(w_hat_q - mean_{r != q} w_hat_r) at every
    server, with or without privacy noise (common random numbers), so D_n <= tau^2 max ||w_hat_q - w_hat_r||^2."""
    evidence = evaluate_corollary_identity(seed, n, tau, rho_mult, noise=noise)
    target(evidence.measured, label="identity error / rounding bound")
    assert evidence.holds, evidence


@pytest.mark.claim("pgfl.theorem2_limit_identity")
@settings(max_examples=examples("several"))
@given(seed=st.integers(min_value=0, max_value=2**30), servers=st.integers(min_value=1, max_value=3),
       tau=st.floats(min_value=0.05, max_value=0.95), rho_mult=st.floats(min_value=0.5, max_value=2.0))
@example(seed=0, servers=1, tau=0.4, rho_mult=1.0)
def test_limit_of_the_gap_is_the_fixed_point_gap(seed, servers, tau, rho_mult):
    """Property: with constant tau and no noise, the tau = 0 and tau runs converge to the fixed points of their affine
    iterations, so lim_n D_n = max_{s,q} ||w_bar* - w*_tau||^2 (to first order in the measured distance)."""
    evidence = evaluate_limit_identity(seed, servers, tau, rho_mult)
    target(evidence.measured / max(evidence.bound, 1e-300), label="|D_N - D_inf| / allowance")
    assert evidence.holds, evidence


@pytest.mark.claim("pgfl.theorem2_limit_identity")
def test_anisotropic_limit_is_the_fixed_point_gap_far_above_eta():
    """Property: on the anisotropic instance the identity holds (the run agrees with the affine prediction over 1500
    steps) and D_inf / eta is about 140 at rho = L_max, tau = 0.4."""
    evidence = evaluate_limit_identity(0, 1, 0.4, 1.0, problem=anisotropic_instance())
    assert evidence.holds, evidence
    assert evidence.parameters["D_inf_over_eta"] > 100.0
