"""Reference PGFL: the implementation invariants of docs/papers/pgfl.md#structure, fixed points, scheduling and
noise."""

import numpy as np
import pytest
from scipy import stats

from reference_impl.pgfl import (
    PGFLConfig,
    PGFLProblem,
    client_solver,
    cluster_optima,
    eta_cluster_distance,
    fixed_point_tau0,
    initial_state,
    iterate_pgfl_arms,
    iteration_spectral_radius,
    nmsd_observer,
    run_pgfl,
    run_pgfl_arms,
    step,
    synthetic_regression,
)
from theory.pgfl.optima import CLUSTER_OPTIMUM_GTOL
from verify.tolerance import CHI2_ALPHA, EPS, FIXED_POINT_RTOL, TARGET_RTOL


@pytest.fixture(scope="module")
def problem():
    # every (server, cluster) group non-empty for this seed (checked in test_fixed_point...)
    return synthetic_regression(np.random.default_rng(5), servers=5, clients_per_server=5, d=3, clusters=2,
                                average_degree=2)


def _random_state(problem, rng, runs=2):
    s = initial_state(problem, runs)
    return type(s)(**{**s.__dict__, "phi": rng.standard_normal(s.phi.shape),
                      "w_servers": rng.standard_normal(s.w_servers.shape)})


def test_w_hat_identity_cancels_the_duals(problem):
    """docs/papers/pgfl.md#structure: w_hat = A [w_server^(n-1) - (1/rho) mean_k grad f_k(w_k^(n))], exact without
    noise."""
    rng = np.random.default_rng(0)
    cfg = PGFLConfig(rho=3.0, taus=(0.3,))
    state = _random_state(problem, rng)
    nxt = step(problem, cfg, client_solver(problem, cfg.rho), state, 1, 0.0, np.ones((2, problem.K), bool))
    grads = (np.einsum("kij,rkj->rki", problem.hessians, nxt.w_clients) - problem.linear_terms
             + problem.ridge_weights[None, :, None] * nxt.w_clients)
    counts = problem.groups.sum(axis=1)
    mean_grad = (np.einsum("gk,rkd->rgd", problem.groups, grads) / counts[:, None]).reshape(2, problem.S, 2, -1)
    A = problem.closed_neighbourhoods / problem.closed_neighbourhoods.sum(axis=1, keepdims=True)
    expected = np.einsum("sp,rpqd->rsqd", A, state.w_servers - mean_grad / cfg.rho)
    # two evaluation orders of the same sums over <= 25 clients and 2 clusters: 1e3 ulps covers their rounding
    assert np.max(np.abs(nxt.w_hat - expected)) <= 1e3 * EPS * max(1.0, np.max(np.abs(expected)))


def test_literal_algorithm2_duals_sum_to_zero_per_group(problem):
    cfg = PGFLConfig(rho=2.0, algorithm="alg2", phi0=0.5, C=0.1)
    phi = run_pgfl(problem, cfg, 5, np.random.default_rng(1), runs=3).state.phi
    sums = np.einsum("gk,rkd->rgd", problem.groups, phi)
    # exactly 0 in exact arithmetic; rounding ~1e-15
    assert np.max(np.abs(sums)) <= 1e-12 * max(1.0, np.max(np.abs(phi)))


def test_tau_zero_means_no_mixing_and_noise_free_alg2_server_model_is_alg1_bit_for_bit(problem):
    rng_state = np.random.default_rng(2)
    a = run_pgfl(problem, PGFLConfig(rho=2.0), 7, np.random.default_rng(rng_state.integers(1 << 30)))
    assert np.array_equal(a.state.w_servers, a.state.w_hat)
    b = run_pgfl(problem, PGFLConfig(rho=2.0, algorithm="alg2", dual_ref="server_model"), 7, np.random.default_rng(3))
    c = run_pgfl(problem, PGFLConfig(rho=2.0), 7, np.random.default_rng(4))
    assert np.array_equal(b.state.w_servers, c.state.w_servers) and np.array_equal(b.state.phi, c.state.phi)


