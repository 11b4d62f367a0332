"""zCDP-NFL reference: the one-step primal update (argmin of P2 (7)), the full algorithm, schedules, ground truth."""

import doctest
import importlib
import pkgutil

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import reference_impl.zcdp_nfl as module
from reference_impl.zcdp_nfl import zcdp_nfl_primal_update
from verify.tolerance import gamma
from verify.zcdp_nfl._instances import elastic_net_subgradient, lad_subgradient, sample_update_instance
from verify.zcdp_nfl.lemma1_sensitivity import evaluate_closed_form_argmin


def _instance(seed=0, **kw):
    args = {"K": 6, "P": 3, "M": 7, "rho": 0.7, "eta": 0.3, "loss": "lad", "replacement": "random"} | kw
    return sample_update_instance(np.random.default_rng(seed), **args)


def _update(inst, X=None, y=None, **kw):
    return zcdp_nfl_primal_update(inst.w_tilde, inst.neighbour_sum, inst.gamma, inst.X if X is None else X,
                                  inst.y if y is None else y, lad_subgradient, inst.rho, inst.eta, inst.degree, **kw)


def test_doctests_pass():
    """Every module of the package (the split keeps the doctests: at least the primal update's one runs)."""
    names = [f"{module.__name__}.{info.name}" for info in pkgutil.iter_modules(module.__path__)]
    results = [doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS) for name in names]
    assert sum(r.failed for r in results) == 0 and sum(r.attempted for r in results) >= 1


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("loss", ["lad", "clipped_squared"])
def test_closed_form_matches_cvxpy_solve_of_p2_7(seed, loss):
    """Closed form = Clarabel's argmin of (7) within the strong-convexity certified radius."""
    settings_ = {"K": 8, "P": 4, "M": 12, "rho": 0.5 + seed, "eta": 0.05 * (seed + 1), "history_scale": 1.0,
                 "regular_degree": None, "loss": loss}
    evidence = evaluate_closed_form_argmin(settings_, seed, client=seed)
    assert evidence.holds, evidence
    assert evidence.parameters["distance"] < 1e-12


def test_printed_a1_is_not_the_argmin_but_has_the_same_slope():
    """P2 (A.1) as printed (+rho/2 sum(w~_k - w~_l) + gamma/2) is not the update
    (erratum E6, docs/papers/zcdp_nfl.md#erratum-e6), yet its derivative in the data term is the same, so Lemma I is
    unaffected."""
    inst = _instance(3)
    d = inst.degree[:, None].astype(float)
    g = lad_subgradient(inst.X, inst.y, inst.w_tilde).mean(axis=1)
    printed = (inst.w_tilde / inst.eta + 0.5 * inst.rho * (d * inst.w_tilde - inst.neighbour_sum) + inst.gamma / 2
               - g) / (1 / inst.eta + 2 * inst.rho * d)
    assert np.max(np.abs(printed - _update(inst))) > 1e-3
    X2, y2 = inst.X_prime, inst.y_prime
    g2 = lad_subgradient(X2, y2, inst.w_tilde).mean(axis=1)
    printed2 = printed - (g2 - g) / (1 / inst.eta + 2 * inst.rho * d)
    np.testing.assert_allclose(printed - printed2, _update(inst) - _update(inst, X2, y2), rtol=0, atol=1e-14)


@given(shift=st.floats(min_value=-10, max_value=10), seed=st.integers(0, 2**16))
def test_update_is_affine_in_the_data_term(shift, seed):
    """Adding a constant c to every per-sample subgradient moves w by -c/(1/eta + 2 rho d_k) exactly (to rounding)."""
    inst = _instance(seed)
    base = _update(inst)
    moved = zcdp_nfl_primal_update(inst.w_tilde, inst.neighbour_sum, inst.gamma, inst.X, inst.y,
                                   lambda X, y, w: lad_subgradient(X, y, w) + shift, inst.rho, inst.eta, inst.degree)
    expected = base - shift / (1 / inst.eta + 2 * inst.rho * inst.degree[:, None])
    scale = (np.abs(inst.w_tilde) / inst.eta
             + inst.rho * (inst.degree[:, None] * np.abs(inst.w_tilde) + inst.neighbour_abs_sum)
             + np.abs(inst.gamma) + abs(shift) + 1)
    assert np.all(np.abs(moved - expected) <= gamma(40) * scale / (1 / inst.eta + 2 * inst.rho * inst.degree[:, None]))


