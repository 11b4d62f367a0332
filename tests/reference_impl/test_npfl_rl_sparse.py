"""NPFL-RL on a sparse graph: the stored graph and its dense views, the sparse operators against the former dense
ones, whole runs against a dense re-implementation, no dense K x K on the run path."""

import numpy as np
import pytest
import scipy.sparse as sp

from reference_impl.npfl_rl import (
    NPFLConfig,
    coupled_fixed_point,
    npfl_primal_map,
    per_component_ridge,
    run_npfl,
)
from reference_impl.npfl_rl.data import NPFLProblem, as_graph, synthetic_problem
from reference_impl.npfl_rl.primal import build_structure, graph_product

GEN = dict(K=12, d=5, D_range=(3, 8), mean_degree=3.0)


def _problems(n, **kw):
    return [synthetic_problem(np.random.default_rng(seed), **{**GEN, **kw})[0] for seed in range(n)]


def _former_weights(problem, convention):
    """The former dense construction of |N_k^(r)|, omega and B from the dense adjacency (the reference)."""
    A, labels, Q = problem.adjacency, problem.labels, problem.Q
    counts = A.astype(np.int64) @ np.eye(Q, dtype=np.int64)[labels]
    present = (counts > 0) & (np.arange(Q)[None, :] != labels[:, None])
    if Q == 1:
        omega = np.zeros((problem.K, 1))
    elif convention == "E0":
        omega = present / (Q - 1.0)
    else:
        omega = np.where(present, 1.0 / np.maximum(present.sum(axis=1, keepdims=True), 1), 0.0)
    per_edge = omega / np.maximum(counts, 1)
    B = np.where(A, per_edge[:, labels], 0.0)
    return counts, omega, np.where(labels[:, None] == labels[None, :], 0.0, B)


@pytest.mark.parametrize("Q", [1, 3, 4])
def test_graph_is_stored_sparse_and_its_dense_views_are_the_former_arrays(Q):
    for problem in _problems(3, Q=Q):
        G, A = problem.graph, problem.adjacency
        assert sp.issparse(G) and G.format == "csr" and G.dtype == bool and not G.data.flags.writeable
        assert isinstance(A, np.ndarray) and A.shape == (problem.K, problem.K) and not A.flags.writeable
        assert np.array_equal(A, G.toarray()) and np.array_equal(A, A.T) and not A.diagonal().any()
        assert problem.n_edges == A.sum() // 2 and np.array_equal(problem.degrees, A.sum(axis=1))
        same = A & (problem.labels[:, None] == problem.labels[None, :])
        assert np.array_equal(problem.same_cluster_adjacency, same)
        assert np.array_equal(problem.same_cluster_graph.toarray(), same)
        for convention in ("E0", "E1"):
            counts, omega, B = _former_weights(problem, convention)
            om, Bs = problem.inter_cluster_weights(convention)
            assert sp.issparse(Bs) and Bs.nnz == np.count_nonzero(A & ~same)
            assert np.array_equal(problem.neighbour_counts(), counts)
            assert np.array_equal(om, omega) and np.array_equal(Bs.toarray(), B)  # the same operations, bit for bit


def test_dense_and_sparse_inputs_give_the_same_graph():
    p = _problems(1)[0]
    A = p.adjacency
    kw = dict(labels=p.labels, X=p.X, y=p.y, X_val=p.X_val, y_val=p.y_val, X_test=p.X_test, y_test=p.y_test, lam=0.1)
    coo = sp.coo_array(A.astype(float))
    dup = sp.coo_array((np.r_[coo.data, coo.data], (np.r_[coo.row, coo.row], np.r_[coo.col, coo.col])), shape=A.shape)
    zeros = sp.coo_array((np.r_[coo.data, 0.0, 0.0], (np.r_[coo.row, 0, 1], np.r_[coo.col, 1, 0])), shape=A.shape)
    if A[0, 1]:
        zeros = sp.coo_array(A.astype(float))  # (0, 1) is an edge already: no stored zero to test there
    for given in (A, A.astype(float), sp.csr_array(A), sp.csc_array(A.astype(np.int64)), dup, zeros):
        G = NPFLProblem(adjacency=given, **kw).graph
        assert np.array_equal(G.indptr, p.graph.indptr) and np.array_equal(G.indices, p.graph.indices)


@pytest.mark.parametrize(("adjacency", "needle"), [
    (sp.csr_array(np.array([[0, 1, 0], [0, 0, 1], [0, 1, 0]])), "symmetric"),
    (sp.csr_array(np.array([[1, 1, 0], [1, 0, 1], [0, 1, 0]])), "zero diagonal"),
    (sp.csr_array(np.ones((2, 3))), "square"),
    (sp.csr_array(np.zeros((1, 1))), "K >= 2"),
    (np.zeros((3, 3, 1)), "square"),
    (np.array([["a", "b"], ["b", "a"]]), "square"),
])
def test_bad_adjacency_is_refused_by_name(adjacency, needle):
    with pytest.raises(ValueError, match=needle) as err:
        as_graph(adjacency)
    assert str(err.value).startswith("adjacency must be")


