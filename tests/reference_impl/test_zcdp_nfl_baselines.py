"""The baselines of zCDP-NFL's experiments (docs/papers/zcdp_nfl.md#choice-baselines): budgets,
calibration, vectorisation, accounting."""

import dataclasses

import numpy as np
import pytest
from scipy import stats

from reference_impl.zcdp_nfl import (
    EpsDeltaBudget,
    NFLConfig,
    PrivacySchedule,
    StepSchedule,
    accounted_privacy,
    centralized_optimum,
    matched_gradient_step,
    metropolis_weights,
    noise_free_grad_curves,
    p_admm_config,
    run_eps_delta_dp_nfl,
    run_p_admm,
    run_zcdp_grad_nfl,
    run_zcdp_nfl,
    shared_noise_ne_curves,
    synthetic_problem,
)
from reference_impl.zcdp_nfl.baselines import advanced_composition_epsilon
from verify.tolerance import gamma
from verify.zcdp_nfl.corollary_total import corollary_total

#: Small instance of docs/papers/zcdp_nfl.md (K = 7 agents keeps the per-agent reference loops fast).
SIZES = {"K": 7, "P": 3, "M": 9}


def _problem(objective="lad", seed=1, **kw):
    return synthetic_problem(np.random.default_rng(seed), objective=objective, **(SIZES | kw))


@pytest.mark.parametrize("split", ["dynamic", "constant"])
def test_eps_delta_budget_composes_to_the_total(split):
    """Basic composition: the per-round (eps_n, delta_n) sum to (eps, delta); dynamic: eps_{n+1}/eps_n = tau^-1/2."""
    budget = EpsDeltaBudget(epsilon=6.0, delta=1e-5, split=split, tau=0.97)
    eps, delta = budget.per_round(200)  # the paper's horizon T = 200
    assert np.isclose(eps.sum(), 6.0, rtol=gamma(200)) and np.isclose(delta.sum(), 1e-5, rtol=gamma(200))
    ratio = eps[1:] / eps[:-1]
    np.testing.assert_allclose(ratio, 0.97**-0.5 if split == "dynamic" else 1.0, rtol=gamma(8))


@pytest.mark.parametrize("split", ["dynamic", "constant"])
@pytest.mark.parametrize("epsilon", [1.78, 6.07, 23.6])
def test_advanced_composition_budget_composes_to_the_total(split, epsilon):
    """Advanced composition: the per-round eps_n compose to eps (never above it, within 1e-12 relative), the split's
    shape is kept, delta_n sum to delta/2 (the other half is delta'); at T = 200 each eps_n is larger than basic
    composition's, i.e. less noise."""
    budget = EpsDeltaBudget(epsilon=epsilon, delta=1e-5, split=split, tau=0.99, composition="advanced")
    eps, delta = budget.per_round(200)
    total = advanced_composition_epsilon(eps, 0.5e-5)
    assert epsilon * (1 - 1e-11) <= total <= epsilon and np.isclose(delta.sum(), 0.5e-5, rtol=gamma(200))
    basic = EpsDeltaBudget(epsilon=epsilon, delta=1e-5, split=split, tau=0.99).per_round(200)[0]
    np.testing.assert_allclose(eps / basic, eps[0] / basic[0], rtol=gamma(16))  # the same split, scaled
    assert eps[0] > basic[0]


def test_advanced_composition_equals_dwork_roth_theorem_3_20_when_homogeneous():
    """k rounds of eps0 each: sqrt(2 k log(1/delta')) eps0 + k eps0 (e^eps0 - 1) (Dwork & Roth 2014, Thm. 3.20)."""
    k, eps0, dp = 200, 0.03, 1e-6
    want = np.sqrt(2 * k * np.log(1 / dp)) * eps0 + k * eps0 * np.expm1(eps0)
    assert np.isclose(advanced_composition_epsilon(np.full(k, eps0), dp), want, rtol=gamma(k))
    with pytest.raises(ValueError, match="eps_n must be"):
        advanced_composition_epsilon(np.array([0.1, -0.1]), dp)
    with pytest.raises(ValueError, match="delta_prime must be"):
        advanced_composition_epsilon(np.array([0.1]), 0.0)