def test_batch_axis_equals_loop():
    """Leading batch axes (Monte-Carlo runs) give the same rows as one call per run; eta may be per client."""
    insts = [_instance(s) for s in range(3)]
    eta = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])

    def stack(name):
        return np.stack([getattr(i, name) for i in insts])

    batched = zcdp_nfl_primal_update(stack("w_tilde"), stack("neighbour_sum"), stack("gamma"), stack("X"), stack("y"),
                                     lad_subgradient, 0.7, eta, insts[0].degree)
    for b, inst in enumerate(insts):
        single = zcdp_nfl_primal_update(inst.w_tilde, inst.neighbour_sum, inst.gamma, inst.X, inst.y, lad_subgradient,
                                        0.7, eta, insts[0].degree)
        np.testing.assert_array_equal(batched[b], single)


def test_regulariser_enters_as_a_data_independent_shift():
    inst = _instance(5)
    with_reg = _update(inst, regularizer_subgradient=lambda w: elastic_net_subgradient(w, K=inst.K))
    shift = elastic_net_subgradient(inst.w_tilde, K=inst.K) / (1 / inst.eta + 2 * inst.rho * inst.degree[:, None])
    np.testing.assert_allclose(_update(inst) - with_reg, shift, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"rho": 0.0}, "rho must be"), ({"rho": float("nan")}, "rho must be"), ({"eta": -1.0}, "eta must be"),
     ({"eta": np.inf}, "eta must be"), ({"eta": np.ones(4)}, "eta must broadcast"),
     ({"degree": np.array([1, 2, 3])}, "degree must be"), ({"degree": np.full(6, 1.5)}, "degree must be"),
     ({"y": np.zeros((6, 3))}, "y must have shape"), ({"gamma": np.zeros((6, 2))}, "one shape"),
     ({"w_tilde": np.full((6, 3), np.nan)}, "w_tilde must be finite")],
)
def test_bad_input_raises_value_error_naming_the_parameter(kwargs, message):
    inst = _instance(0)
    args = {"w_tilde": inst.w_tilde, "neighbour_sum": inst.neighbour_sum, "gamma": inst.gamma, "X": inst.X,
            "y": inst.y, "loss_subgradient": lad_subgradient, "rho": inst.rho, "eta": inst.eta,
            "degree": inst.degree} | kwargs
    with pytest.raises(ValueError, match=message):
        zcdp_nfl_primal_update(**args)


def test_wrong_subgradient_shape_is_rejected():
    inst = _instance(0)
    with pytest.raises(ValueError, match="loss_subgradient must return"):
        zcdp_nfl_primal_update(inst.w_tilde, inst.neighbour_sum, inst.gamma, inst.X, inst.y,
                               lambda X, y, w: w, inst.rho, inst.eta, inst.degree)


# ---- the full algorithm (reference_impl.zcdp_nfl.run_zcdp_nfl) -------------------------------------------------

from reference_impl.zcdp_nfl import (  # noqa: E402
    NFLConfig,
    NFLProblem,
    PrivacySchedule,
    StepSchedule,
    centralized_optimum,
    normalized_error,
    run_arm,
    run_zcdp_nfl,
    synthetic_problem,
)
from theory.privacy import sensitivity_zcdp_nfl  # noqa: E402
from verify.zcdp_nfl.corollary_total import corollary_total  # noqa: E402


def _problem(objective="ridge", seed=1, **kw):
    return synthetic_problem(np.random.default_rng(seed), objective=objective, **kw)