def test_single_server_is_standard_admm_and_reaches_the_cluster_optimum():
    p = synthetic_regression(np.random.default_rng(0), servers=1, clients_per_server=8, d=4, clusters=2)
    run = run_pgfl(p, PGFLConfig(rho=0.25 * p.max_curvature), 3000, np.random.default_rng(0))
    target = cluster_optima(p)
    assert np.max(np.abs(run.state.w_servers[0, 0] - target)) <= TARGET_RTOL * np.max(np.abs(target))


@pytest.mark.parametrize("kwargs", [{}, {"algorithm": "alg2"}, {"algorithm": "alg2", "dual_ref": "server_model"}])
def test_iterates_reach_the_solved_fixed_point(problem, kwargs):
    cfg = PGFLConfig(rho=0.25 * problem.max_curvature, **kwargs)
    fp, residual = fixed_point_tau0(problem, cfg)
    assert residual <= 1e3 * EPS  # 15 x 15 dense solves: backward stable, a few hundred ulps
    assert iteration_spectral_radius(problem, cfg) < 1.0
    run = run_pgfl(problem, cfg, 4000, np.random.default_rng(0))
    # 4000 iterations at r(T) < 1 contract the start far below rounding; 1e-10 relative is rounding plus margin
    assert np.max(np.abs(run.state.w_servers[0] - fp)) <= 1e-10 * np.max(np.abs(fp))


def test_scheduling_selects_exactly_m_clients_per_server_and_is_shared_across_tau(problem):
    a = run_pgfl(problem, PGFLConfig(rho=2.0, scheduled=2), 6, np.random.default_rng(9), runs=4)
    per_server = np.stack([a.releases[..., problem.client_server == s].sum(axis=-1) for s in range(problem.S)])
    assert np.all(per_server == 2)
    b = run_pgfl(problem, PGFLConfig(rho=2.0, scheduled=2, taus=(0.7,)), 6, np.random.default_rng(9), runs=4)
    assert np.array_equal(a.releases, b.releases)  # common random numbers


def test_injected_noise_has_the_calibrated_variance(problem):
    """Chi-square test (two-sided, alpha = 1e-6) of the noise of the last release of every client."""
    cfg = PGFLConfig(rho=2.0, algorithm="alg2", phi0=0.01, zeta=0.9, C=0.5)
    n_iter, runs = 4, 200
    run = run_pgfl(problem, cfg, n_iter, np.random.default_rng(11), runs=runs)
    noise = run.state.msg_w - run.state.w_clients                       # (R, K, d)
    variance = cfg.noise_variance(problem.samples, n_iter)              # convention I: zeta^n delta2(0)
    statistic = np.sum(noise**2 / variance[None, :, None])
    dof = noise.size
    lo, hi = stats.chi2.ppf([CHI2_ALPHA / 2, 1 - CHI2_ALPHA / 2], dof)
    assert lo <= statistic <= hi


def test_eta_and_nmsd():
    assert eta_cluster_distance(np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])) == 25.0  # |(3, 4)|^2, exact
    p = synthetic_regression(np.random.default_rng(1), servers=2, clients_per_server=3, d=2, clusters=2)
    obs = run_pgfl(p, PGFLConfig(rho=1.0), 3, np.random.default_rng(0), runs=2, observe=nmsd_observer(p)).observations
    assert obs.shape == (3, 2) and np.all(obs >= 0)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"rho": 0.0}, "rho must be a finite real in"),
    ({"rho": 1.0, "taus": (1.5,)}, r"taus must be a non-empty sequence in \[0, 1\]"),
    ({"rho": 1.0, "algorithm": "alg3"}, "algorithm must be"),
    ({"rho": 1.0, "phi0": 0.1}, "requires algorithm='alg2'"),
    ({"rho": 1.0, "algorithm": "alg2", "phi0": -1.0}, "phi0 must be"),
    ({"rho": 1.0, "zeta": 0.0}, r"zeta must be in \(0, 1\]"),
    ({"rho": 1.0, "scheduled": 0}, "scheduled must be an integer >= 1"),
    ({"rho": 1.0, "aggregation": "stale"}, "aggregation must be"),
])
def test_config_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PGFLConfig(**kwargs)