def test_the_moments_accountant_with_the_dynamic_split_is_zcdp_nfl_itself():
    """Certificate: with the moments accountant (Renyi budgets added, converted by rho + 2 sqrt(rho log(1/delta)),
    Bun and Steinke's conversion) and the dynamic split, (eps,delta)DP-NFL's noise variances at zCDP-NFL's accounted
    epsilon are zCDP-NFL's own S2 variances (to rounding), so the two algorithms coincide; the constant split
    differs."""
    problem = _problem()
    config = NFLConfig(rho=0.8, step=StepSchedule(kind="inv_sqrt", eta0=0.5),
                       privacy=PrivacySchedule(kind="S2", phi1=1e-3, tau=0.99, c1=1.0))
    etas = config.step.etas(200)
    epsilon = accounted_privacy(problem, config, 200)[1]
    zcdp = config.privacy.variances(problem, 0.8, etas)
    same = EpsDeltaBudget(epsilon=epsilon, split="dynamic", composition="moments", tau=0.99).variances(problem, 0.8,
                                                                                                      etas)
    np.testing.assert_allclose(same, zcdp, rtol=gamma(400))
    other = EpsDeltaBudget(epsilon=epsilon, split="constant", composition="moments", tau=0.99).variances(problem, 0.8,
                                                                                                         etas)
    assert np.max(np.abs(other / zcdp - 1)) > 0.1
    rho_n = EpsDeltaBudget(epsilon=epsilon, composition="moments").per_round_rho(200)
    assert np.isclose(rho_n.sum() + 2 * np.sqrt(rho_n.sum() * np.log(1e5)), epsilon, rtol=gamma(400))
    with pytest.raises(ValueError, match="per_round_rho"):
        EpsDeltaBudget(epsilon=epsilon, composition="moments").per_round(200)


def test_eps_delta_variances_are_the_classical_gaussian_calibration():
    """sigma_k(n) = Delta_k(n) sqrt(2 log(1.25/delta_n))/eps_n with Lemma I's Delta_k(n)."""
    problem = _problem()
    etas = StepSchedule(kind="inv_sqrt", eta0=0.5).etas(30)  # 30 rounds: enough for eps_n to vary
    budget = EpsDeltaBudget(epsilon=3.0, tau=0.99)
    eps, delta = budget.per_round(30)
    d = problem.degree[None, :]
    sens = 2.0 * 1.0 / (problem.M * (2.0 * 0.8 * d + 1.0 / etas[:, None]))
    want = (sens * np.sqrt(2 * np.log(1.25 / delta))[:, None] / eps[:, None]) ** 2
    np.testing.assert_allclose(budget.variances(problem, 0.8, etas), want, rtol=gamma(16))


def test_eps_delta_refuses_a_per_round_epsilon_outside_the_gaussian_range():
    with pytest.raises(ValueError, match="outside the classical Gaussian"):
        EpsDeltaBudget(epsilon=50.0, split="constant").variances(_problem(), 1.0, np.ones(10))


@pytest.mark.parametrize(("factory", "message"), [
    (lambda: EpsDeltaBudget(epsilon=0.0), "epsilon must be"),
    (lambda: EpsDeltaBudget(epsilon=1.0, delta=1.0), "delta must be"),
    (lambda: EpsDeltaBudget(epsilon=1.0, split="linear"), "split must be one of"),
    (lambda: EpsDeltaBudget(epsilon=1.0, composition="optimal"), "composition must be one of"),
    (lambda: run_zcdp_grad_nfl(_problem(), -1.0, PrivacySchedule(), 3, np.random.default_rng(0)), "mu must be"),
    (lambda: run_eps_delta_dp_nfl(_problem(), 1.0, StepSchedule(), EpsDeltaBudget(epsilon=1.0), 0,
                                  np.random.default_rng(0)), "iterations must be"),
    (lambda: metropolis_weights(np.array([[0, 1], [0, 0]])), "adjacency must be"),
])
def test_bad_baseline_input_names_the_field(factory, message):
    with pytest.raises(ValueError, match=message):
        factory()


