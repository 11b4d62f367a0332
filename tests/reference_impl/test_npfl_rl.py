"""Unit tests of the reference_impl.npfl_rl package / npfl_rl_data (NPFL-RL, seed 004 ch. 6 / P7)."""

import networkx as nx
import numpy as np
import pytest

from reference_impl.npfl_rl import (
    NPFLConfig,
    coupled_fixed_point,
    global_ridge,
    per_component_ridge,
    run_arm,
    run_npfl,
    symmetric_fixed_point_cvxpy,
    test_mse,
)
from reference_impl.npfl_rl.data import NPFLProblem, intra_cluster_components, synthetic_problem
from reference_impl.npfl_rl.primal import build_structure, primal_at, value_derivative
from theory.npfl_rl import npfl_primal_closed_form, validation_value_derivative

SMALL = dict(K=10, d=6, D_range=(3, 8), mean_degree=3.0)


@pytest.fixture(scope="module")
def small():
    return synthetic_problem(np.random.default_rng(3), **SMALL)[0]


def _state(problem, config, rng):
    S = build_structure((problem,), config)
    K, d = problem.K, problem.d
    m, s = rng.normal(size=(2, 1, K, d))
    return S, m, s


def test_eigen_primal_step_equals_direct_solve_of_6_11(small):
    rng = np.random.default_rng(0)
    config = NPFLConfig()
    S, m, s = _state(small, config, rng)
    a = rng.uniform(0, 1, size=(1, small.K))
    direct = npfl_primal_closed_form(small.H, small.b, m[0], s[0], S.c[0], S.omega[0], a[0])
    assert np.allclose(primal_at(S, m, s, a)[0], direct, rtol=1e-11, atol=1e-12)


def test_dpg_derivative_matches_theory_and_complex_step(small):
    rng = np.random.default_rng(1)
    config = NPFLConfig()
    S, m, s = _state(small, config, rng)
    a = np.full((1, small.K), 0.3)
    g, _ = value_derivative(S, m, s, a)
    lam_q = small.lam / small.cluster_sizes
    theory = validation_value_derivative(small.H, small.b, m[0], s[0], S.c[0], S.omega[0], a[0], small.Hv, small.bv,
                                         lam_q)
    assert np.allclose(g[0], theory, rtol=1e-9, atol=1e-12)


def test_components_agree_with_networkx(small):
    comp = intra_cluster_components(small.adjacency, small.labels)
    G = nx.from_numpy_array(small.same_cluster_adjacency.astype(int))
    for c in nx.connected_components(G):
        assert len({comp[k] for k in c}) == 1
    assert np.unique(comp).size == nx.number_connected_components(G)


def test_inter_cluster_weights_conventions(small):
    om0, B0 = small.inter_cluster_weights("E0")
    om1, _ = small.inter_cluster_weights("E1")
    counts = small.neighbour_counts()
    other = np.arange(small.Q)[None, :] != small.labels[:, None]
    present = (counts > 0) & other
    assert np.allclose(om0, present / (small.Q - 1))
    assert np.allclose(om1.sum(axis=1), (present.sum(axis=1) > 0).astype(float))
    # rows of B sum to omega_k; B is zero inside a cluster and off the graph
    assert np.allclose(B0.sum(axis=1), om0.sum(axis=1))
    assert np.all(B0[~small.adjacency] == 0) and np.all(B0[small.same_cluster_adjacency] == 0)


def test_tau0_converges_to_per_component_ridge_and_cvxpy_agrees(small):
    gt = per_component_ridge(small)
    normal = per_component_ridge(small, method="normal")
    assert gt.certificate < 1e-8 and np.allclose(gt.w, normal.w, rtol=1e-7, atol=1e-9)
    run = run_npfl(small, NPFLConfig(tau0=0.0), 2000, reference=normal.w)
    assert run.reference_error[0, -1] < 1e-10


def test_printed_dual_sign_diverges(small):
    normal = per_component_ridge(small, method="normal")
    run = run_npfl(small, NPFLConfig(tau0=0.0, dual_sign="printed"), 400, reference=normal.w)
    assert not (run.reference_error[0, -1] < 1e3)