def _loop_run(problem, config, T, rng):
    """Algorithm 1 written per agent with Python loops (the obvious way); same noise draws as the reference."""
    K, P, rho = problem.K, problem.P, config.rho
    etas = config.step.etas(T)
    sigma = np.sqrt(config.privacy.variances(problem, rho, etas))
    dense = problem.adjacency.toarray()
    nbrs = [np.flatnonzero(dense[k]) for k in range(K)]
    w_t, gam = np.zeros((K, P)), np.zeros((K, P))
    for n in range(1, T + 1):
        noisy = config.privacy.kind != "none"
        xi = sigma[n - 1][:, None] * rng.normal(size=(1, K, P))[0] if noisy else np.zeros((K, P))
        w = np.zeros((K, P))
        for k in range(K):
            g = problem.subgradients(w_t[k][None].repeat(K, 0))[k]
            s = sum(w_t[k] + w_t[j] for j in nbrs[k])
            w[k] = (w_t[k] / etas[n - 1] + rho * s - gam[k] - g) / (1 / etas[n - 1] + 2 * rho * len(nbrs[k]))
        new = w + xi
        for k in range(K):
            gam[k] = gam[k] + rho * sum(new[k] - new[j] for j in nbrs[k])
        w_t = new
    return w, w_t, gam


@pytest.mark.parametrize("objective", ["ridge", "lad", "elastic_net"])
def test_vectorised_run_equals_per_agent_loop(objective):
    """The vectorised rounds are Algorithm 1: same iterates as a per-agent loop with the same noise draws."""
    problem = _problem(objective, K=7, P=2, M=5)
    config = NFLConfig(rho=0.7, step=StepSchedule(kind="inv_sqrt", eta0=0.3),
                       privacy=PrivacySchedule(kind="S2", phi1=0.05, tau=0.95))
    run = run_zcdp_nfl(problem, config, 25, np.random.default_rng(4))
    w, w_t, gam = _loop_run(problem, config, 25, np.random.default_rng(4))
    for got, want in ((run.w[0], w), (run.w_tilde[0], w_t), (run.gamma[0], gam)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("objective", "step", "T", "target"),
                         [("ridge", StepSchedule(kind="constant", eta0=0.5), 1000, 1e-24),
                          ("elastic_net", StepSchedule(kind="constant", eta0=0.5), 1000, 1e-24),
                          ("lad", StepSchedule(kind="inv_sqrt", eta0=0.5), 3000, 1e-6)])
def test_noise_free_runs_reach_the_cvxpy_optimum(objective, step, T, target):
    """Without noise the iterates reach the certified centralised optimum (docs/papers/zcdp_nfl.md#review-notes: elastic
    net with no zero coordinate, ridge; LAD with a decaying step)."""
    problem = _problem(objective)
    truth = centralized_optimum(problem)
    assert truth.residual < 1e-9
    run = run_zcdp_nfl(problem, NFLConfig(rho=1.0, step=step), T, np.random.default_rng(0), w_c=truth.w_c)
    assert np.isclose(run.ne[0, 0], problem.K, rtol=1e-14) and run.ne[0, -1] < target and not run.diverged


def test_ground_truth_certificates():
    """Ridge: CVXPY = closed form; elastic net: KKT residual; LAD: solver value = F(w_c); F(w_c) <= F(perturbed)."""
    rng = np.random.default_rng(0)
    for objective in ("ridge", "elastic_net", "lad"):
        problem = _problem(objective, seed=3)
        truth = centralized_optimum(problem)
        assert truth.residual < 1e-8 and truth.solver_status == "optimal"
        perturbed = truth.w_c + 1e-3 * rng.normal(size=(50, problem.P))
        assert np.all(problem.centralized_objective(perturbed) >= truth.F_star - 1e-12)


def test_step_schedules():
    n = np.arange(1, 6)
    for kind, expected in (("constant", 0.2 + 0 * n), ("inv_sqrt", 0.2 / np.sqrt(n)), ("inv", 0.2 / n),
                           ("inv_square", 0.2 / n**2), ("growing", 0.2 * n**2)):
        np.testing.assert_allclose(StepSchedule(kind=kind, eta0=0.2).etas(5), expected, rtol=1e-15)