def test_eps_delta_noise_has_the_calibrated_variance():
    """xi = w~ - w after one round has per-coordinate variance sigma_k^2(1) (chi-square at 1e-6)."""
    problem = _problem(P=4)
    budget = EpsDeltaBudget(epsilon=0.5, tau=0.99)  # one round: eps_1 = eps must stay below 1
    # 3000 runs x K x P draws: the chi-square interval at 1e-6 is then a few percent wide
    run = run_eps_delta_dp_nfl(problem, 1.0, StepSchedule(eta0=0.2), budget, 1, np.random.default_rng(3), runs=3000)
    z = (run.w_tilde - run.w) / np.sqrt(run.variances[0])[None, :, None]
    lo, hi = stats.chi2.ppf([1e-6, 1 - 1e-6], z.size)
    assert lo < float(np.sum(z**2)) < hi
    assert run.epsilon == 0.5 and run.delta == budget.delta and run.total_zcdp is None


def test_metropolis_weights_are_a_consensus_matrix():
    """Symmetric, doubly stochastic, non-negative, supported on the graph; W - 11^T/K contracts on a connected graph."""
    problem = _problem(K=12)  # a larger graph: degrees differ, so the Metropolis weights do
    dense = problem.adjacency.toarray()
    W = metropolis_weights(dense)
    K = problem.K
    assert np.all(W >= 0) and np.array_equal(W, W.T) and not W.flags.writeable
    np.testing.assert_allclose(W.sum(axis=1), 1.0, rtol=0, atol=gamma(K))
    assert np.all((W > 0) <= (dense + np.eye(K) > 0))
    assert np.max(np.abs(np.linalg.eigvalsh(W - np.ones((K, K)) / K))) < 1.0
    sparse = metropolis_weights(problem.adjacency)  # the problem's sparse adjacency: the same weights, stored sparse
    assert sparse.nnz == K + 2 * problem.n_edges
    np.testing.assert_allclose(sparse.toarray(), W, rtol=0, atol=gamma(K))


def _grad_loop(problem, mu, sigma, T, rng):
    """zCDP-grad-NFL written per agent with Python loops; same noise draws as the reference."""
    K = problem.K
    d = problem.degree
    dense = problem.adjacency.toarray()
    nbrs = [np.flatnonzero(dense[k]) for k in range(K)]
    w_t = np.zeros((K, problem.P))
    for n in range(T):
        xi = sigma[n][:, None] * rng.normal(size=(1, K, problem.P))[0]
        w = np.zeros_like(w_t)
        for k in range(K):
            a = {int(j): 1.0 / (1 + max(d[k], d[j])) for j in nbrs[k]}
            w[k] = (1 - sum(a.values())) * w_t[k] + sum(v * w_t[j] for j, v in a.items())
            w[k] -= mu * problem.subgradients(np.repeat(w_t[k][None], K, 0))[k]
        w_t = w + xi
    return w, w_t


@pytest.mark.parametrize("objective", ["lad", "elastic_net"])
def test_grad_baseline_equals_a_per_agent_loop(objective):
    problem = _problem(objective)
    privacy = PrivacySchedule(kind="S2", phi1=0.05, tau=0.95)
    run = run_zcdp_grad_nfl(problem, 0.3, privacy, 20, np.random.default_rng(5))  # 20 rounds: noise and mixing act
    w, w_t = _grad_loop(problem, 0.3, np.sqrt(run.variances), 20, np.random.default_rng(5))
    np.testing.assert_allclose(run.w[0], w, rtol=1e-12, atol=1e-12)  # 20 rounds of O(1) arithmetic
    np.testing.assert_allclose(run.w_tilde[0], w_t, rtol=1e-12, atol=1e-12)