def test_problem_validation():
    base = dict(adjacency=np.zeros((1, 1), bool), client_server=np.array([0]), client_cluster=np.array([0]),
                n_clusters=1, X=(np.ones((2, 2)),), y=(np.ones(2),), lam=1.0)
    PGFLProblem(**base)
    with pytest.raises(ValueError, match="adjacency must be symmetric"):
        PGFLProblem(**{**base, "adjacency": np.ones((1, 1), bool)})
    with pytest.raises(ValueError, match=r"client_cluster entries must be integers in \[0, 0\]"):
        PGFLProblem(**{**base, "client_cluster": np.array([1])})
    with pytest.raises(ValueError, match="lam must be a finite real"):
        PGFLProblem(**{**base, "lam": -1.0})
    with pytest.raises(ValueError, match=r"X\[0\] must be"):
        PGFLProblem(**{**base, "y": (np.ones(3),)})


@pytest.mark.parametrize("tau", [0.0, 0.3, 0.8])
def test_general_fixed_point_is_the_limit_of_the_iterates(tau):
    from reference_impl.pgfl import fixed_point

    p = synthetic_regression(np.random.default_rng(2), servers=2, clients_per_server=4, d=2, clusters=3)
    cfg = PGFLConfig(rho=0.5 * p.max_curvature, taus=(tau,))
    fp, residual, radius = fixed_point(p, cfg)
    assert residual <= 1e3 * EPS and radius < 1.0  # dense 28 x 28 solve: a few hundred ulps
    run = run_pgfl(p, cfg, 3000, np.random.default_rng(0))
    assert np.max(np.abs(run.state.w_servers[0] - fp)) <= FIXED_POINT_RTOL * np.max(np.abs(fp))


def _logistic_problem(seed=0, servers=1, clients=6, d=3, clusters=2, lam=0.1):
    rng = np.random.default_rng(seed)
    K = servers * clients
    X, y = [], []
    truth = rng.standard_normal((clusters, d))
    cl = np.arange(K) % clusters
    for k in range(K):
        D = int(rng.integers(2, 8))
        xk = rng.standard_normal((D, d))
        xk /= np.maximum(1.0, np.linalg.norm(xk, axis=1, keepdims=True))
        X.append(xk)
        y.append((rng.random(D) < 1 / (1 + np.exp(-xk @ truth[cl[k]]))).astype(float))
    adjacency = np.ones((servers, servers), bool) & ~np.eye(servers, dtype=bool)
    return PGFLProblem(adjacency=adjacency, client_server=np.repeat(np.arange(servers), clients), client_cluster=cl,
                       n_clusters=clusters, X=tuple(X), y=tuple(y), lam=lam, loss="logistic")


def test_logistic_client_step_meets_its_optimality_condition():
    from reference_impl.pgfl import LOGISTIC_GRADIENT_TOL

    p = _logistic_problem(servers=2, clients=4)
    rng = np.random.default_rng(1)
    anchor, phi = rng.standard_normal((3, p.K, p.d)) * 3, rng.standard_normal((3, p.K, p.d))
    w = client_solver(p, 0.7)(anchor, phi, np.zeros_like(anchor))
    for r in range(3):
        for k in range(p.K):
            grad = (p.X[k].T @ (1 / (1 + np.exp(-p.X[k] @ w[r, k])) - p.y[k]) / p.samples[k]
                    + p.ridge_weights[k] * w[r, k] - phi[r, k] + 0.7 * (w[r, k] - anchor[r, k]))
            assert np.linalg.norm(grad) <= 10 * LOGISTIC_GRADIENT_TOL  # certified tol; x10 for this re-evaluation