def test_s2_budgets_follow_the_corollary_and_s1_variances_decay():
    """S2: phi_k^(n) = phi1 tau^-(n-1) for every agent; with constant eta the total is the Corollary's closed form.
    S1: sigma^2(n) = sigma^2(0) tau^n. sigma^2 = Delta^2/(2 phi) with Lemma I's Delta (Theorem I)."""
    problem = _problem("lad", K=6, P=2, M=9)
    etas = StepSchedule(kind="constant", eta0=0.1).etas(40)
    s2 = PrivacySchedule(kind="S2", phi1=1e-3, tau=0.97)
    np.testing.assert_allclose(s2.budgets(problem, 1.0, etas),
                               np.broadcast_to(1e-3 * 0.97 ** -np.arange(40.0)[:, None], (40, problem.K)), rtol=1e-13)
    d0 = sensitivity_zcdp_nfl(1.0, problem.M, 1.0, int(problem.degree[0]), 0.1)
    assert np.isclose(s2.variances(problem, 1.0, etas)[0, 0], d0**2 / 2e-3, rtol=1e-14)
    config = NFLConfig(rho=1.0, step=StepSchedule(kind="constant", eta0=0.1), privacy=s2)
    run = run_zcdp_nfl(problem, config, 40, np.random.default_rng(0))
    assert np.isclose(run.total_zcdp, corollary_total(1e-3, 0.97, 40), rtol=1e-12) and run.privacy_certified
    s1 = PrivacySchedule(kind="S1", sigma2_0=0.5, tau=0.9)
    np.testing.assert_allclose(s1.variances(problem, 1.0, etas)[:, 2], 0.5 * 0.9 ** np.arange(1.0, 41.0), rtol=1e-14)


def test_noise_has_the_calibrated_variance():
    """The injected noise xi = w~ - w has per-coordinate variance sigma_k^2(n) (chi-square at 1e-6)."""
    from scipy import stats

    problem = _problem("lad", K=5, P=4, M=6)
    config = NFLConfig(rho=1.0, step=StepSchedule(kind="constant", eta0=0.2), privacy=PrivacySchedule(phi1=0.01))
    run = run_zcdp_nfl(problem, config, 3, np.random.default_rng(1), runs=2000, keep_trajectory=True)
    z = run.trajectory["xi"][:, 1:] / np.sqrt(run.variances)[None, :, :, None]
    statistic = float(np.sum(z**2))
    lo, hi = stats.chi2.ppf([1e-6, 1 - 1e-6], z.size)
    assert lo < statistic < hi


def test_clipping_bounds_the_per_sample_gradients():
    problem = _problem("ridge", clip=0.3)
    g = problem.per_sample_subgradients(5.0 * np.random.default_rng(0).normal(size=(problem.K, problem.P)))
    assert np.max(np.linalg.norm(g, axis=-1)) <= 0.3 * (1 + 1e-15) and problem.gradient_bound == 0.3
    assert _problem("lad").gradient_bound <= 1.0 + 1e-15 and _problem("ridge").gradient_bound is None


@pytest.mark.parametrize("objective", ["ridge", "elastic_net"])
@pytest.mark.parametrize("clip", [0.3, 1.0, 50.0])
def test_clipped_subgradients_match_the_per_sample_mean(objective, clip):
    """The clipped mean gradient by one weighted sum of the rows per client is the mean of the clipped per-sample
    gradients (the old path) to 8 ulps of the per-sample terms' magnitude, with a leading runs axis too, whether every
    sample, some or none are clipped."""
    problem = _problem(objective, clip=clip, K=9, P=4, M=12)
    w = 4.0 * np.random.default_rng(7).normal(size=(3, problem.K, problem.P))
    per_sample = problem.per_sample_subgradients(w)
    old = per_sample.mean(axis=-2) + problem.regularizer_subgradient(w)
    scale = np.abs(per_sample).mean(axis=-2) + np.abs(problem.regularizer_subgradient(w))
    got = problem.subgradients(w)
    assert got.shape == old.shape == (3, problem.K, problem.P)
    assert np.all(np.abs(got - old) <= 8 * np.finfo(float).eps * scale)
    np.testing.assert_array_equal(problem.subgradients(w[1]), got[1])