def test_nfl_converges_to_global_ridge(small):
    g = global_ridge(small, method="normal")
    run = run_npfl(small, NPFLConfig(algorithm="nfl"), 2000, reference=g.w)
    assert run.reference_error[0, -1] < 1e-10


def test_fixed_tau_converges_to_stacked_fixed_point(small):
    fp = coupled_fixed_point(small, 0.2)
    assert fp.certificate < 1e-12
    run = run_npfl(small, NPFLConfig(tau0=0.2), 2000, reference=fp.w)
    assert run.reference_error[0, -1] < 1e-10


def test_symmetric_case_cvxpy_equals_stacked_system():
    p, _ = synthetic_problem(np.random.default_rng(4), K=9, d=5, D_range=(3, 8), mean_degree=6.0, symmetric=True)
    tau = np.linspace(0.1, 0.5, p.K)
    a = coupled_fixed_point(p, tau)
    b = symmetric_fixed_point_cvxpy(p, tau)
    assert b.certificate < 1e-6
    assert np.linalg.norm(a.w - b.w) / np.linalg.norm(a.w) < 1e-7


def test_controllers_respect_projection_and_record_trajectories(small):
    for policy, delta in (("dpg", 0.05), ("sac", 0.1)):
        cfg = NPFLConfig(policy=policy, delta=delta, epochs=3, tau_max=0.5)
        run = run_npfl([small, small], cfg, 50, np.random.default_rng(0))
        assert run.tau.shape == (2, 51, small.K)
        assert np.all((run.tau >= 0) & (run.tau <= 0.5))
        assert np.all(run.tau[:, 1] == cfg.tau0) and run.finite.all()


def test_sac_is_reproducible_and_needs_a_generator(small):
    cfg = NPFLConfig(policy="sac", delta=0.1)
    a = run_npfl(small, cfg, 20, np.random.default_rng(5))
    b = run_npfl(small, cfg, 20, np.random.default_rng(5))
    assert np.array_equal(a.tau, b.tau)
    with pytest.raises(ValueError, match="rng"):
        run_npfl(small, cfg, 20)


def test_test_mse_definitions(small):
    W = small.true_models[small.labels]
    assert test_mse(small, W) == 0.0
    z = np.zeros_like(W)
    assert np.isclose(test_mse(small, z, squared=True), 1.0)
    run = run_npfl(small, NPFLConfig(), 3)
    assert np.isclose(run.test_mse[0, 0], test_mse(small, z))


def test_run_arm_returns_curve_and_tau():
    out = run_arm(NPFLConfig(policy="sac", delta=0.1), 5, 7, generator=dict(K=8, d=5, D_range=(3, 6), mean_degree=3.0))
    assert out["test_mse"].shape == (6,) and out["tau"].shape == (6, 8) and out["finite"]
    again = run_arm(NPFLConfig(policy="sac", delta=0.1), 5, 7, generator=dict(K=8, d=5, D_range=(3, 6),
                                                                               mean_degree=3.0))
    assert np.array_equal(out["tau"], again["tau"])


@pytest.mark.parametrize("field,value,match", [
    ("rho", 0.0, "rho"), ("policy", "ppo", "policy"), ("epochs", 0, "epochs"), ("dual_sign", "x", "dual_sign"),
    ("tau0", -0.1, "tau0"), ("convention", "E2", "convention"), ("tau_max", 0.0, "tau_max"),
])
def test_config_rejects_bad_fields(field, value, match):
    with pytest.raises(ValueError, match=match):
        NPFLConfig(**{field: value})


def test_problem_rejects_bad_input(small):
    A = small.adjacency.copy()
    A[0, 0] = True
    kw = dict(labels=small.labels, X=small.X, y=small.y, X_val=small.X_val, y_val=small.y_val, X_test=small.X_test,
              y_test=small.y_test, lam=0.1)
    with pytest.raises(ValueError, match="adjacency"):
        NPFLProblem(adjacency=A, **kw)
    with pytest.raises(ValueError, match="lam"):
        NPFLProblem(adjacency=small.adjacency, **{**kw, "lam": 0.0})
    with pytest.raises(ValueError, match="labels"):
        NPFLProblem(adjacency=small.adjacency, **{**kw, "labels": small.labels + 1})
    assert not small.H.flags.writeable


