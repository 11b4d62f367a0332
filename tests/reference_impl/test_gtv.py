"""reference_impl.gtv: step sizes, PU, Algorithm 1 against CVXPY (T5-T8 (docs/papers/gtv.md#algorithm-1 to #convergence)
of docs/papers/gtv.md#instances), baselines, data."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from reference_impl.gtv import (
    PrimalUpdate,
    fedavg,
    ifca,
    mse,
    oracle_clusterwise,
    pooled_solution,
    preconditioned_norm_squared,
    primal_update,
    run_algorithm1,
    sbm_arm_curve,
    solve_gtv_cvxpy,
    solve_gtv_dual_cvxpy,
    step_sizes,
    table1_replicate,
)
from reference_impl.gtv.data import (
    chain_instance,
    dense_clusters_instance,
    digits_instance,
    load_npz_instance,
    save_npz_instance,
    sbm_instance,
)
from theory.gtv import (
    GTVInstance,
    dual_norm,
    dual_update,
    duality_gap,
    edge_differences,
    kkt_residuals,
    loss_gradients,
    primal_objective,
)

TOL = 1e-10


def _graph_instance(edges, n):
    return GTVInstance(n=n, edges=edges, A=np.ones(len(edges)), X=np.ones((n, 1, 1)), y=np.ones((n, 1)),
                       m=np.ones(n, int), lam=1.0)


def test_preconditioned_norm_reference_values_and_theta_invariance():
    """T5 (docs/papers/gtv.md#algorithm-1): chain (bipartite) 1, K_7 7/12 = 0.583 (lambda_max of the normalised
    Laplacian / 2); theta-invariant."""
    chain = _graph_instance(np.array([[i, i + 1] for i in range(5)]), 6)
    assert np.isclose(preconditioned_norm_squared(chain, *step_sizes(chain)), 1.0, rtol=1e-12)
    K7 = _graph_instance(np.array([[i, j] for i in range(7) for j in range(i + 1, 7)]), 7)
    assert np.isclose(preconditioned_norm_squared(K7, *step_sizes(K7)), 7 / 12, rtol=1e-12)
    assert np.isclose(preconditioned_norm_squared(K7, *step_sizes(K7, 37.0)), 7 / 12, rtol=1e-12)


def test_step_size_condition_is_enforced():
    chain = _graph_instance(np.array([[i, i + 1] for i in range(5)]), 6)
    with pytest.raises(ValueError, match="step sizes"):
        run_algorithm1(chain, tau=1.0, sigma=1.0, max_iterations=5)
    with pytest.raises(ValueError, match="theta"):
        step_sizes(chain, -1.0)
    with pytest.raises(ValueError, match="max_iterations"):
        run_algorithm1(chain, max_iterations=0)


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_primal_update_is_the_proximal_map(loss):
    rng = np.random.default_rng(0)
    inst, _ = sbm_instance(rng, sizes=(4, 4), p_in=0.8, p_out=0.2, d=3, m=5, noise=0.1, lam=0.1)
    if loss == "logistic":
        inst = inst.with_(loss="logistic", y=np.where(inst.y > 0, 1.0, -1.0) * inst.row_mask, gamma=0.05)
    tau, _ = step_sizes(inst, 2.0)
    v = rng.normal(size=(inst.n, inst.d))
    z = primal_update(inst, v, tau)
    stationarity = loss_gradients(inst, z) + (z - v) / tau[:, None]
    assert np.abs(stationarity).max() < 1e-10


def test_logistic_primal_update_woodbury_and_hessian_directions_agree():
    """Two methods: with fewer sample rows than features ("auto" picks Woodbury's r x r solve) and with the d x d
    Hessian, the Newton PU reaches the proximal map's stationarity and both land on the same point."""
    rng = np.random.default_rng(3)
    inst, _ = sbm_instance(rng, sizes=(5, 5), p_in=0.8, p_out=0.2, d=6, m=3, noise=0.1, lam=0.1)   # m = 3 < d = 6
    inst = inst.with_(loss="logistic", y=np.where(inst.y > 0, 1.0, -1.0) * inst.row_mask, gamma=0.01)
    tau, _ = step_sizes(inst, 0.5)
    v = 3.0 * rng.normal(size=(inst.n, inst.d))         # far from the data fit: several damped Newton steps
    assert PrimalUpdate(inst, tau).by_rows and not PrimalUpdate(inst, tau, direction="hessian").by_rows
    points = [PrimalUpdate(inst, tau, direction=how)(v) for how in ("auto", "hessian")]
    for z in points:
        assert np.abs(loss_gradients(inst, z) + (z - v) / tau[:, None]).max() < TOL
    # both are within newton_tol (1e-12, relative) of the unique minimiser of a (1/tau)-strongly convex objective
    assert np.abs(points[0] - points[1]).max() < TOL
    with pytest.raises(ValueError, match="direction"):
        PrimalUpdate(inst, tau, direction="cholesky")


PENALTIES = ["l2", "l1", "mocha", "quad"]


def _small(penalty, seed, m=3, d=4):
    rng = np.random.default_rng(seed)
    Q = None
    if penalty == "quad":
        B = rng.normal(size=(d, 2))
        Q = B @ B.T
    inst, _ = sbm_instance(rng, sizes=(6, 6), p_in=0.6, p_out=0.1, d=d, m=m, noise=0.1, lam=0.1, penalty=penalty,
                           Q=Q, weights=(0.3, 2.0))
    return inst


@pytest.mark.parametrize("penalty", PENALTIES)
def test_algorithm1_reaches_the_cvxpy_optimum_and_strong_duality_holds(penalty):
    """T6-T8 (docs/papers/gtv.md#convergence): objective not above CVXPY's beyond its tolerance, tiny KKT residuals,
    CVXPY primal = dual."""
    inst = _small(penalty, 11)
    run = run_algorithm1(inst, theta=10.0 if penalty == "quad" else 1.0, max_iterations=50_000, tol=1e-12)
    assert run.converged
    primal = solve_gtv_cvxpy(inst, solver_tol=TOL)
    dual = solve_gtv_dual_cvxpy(inst, solver_tol=TOL)
    P = primal_objective(inst, run.w)
    scale = 1 + abs(primal.value)
    assert P - primal.value <= primal.solver_tol * scale
    assert abs(primal.value - dual.value) <= 2 * max(primal.solver_tol, dual.solver_tol) * scale
    node, edge = run.kkt(inst)
    assert max(node, edge) < 1e-9
    gap = duality_gap(inst, run.w, run.u, range_rtol=1e-8)
    assert -1e-9 <= gap <= 1e-9
    if penalty in ("l2", "l1"):
        assert np.all(dual_norm(inst, run.u) <= inst.lam * inst.A * (1 + 1e-15))
    if penalty == "mocha":       # erratum E3 (docs/papers/gtv.md#erratum-e3): u = lam A D w, not D w
        np.testing.assert_allclose(run.u, (inst.lam * inst.A)[:, None] * edge_differences(inst, run.w), atol=1e-9)


def test_algorithm1_logistic_matches_cvxpy():
    rng = np.random.default_rng(3)
    inst, _ = sbm_instance(rng, sizes=(5, 5), p_in=0.7, p_out=0.1, d=3, m=6, noise=0.5, lam=0.05)
    inst = inst.with_(loss="logistic", y=np.where(inst.y > 0, 1.0, -1.0) * inst.row_mask, gamma=0.01)
    run = run_algorithm1(inst, theta=1.0, max_iterations=50_000, tol=1e-11)
    ref = solve_gtv_cvxpy(inst, solver_tol=TOL)
    assert run.converged and primal_objective(inst, run.w) - ref.value <= ref.solver_tol * (1 + abs(ref.value))
    assert max(run.kkt(inst)) < 1e-8


def test_iteration_cap_reports_non_convergence_and_curves_are_recorded():
    inst = _small("l2", 4)
    run = run_algorithm1(inst, max_iterations=7, tol=1e-14, record_every=2)
    assert not run.converged and run.iterations == 7 and run.residuals.shape == (7,)
    assert run.objective_iterations.tolist() == [0, 2, 4, 6] and np.isfinite(run.objectives).all()
    quiet = run_algorithm1(inst, max_iterations=7, tol=1e-14, record_every=2, monitor=lambda w: float(w.sum()),
                           record_objective=False)
    assert quiet.objectives.size == 0 and quiet.meta["monitor"].shape == (4,)     # iterations 0, 2, 4, 6
    np.testing.assert_array_equal(quiet.w, run.w)


def test_mutated_dual_update_converges_elsewhere():
    """The seed's (25) without erratum E3 (docs/papers/gtv.md#erratum-e3) (u = D w for MOCHA) changes the fixed point:
    KKT residual no longer small."""
    inst = _small("mocha", 5)

    def seed_du(inst_, v, sigma):
        return v / (1.0 + sigma)[:, None]

    run = run_algorithm1(inst, max_iterations=20_000, tol=1e-12, dual_update_fn=seed_du)
    assert max(kkt_residuals(inst, run.w, run.u)) > 1e-3


def _textbook_algorithm1(inst, tau, sigma, iterations):
    """Steps 3-8 on whole arrays, as docs/papers/gtv.md writes them: the reference for the blocked edge step."""
    pu = primal_update
    DT = inst.incidence.T.tocsr()
    head, tail = inst.edges[:, 0], inst.edges[:, 1]
    w, u = np.zeros((inst.n, inst.d)), np.zeros((inst.n_edges, inst.d))
    residuals = []
    for _ in range(iterations):
        w_new = pu(inst, w - tau[:, None] * (DT @ u), tau)
        z = 2.0 * w_new - w
        u_new = dual_update(inst, u + sigma[:, None] * (z[head] - z[tail]), sigma)
        residuals.append(float(np.linalg.norm((w_new - w) * (1.0 / tau[:, None]))
                               + np.linalg.norm((u_new - u) * (1.0 / sigma[:, None]))))
        w, u = w_new, u_new
    return w, u, np.array(residuals)


@pytest.mark.parametrize("theta, varying_sigma", [(10.0, False), (1.0, True)])
def test_algorithm1_blocked_edge_step_is_bit_identical_to_the_textbook_loop(theta, varying_sigma):
    """The nLasso edge step runs over blocks of edges in two alternating buffers: the same bits as whole arrays."""
    # 2 x 60 nodes, d = 100: |E| d 8 bytes ~ 1.4 MB, more than one 1 MiB block of edges; lambda = 1: some rows
    # of u inside the ball, some on its sphere after 40 iterations
    inst, _ = sbm_instance(np.random.default_rng(4), sizes=(60, 60), d=100, m=10, p_out=0.01, lam=1.0)
    tau, sigma = step_sizes(inst, theta)
    if varying_sigma:     # per-edge sigma: the column (not scalar) branch; halved steps keep the condition
        sigma = sigma * np.linspace(0.5, 1.0, inst.n_edges)
    iterations = 40       # enough for rows on both sides of the ball's radius lambda A_e
    with threadpool_limits(limits=1, user_api="blas"):     # as run_algorithm1 runs (a BLAS dot's order)
        w, u, residuals = _textbook_algorithm1(inst, tau, sigma, iterations)
    run = run_algorithm1(inst, tau=tau, sigma=sigma, max_iterations=iterations, tol=0.0, record_every=0)
    np.testing.assert_array_equal(run.w, w)
    np.testing.assert_array_equal(run.u, u)
    np.testing.assert_array_equal(run.residuals, residuals)
    capped = np.linalg.norm(u, axis=1) >= inst.lam * inst.A * (1 - 1e-12)     # 1e-12: relative rounding of the cap
    assert capped.any() and not capped.all()


def test_baselines_pooled_fedavg_oracle_ifca():
    rng = np.random.default_rng(8)
    inst, w_true = sbm_instance(rng, sizes=(10, 10), p_in=0.6, p_out=0.05, d=5, m=10, noise=1e-3)
    pooled = pooled_solution(inst)
    fa = fedavg(inst, rounds=400, local_steps=1)
    np.testing.assert_allclose(fa, pooled, atol=1e-6)        # one local step: gradient descent on the pooled loss
    oracle = oracle_clusterwise(inst)
    assert mse(oracle, w_true) < 1e-5 < mse(pooled, w_true)
    out = ifca(inst, rng, k=2, rounds=50)
    assert out.shape == (inst.n, inst.d) and np.isfinite(out).all()


def test_table1_replicate_small_sbm():
    out = table1_replicate(0, sizes=(15, 15), d=8, m=10, max_iterations=3000, baseline_rounds=50)
    assert out["algorithm1_converged"] and out["algorithm1"] < 1e-2 < out["pooled"]
    assert out["oracle"] <= out["algorithm1"]


def test_chain_dense_digits_generators_and_npz_round_trip(tmp_path):
    rng = np.random.default_rng(9)
    chain, _ = chain_instance(rng, n=5, eps=0.0, d=2, m=3, rho=0.6)
    assert chain.n_edges == 8 and (chain.m > 0).sum() == 6
    dense, _ = dense_clusters_instance(rng, N=5, d=2, m=4, n_inter=3)
    assert dense.n_edges == 2 * 10 + 3
    digits = digits_instance(rng, nodes_per_cluster=4, per_node=5)
    assert digits.loss == "logistic" and digits.d == 64 and set(np.unique(digits.y)) == {-1.0, 1.0}
    save_npz_instance(tmp_path / "data.npz", dense)
    back = load_npz_instance(tmp_path / "data.npz", lam=dense.lam)
    np.testing.assert_array_equal(back.X, dense.X)
    np.testing.assert_array_equal(back.clusters, dense.clusters)
    np.savez(tmp_path / "bad.npz", X=dense.X)
    with pytest.raises(ValueError, match="missing"):
        load_npz_instance(tmp_path / "bad.npz", lam=1.0)


def test_digits_smoke_graph_mostly_intra_cluster_and_algorithm1_converges():
    """Section 5.4 stand-in (no ground truth: smoke only): the mean-image kNN graph joins mostly same-pair nodes,
    and Algorithm 1 with the logistic loss converges; pooling across the graph does not lower the training fit of a
    node's own pair below that of independent training by much (accuracy at lam = 1 >= lam = 1e-4 minus 0.1)."""
    rng = np.random.default_rng(0)
    inst = digits_instance(rng, nodes_per_cluster=6, per_node=10, lam=1.0)
    c = inst.clusters
    assert np.mean(c[inst.edges[:, 0]] == c[inst.edges[:, 1]]) >= 0.8

    def accuracy(lam):
        run = run_algorithm1(inst.with_(lam=lam), theta=20.0, max_iterations=5000, tol=1e-6, record_every=0)
        assert run.converged
        pred = np.sign(np.einsum("nrj,nj->nr", inst.X, run.w))
        return float(np.mean(pred[inst.row_mask] == inst.y[inst.row_mask]))

    assert accuracy(1.0) >= accuracy(1e-4) - 0.1


def test_sbm_arm_curves_share_the_instance_and_record_mse():
    kw = dict(sizes=(6, 6), d=4, m=6, p_in=0.8, p_out=0.1)
    k, alg = sbm_arm_curve("algorithm1", 5, iterations=400, theta=5.0, record_every=50, **kw)
    assert k.tolist() == list(range(0, 401, 50)) and alg[-1] < alg[0]
    _, pooled = sbm_arm_curve("pooled", 5, iterations=400, **kw)
    _, fa = sbm_arm_curve("fedavg", 5, iterations=300, local_steps=1, **kw)
    assert len(fa) == 300 and np.isclose(fa[-1], pooled[0], rtol=1e-4)
    _, oracle = sbm_arm_curve("oracle", 5, **kw)
    _, ifc = sbm_arm_curve("ifca", 5, iterations=20, **kw)
    assert oracle[0] <= alg[-1] and len(ifc) == 20
    with pytest.raises(ValueError, match="arm"):
        sbm_arm_curve("pfedme", 5)