def test_run_arm_is_one_replicate_error_curve():
    problem = _problem("lad")
    truth = centralized_optimum(problem)
    config = NFLConfig(privacy=PrivacySchedule(phi1=1e-2))
    a, b = run_arm(problem, config, 30, 7, truth.w_c), run_arm(problem, config, 30, 7, truth.w_c)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (31,) and np.isclose(a[0], problem.K, rtol=1e-14)
    run = run_zcdp_nfl(problem, config, 30, np.random.default_rng(7), w_c=truth.w_c)
    np.testing.assert_array_equal(run.ne[0], a)
    np.testing.assert_allclose(normalized_error(problem, run.w, truth.w_c), a[-1:], rtol=1e-15)


def test_normalized_error_of_a_diverged_iterate_is_inf_without_a_warning():
    """A run stops at the round its iterate crosses the divergence threshold (1e150): the NE of that round is
    beyond the largest float, so inf is its value, and the square's overflow warns nothing (it used to print a
    RuntimeWarning in every diverging run)."""
    import warnings

    problem = _problem("ridge")
    w_c = np.ones(problem.P)
    huge = np.full((2, problem.K, problem.P), 1e200)
    huge[1] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ne = normalized_error(problem, huge, w_c)
    assert ne[0] == np.inf and ne[1] == 0.0


def test_divergence_is_reported():
    problem = _problem("ridge", lam=30.0)
    run = run_zcdp_nfl(problem, NFLConfig(rho=1.0, step=StepSchedule(kind="constant", eta0=0.5)), 5000,
                       np.random.default_rng(0))
    assert run.diverged


@pytest.mark.parametrize(("factory", "message"), [
    (lambda: StepSchedule(kind="cosine"), "kind must be one of"),
    (lambda: StepSchedule(eta0=0.0), "eta0 must be"),
    (lambda: PrivacySchedule(tau=1.5), "tau must be"),
    (lambda: PrivacySchedule(kind="S1"), "sigma2_0 must be"),
    (lambda: PrivacySchedule(delta=1.0), "delta must be"),
    (lambda: NFLConfig(rho=-1.0), "rho must be"),
    (lambda: _problem("logistic"), "objective must be"),
    (lambda: _problem("lad", clip=1.0), "clip must be None"),
    (lambda: NFLProblem(adjacency=np.array([[0, 0], [0, 0]]), X=np.zeros((2, 1, 1)), y=np.zeros((2, 1)),
                        objective="ridge"), "connected"),
    (lambda: NFLProblem(adjacency=np.array([[0, 1], [1, 0]]), X=np.zeros((2, 1, 1)), y=np.zeros((3, 1)),
                        objective="ridge"), "y must have shape"),
    (lambda: synthetic_problem(np.random.default_rng(0), K=1), "K must be"),
    (lambda: run_zcdp_nfl(_problem(), NFLConfig(), 0, np.random.default_rng(0)), "iterations must be"),
    (lambda: run_arm(_problem(), NFLConfig(), 3, -1, np.ones(3)), "seed must be"),
])
def test_bad_algorithm_input_names_the_field(factory, message):
    with pytest.raises(ValueError, match=message):
        factory()


def test_problem_arrays_are_read_only():
    problem = _problem()
    with pytest.raises(ValueError):
        problem.X[0, 0, 0] = 1.0


def test_lad_optimum_is_an_exact_vertex_certified_by_its_multipliers():
    """LAD: w_c interpolates P samples exactly and the basic multipliers lie in [-1, 1] (certificate residual 0);
    the solver's value agrees with F(w_c)."""
    problem = _problem("lad", seed=4)
    truth = centralized_optimum(problem)
    r = problem.X.reshape(-1, problem.P) @ truth.w_c - problem.y.reshape(-1)
    assert np.sum(np.abs(r) < 1e-12) >= problem.P and truth.residual == 0.0
    shifted = truth.w_c + 1e-4 * np.eye(problem.P)
    assert np.all(problem.centralized_objective(shifted) > truth.F_star)