def test_generator_symmetric_case_and_bad_input():
    p, draws = synthetic_problem(np.random.default_rng(2), K=9, d=4, D_range=(3, 5), mean_degree=6.0, symmetric=True)
    assert np.unique(p.components).size == p.Q
    assert np.allclose(p.true_models, (1 + draws["deltas"])[:, None] * draws["w0"])
    with pytest.raises(ValueError, match="mean_degree"):
        synthetic_problem(np.random.default_rng(0), K=5, mean_degree=7.0)


def test_primal_map_matches_theory_and_steps(small):
    from reference_impl.npfl_rl import npfl_primal_map
    from theory.npfl_rl import validation_value

    rng = np.random.default_rng(9)
    cfg = NPFLConfig()
    w, g = rng.normal(size=(2, small.K, small.d))
    pm = npfl_primal_map(small, cfg, w, g)
    a = rng.uniform(0, 1, small.K)
    P = npfl_primal_closed_form(small.H, small.b, pm.m, pm.s, pm.c, pm.omega, a)
    assert np.allclose(pm.primal(a), P, rtol=1e-11, atol=1e-12)
    lam_q = small.lam / small.cluster_sizes
    assert np.allclose(pm.value(a), validation_value(small.Hv, small.bv, small.cv, lam_q, P), rtol=1e-11)
    assert np.allclose(pm.dpg_step(a, 0.01), -0.01 * pm.derivative(a))
    alpha = rng.uniform(-0.025, 0.025, small.K)
    step = pm.sac_step(a, alpha, 0.1)
    dv = pm.value(a + alpha) - pm.value(a)  # exactly 0 where omega_k = 0 (V_v does not depend on a): no move
    assert np.allclose(step, np.where(dv < 0, 0.1 * alpha, np.where(dv > 0, -0.1 * alpha, 0.0)))


@pytest.mark.parametrize("convention,timing", [("E1", "literal"), ("E0", "online")])
def test_other_conventions_and_timing(small, convention, timing):
    """E1 (docs/papers/npfl_rl.md#choice-empty-cluster) changes omega only: fixed-tau NPFL still reaches its stacked
    fixed point; the online timing runs."""
    fp = coupled_fixed_point(small, 0.3, convention=convention)
    run = run_npfl(small, NPFLConfig(tau0=0.3, convention=convention), 2000, reference=fp.w)
    assert run.reference_error[0, -1] < 1e-10
    rl = run_npfl(small, NPFLConfig(policy="dpg", delta=0.01, timing=timing, convention=convention), 30)
    assert rl.finite.all() and rl.ill_posed.sum() == 0


def test_paper_arms_run():
    from reference_impl.npfl_rl import PAPER_ARMS

    assert {"nfl", "npfl_tau_0", "npfl_tau_0.05", "rl_dpg", "brl_dpg", "rl_sac", "brl_sac"} <= set(PAPER_ARMS)
    gen = dict(K=8, d=5, D_range=(3, 6), mean_degree=3.0)
    curves = {name: run_arm(cfg, 5, 0, generator=gen)["test_mse"] for name, cfg in PAPER_ARMS.items()}
    assert all(c.shape == (6,) for c in curves.values())
    assert len({float(c[0]) for c in curves.values()}) == 1  # one instance per replicate seed (common to every arm)


def test_simulate_replicates_is_chunk_invariant_and_matches_single_runs():
    """Replicate i depends only on (root_seed, i): simulating [0, 1, 2] at once or [2] alone gives the same row."""
    from reference_impl.npfl_rl import simulate_replicates

    gen = dict(K=8, d=5, D_range=(3, 6), mean_degree=3.0)
    arms = ("rl_sac", "npfl_tau_0.05")
    full = simulate_replicates(arms, 15, 7, [0, 1, 2], generator=gen)
    alone = simulate_replicates(arms, 15, 7, [2], generator=gen)
    for a, b in zip(full, alone, strict=True):
        assert a.shape == (3, 16) and np.array_equal(a[2], b[0])
    tau = simulate_replicates(("rl_dpg",), 5, 7, [0], generator=gen, metric="tau")[0]
    assert tau.shape == (1, 6, 8)
    with pytest.raises(ValueError, match="metric"):
        simulate_replicates(arms, 5, 7, [0], metric="mse")