@pytest.mark.parametrize(("algorithm", "convention", "diagonal"),
                         [("npfl", "E0", "corrected"), ("npfl", "E1", "printed"), ("nfl", "E0", "corrected")])
def test_block_diagonal_operators_and_products_equal_the_former_dense_ones(algorithm, convention, diagonal):
    problems = _problems(3)
    config = NPFLConfig(algorithm=algorithm, convention=convention, diagonal=diagonal)
    S = build_structure(tuple(problems), config)
    K, R = problems[0].K, len(problems)
    A_in, B = S.A_in.toarray().reshape(R, K, R, K), S.B.toarray().reshape(R, K, R, K)
    for r, p in enumerate(problems):
        former_in = p.adjacency if algorithm == "nfl" else p.same_cluster_adjacency
        former_B = np.zeros((K, K)) if algorithm == "nfl" else _former_weights(p, convention)[2]
        for s in range(R):  # blocks off the diagonal are empty: the runs do not mix
            assert np.array_equal(A_in[r, :, s], former_in.astype(float) if s == r else np.zeros((K, K)))
            assert np.array_equal(B[r, :, s], former_B if s == r else np.zeros((K, K)))
        deg = (p.adjacency if diagonal == "printed" else former_in).sum(axis=1)
        assert np.array_equal(S.deg_in[r], former_in.sum(axis=1)) and np.array_equal(S.c[r], S.lam_k[r] + 3.0 * deg)
    w = np.random.default_rng(0).normal(size=(R, K, problems[0].d))
    for M, dense in ((S.A_in, A_in), (S.B, B)):
        blocks = np.stack([dense[r, :, r] for r in range(R)])
        np.testing.assert_allclose(graph_product(M, w), np.einsum("rkl,rld->rkd", blocks, w), rtol=1e-14, atol=1e-14)


def _dense_fixed_tau_run(problem, config, iterations):
    """The iteration with the former dense matrices and direct solves of (6.11) (an independent re-implementation)."""
    K, d = problem.K, problem.d
    nfl = config.algorithm == "nfl"
    A_in = (problem.adjacency if nfl else problem.same_cluster_adjacency).astype(float)
    B = np.zeros((K, K)) if nfl else _former_weights(problem, config.convention)[2]
    omega = B.sum(axis=1)
    lam_k = np.full(K, problem.lam / K) if nfl else problem.lam / problem.cluster_sizes
    deg = A_in.sum(axis=1)
    c = lam_k + config.rho * deg
    tau = 0.0 if nfl else config.tau0
    w, gamma = np.zeros((K, d)), np.zeros((K, d))
    for _ in range(iterations):
        m, s = B @ w, 0.5 * config.rho * (deg[:, None] * w + A_in @ w) - 0.5 * gamma
        rhs = problem.b + tau * m + s
        w = np.linalg.solve(problem.H + (c + omega * tau)[:, None, None] * np.eye(d), rhs[..., None])[..., 0]
        gamma = gamma + config.rho * (deg[:, None] * w - A_in @ w)
    return w, gamma


@pytest.mark.parametrize("config", [NPFLConfig(tau0=0.2), NPFLConfig(tau0=0.4, convention="E1"),
                                    NPFLConfig(algorithm="nfl")])
def test_runs_equal_a_dense_reimplementation_and_batches_do_not_mix(config):
    problems = _problems(3)
    batch = run_npfl(problems, config, 80)
    for r, p in enumerate(problems):
        w, gamma = _dense_fixed_tau_run(p, config, 80)
        scale = np.max(np.abs(w))
        np.testing.assert_allclose(batch.w[r], w, rtol=0, atol=1e-10 * scale)
        np.testing.assert_allclose(batch.gamma[r], gamma, rtol=0, atol=1e-10 * np.max(np.abs(gamma)))
        single = run_npfl(p, config, 80)
        assert np.array_equal(single.w[0], batch.w[r]) and np.array_equal(single.test_mse[0], batch.test_mse[r])


def test_the_run_path_never_forms_the_dense_adjacency(monkeypatch):
    problems = _problems(2)

    def refuse(self):
        raise AssertionError("a dense (K, K) view was formed on the run path")

    monkeypatch.setattr(NPFLProblem, "adjacency", property(refuse))
    monkeypatch.setattr(NPFLProblem, "same_cluster_adjacency", property(refuse))
    for config in (NPFLConfig(), NPFLConfig(algorithm="nfl"), NPFLConfig(policy="dpg", delta=0.01, epochs=3),
                   NPFLConfig(policy="sac", delta=0.1, clip_candidates=True), NPFLConfig(diagonal="printed")):
        assert run_npfl(problems, config, 5, np.random.default_rng(0)).finite.all()
    p = problems[0]
    npfl_primal_map(p, NPFLConfig(), np.ones((p.K, p.d)), np.zeros((p.K, p.d)))
    assert coupled_fixed_point(p, 0.2).certificate < 1e-12
    assert per_component_ridge(p, method="normal").certificate < 1e-12