def test_logistic_client_step_solves_only_the_scheduled_clients():
    """With an (R, K) mask the step solves only the active entries (same minimiser, to the Newton tolerance) and
    returns the warm start elsewhere (the iteration discards unscheduled clients' steps)."""
    from reference_impl.pgfl import LOGISTIC_GRADIENT_TOL

    p = _logistic_problem(servers=2, clients=4)
    rng = np.random.default_rng(2)
    anchor, phi = rng.standard_normal((3, p.K, p.d)) * 3, rng.standard_normal((3, p.K, p.d))
    warm = rng.standard_normal((3, p.K, p.d))
    active = rng.random((3, p.K)) < 0.4
    solve = client_solver(p, 0.7)
    full, masked = solve(anchor, phi, warm), solve(anchor, phi, warm, active)
    assert np.array_equal(masked[~active], warm[~active])
    # both meet ||grad|| <= 1e-10 on a (0.7 + 2 lambda/|C_s|)-strongly convex objective: within 2e-10 / 0.7
    assert np.max(np.abs(masked[active] - full[active])) <= 2 * LOGISTIC_GRADIENT_TOL / 0.7
    assert np.array_equal(solve(anchor, phi, warm, np.ones((3, p.K), bool)), full)
    assert np.array_equal(solve(anchor, phi, warm, np.zeros((3, p.K), bool)), warm)


def test_logistic_single_server_reaches_the_cvxpy_cluster_optimum():
    from reference_impl.pgfl import cluster_gradient_norm

    p = _logistic_problem()
    optima = cluster_optima(p)
    # certified: each cluster's mean gradient <= CLUSTER_OPTIMUM_GTOL, so the sum over its 3 clients <= 3x that
    assert max(cluster_gradient_norm(p, q, optima[q]) for q in range(2)) <= 3 * CLUSTER_OPTIMUM_GTOL
    run = run_pgfl(p, PGFLConfig(rho=0.5 * p.max_curvature), 1500, np.random.default_rng(0))
    # after 1500 ADMM iterations: measured gradient 6.7e-11, distance 3.2e-10 (seed 0); bounds with margin >= 15
    assert max(cluster_gradient_norm(p, q, run.state.w_servers[0, 0, q]) for q in range(2)) <= 1e-9
    # distance <= ||grad|| / (strong convexity 3 x 2 lambda/|C_s| = 0.1) = 1e-8 by the line above; 1e-6 is loose
    assert np.max(np.abs(run.state.w_servers[0, 0] - optima)) <= 1e-6


def test_lockstep_arms_are_each_their_own_run_bit_for_bit(problem):
    """run_pgfl_arms: each configuration's curve is run_pgfl's from the same seed, whatever the other arms are
    (tau schedules, privacy noise, scheduling and horizons mixed)."""
    rho = 0.25 * problem.max_curvature
    configs = [PGFLConfig(rho=rho, taus=(0.4,), algorithm="alg2"),
               PGFLConfig(rho=rho, taus=(0.0,), algorithm="alg2", scheduled=2),
               PGFLConfig(rho=rho, taus=PGFLConfig.geometric_tau(0.4, 0.9, 12), algorithm="alg2", scheduled=3,
                          phi0=1e-2, zeta=0.95, C=0.5)]
    horizons = [15, 12, 12]  # unequal horizons: the shorter arms keep their prefix of the lockstep run
    observe = nmsd_observer(problem)
    together = run_pgfl_arms(problem, configs, horizons, np.random.default_rng(9), observe=observe)
    for config, horizon, curve in zip(configs, horizons, together, strict=True):
        alone = run_pgfl(problem, config, horizon, np.random.default_rng(9), observe=observe).observations[:, 0]
        assert np.array_equal(curve, alone)