def test_grad_baseline_sensitivity_is_attained_by_the_lad_reflection():
    """One step with D and D' (last sample's label reflected through the residual): ||Delta w_k|| = 2 c1 mu / M
    exactly when ||x_M|| = c1 = 1 (the bound of the reconstruction is tight)."""
    problem = _problem()
    X = problem.X.copy()
    X[:, -1] /= np.linalg.norm(X[:, -1], axis=-1, keepdims=True)
    w_t = np.random.default_rng(2).normal(size=(problem.K, problem.P))
    y = problem.y.copy()
    y2 = y.copy()
    y2[:, -1] = 2 * np.einsum("kp,kp->k", X[:, -1], w_t) - y[:, -1]
    mu = 0.4
    steps = []
    for labels in (y, y2):
        p = type(problem)(adjacency=problem.adjacency, X=X, y=labels, objective="lad")
        steps.append(metropolis_weights(p.adjacency) @ w_t - mu * p.subgradients(w_t))
    np.testing.assert_allclose(np.linalg.norm(steps[0] - steps[1], axis=-1), 2 * mu / problem.M,
                               rtol=gamma(4 * SIZES["M"]))


def test_grad_baseline_is_accounted_like_zcdp_nfl():
    """S2 with the same phi1, tau: the same per-round budgets, hence the Corollary's total and the same epsilon."""
    problem = _problem()
    privacy = PrivacySchedule(kind="S2", phi1=1e-3, tau=0.97)
    run = run_zcdp_grad_nfl(problem, 0.3, privacy, 40, np.random.default_rng(0))  # T = 40: tau^-T matters
    total, epsilon = accounted_privacy(problem, NFLConfig(step=StepSchedule(kind="inv_sqrt"), privacy=privacy), 40)
    assert np.isclose(run.total_zcdp, corollary_total(1e-3, 0.97, 40), rtol=gamma(40))
    assert np.isclose(run.total_zcdp, total, rtol=gamma(40)) and np.isclose(run.epsilon, epsilon, rtol=gamma(40))


def test_p_admm_is_zcdp_nfl_with_a_constant_step():
    problem = _problem()
    config = NFLConfig(step=StepSchedule(kind="inv_sqrt", eta0=0.4), privacy=PrivacySchedule(phi1=1e-2))
    assert p_admm_config(config).step == StepSchedule(kind="constant", eta0=0.4)
    a = run_p_admm(problem, config, 15, np.random.default_rng(1))
    b = run_zcdp_nfl(problem, p_admm_config(config), 15, np.random.default_rng(1))
    np.testing.assert_array_equal(a.w, b.w)
    assert a.etas[0] == run_zcdp_nfl(problem, config, 1, np.random.default_rng(1)).etas[0]


@pytest.mark.parametrize("objective", ["ridge", "lad", "elastic_net"])
def test_noise_free_grad_curves_are_the_single_step_runs(objective):
    """All steps at once give each step's own noise-free run bit for bit, including steps whose run diverges (NaN
    after the round it diverged in, as the single run stops there) and steps that only grow."""
    problem = _problem(objective, clip=None if objective == "lad" else 1.0)
    w_c = centralized_optimum(problem).w_c
    steps = (0.01, 0.3, 1.0, 3.0, 1e80, 1e200)  # the last two diverge (the threshold 1e150, and overflow)
    curves = noise_free_grad_curves(problem, steps, 6, w_c)
    single = np.array([run_zcdp_grad_nfl(problem, mu, PrivacySchedule(kind="none"), 6, np.random.default_rng(0),
                                         w_c=w_c).ne[0] for mu in steps])
    np.testing.assert_array_equal(curves, single)
    assert np.isnan(curves[-2:]).any() and not np.isnan(curves[:2]).any()
    with pytest.raises(ValueError, match="mu"):
        noise_free_grad_curves(problem, (0.1, 0.0), 3, w_c)
    with pytest.raises(ValueError, match="w_c"):
        noise_free_grad_curves(problem, (0.1,), 3, w_c[:-1])