def test_lockstep_runs_per_arm_are_run_pgfl_bit_for_bit(problem):
    """iterate_pgfl_arms with several runs per configuration: each configuration's block of runs is run_pgfl's with
    as many runs from the same seed (noise and scheduling keys drawn once, shared)."""
    rho = 0.25 * problem.max_curvature
    configs = [PGFLConfig(rho=rho, taus=(tau,), algorithm="alg2", phi0=1e-2, zeta=0.95) for tau in (0.0, 0.4)]
    configs.append(PGFLConfig(rho=rho, taus=(0.2,), algorithm="alg2", scheduled=2))
    runs, horizon = 3, 9  # several runs per arm, a few iterations (the draws repeat every iteration)
    states = [state for _, state in iterate_pgfl_arms(problem, configs, horizon, np.random.default_rng(4), runs=runs)]
    for i, config in enumerate(configs):
        alone = run_pgfl(problem, config, horizon, np.random.default_rng(4), runs=runs).state
        block = slice(i * runs, (i + 1) * runs)
        assert np.array_equal(states[-1].w_servers[block], alone.w_servers)
        assert np.array_equal(states[-1].phi[block], alone.phi)


def test_full_participation_shortcut_matches_the_masked_step(problem):
    """step skips its masks when every client is selected: the client models, messages and cached duals are what
    the masked arithmetic (np.where with an all-true mask) gives, bit for bit."""
    rng = np.random.default_rng(8)
    state = _random_state(problem, rng)
    config = PGFLConfig(rho=0.5 * problem.max_curvature, taus=(0.3,), algorithm="alg2")
    solve = client_solver(problem, config.rho)
    noise = rng.standard_normal(state.phi.shape)
    everyone = np.ones(state.sent.shape, dtype=bool)
    fast = step(problem, config, solve, state, 1, noise, everyone)
    w_new = solve(state.w_servers[:, problem.client_server, problem.client_cluster, :], state.phi, state.w_clients,
                  everyone)
    assert np.array_equal(fast.w_clients, np.where(everyone[..., None], w_new, state.w_clients))
    assert np.array_equal(fast.msg_w, np.where(everyone[..., None], w_new + noise, state.msg_w))
    assert np.array_equal(fast.msg_phi, state.phi)


@pytest.mark.parametrize("kwargs, match", [
    (dict(configs=[]), "configs"),
    (dict(iterations=[5]), "iterations"),
    (dict(iterations=0), "iterations"),
    (dict(configs=[PGFLConfig(rho=1.0), PGFLConfig(rho=2.0)]), "rho"),
    (dict(configs=[PGFLConfig(rho=1.0, server_update="single_step_corrected")]), "server_update"),
])
def test_lockstep_arms_validation_names_the_argument(problem, kwargs, match):
    args = dict(configs=[PGFLConfig(rho=1.0), PGFLConfig(rho=1.0, taus=(0.4,))], iterations=5)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        run_pgfl_arms(problem, args["configs"], args["iterations"], np.random.default_rng(0),
                      observe=nmsd_observer(problem))


def test_pgfl_npz_sizes_stay_within_the_layout():
    """Found by an adversarial audit: a client_server entry of 2^63 made the estimated state 5.5e19 values and the
    message blamed --runs; the sizes now stay within the layout and the loader names client_server."""
    from reference_impl.pgfl.run_report import npz_sizes

    arrays = {"X_0": np.zeros((3, 2)), "X_1": np.zeros((3, 2)), "adjacency": np.ones((2, 2), dtype=bool),
              "client_server": np.array([2**63, 0], dtype=np.uint64), "client_cluster": np.array([0, 10**12])}
    sizes = npz_sizes(arrays)
    assert sizes["S"] == 2 and sizes["Q"] == 2 and sizes["K"] == 2 and sizes["d"] == 2