@pytest.mark.parametrize("objective", ["ridge", "lad", "elastic_net"])
@pytest.mark.parametrize("constant_step", [False, True])
def test_shared_noise_ne_curves_are_the_single_budget_runs(objective, constant_step):
    """Several budgets on one noise stream give each budget's own zCDP-NFL (or P-ADMM-like) run bit for bit; a
    budget so small that its noise diverges is NaN after the round it diverged in, as the single run stops there."""
    problem = _problem(objective, clip=None if objective == "lad" else 1.0)
    w_c = centralized_optimum(problem).w_c
    base = NFLConfig(rho=0.7, step=StepSchedule(kind="inv_sqrt", eta0=0.5))
    configs = [dataclasses.replace(base, privacy=PrivacySchedule(kind="S2", phi1=phi1, tau=0.97))
               for phi1 in (1e-3, 1e-1, 10.0, 1e-307)]  # the last: sigma above the divergence threshold
    if constant_step:
        configs = [p_admm_config(c) for c in configs]
    out = shared_noise_ne_curves(problem, configs, 12, np.random.default_rng(3), w_c)
    single = [run_zcdp_nfl(problem, c, 12, np.random.default_rng(3), w_c=w_c) for c in configs]
    ne, diverged = out
    assert ne.shape == (4, 13)
    np.testing.assert_array_equal(ne, np.array([run.ne[0] for run in single]))
    assert list(diverged) == [run.diverged for run in single] == [False, False, False, True]


def test_shared_noise_ne_curves_reject_configs_that_differ_beyond_the_budget():
    problem = _problem("ridge", clip=1.0)
    w_c = centralized_optimum(problem).w_c
    noisy = NFLConfig(rho=0.7, step=StepSchedule(kind="inv_sqrt", eta0=0.5),
                      privacy=PrivacySchedule(kind="S2", phi1=0.1, tau=0.97))
    for other, match in ((dataclasses.replace(noisy, rho=1.0), "rho and step"),
                         (p_admm_config(noisy), "rho and step"),
                         (dataclasses.replace(noisy, privacy=PrivacySchedule(kind="none")), "noisy")):
        with pytest.raises(ValueError, match=match):
            shared_noise_ne_curves(problem, [noisy, other], 3, np.random.default_rng(0), w_c)
    with pytest.raises(ValueError, match="configs"):
        shared_noise_ne_curves(problem, [], 3, np.random.default_rng(0), w_c)


def test_matched_gradient_step_is_the_closest_initial_speed():
    """The returned step's noise-free NE(at) is the closest (in log) to zCDP-NFL's among the grid."""
    problem = _problem("ridge", clip=1.0)
    w_c = centralized_optimum(problem).w_c
    config = NFLConfig(step=StepSchedule(kind="inv_sqrt", eta0=0.5))
    grid = (0.01, 0.1, 1.0)  # three decades: a coarse grid keeps the test fast
    mu = matched_gradient_step(problem, config, w_c, at=5, grid=grid)  # 5 rounds: an early read-out, fast
    target = run_zcdp_nfl(problem, config, 5, np.random.default_rng(0), w_c=w_c).ne[0, -1]
    gaps = [abs(np.log(run_zcdp_grad_nfl(problem, m, PrivacySchedule(kind="none"), 5, np.random.default_rng(0),
                                         w_c=w_c).ne[0, -1] / target)) for m in grid]
    assert mu == grid[int(np.argmin(gaps))]
