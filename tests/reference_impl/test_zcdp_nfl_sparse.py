"""zCDP-NFL on a sparse adjacency: validation, products equal to the dense ones, memory linear in K and the edges."""

import tracemalloc

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from reference_impl.zcdp_nfl import (
    NFLConfig,
    NFLProblem,
    PrivacySchedule,
    StepSchedule,
    run_zcdp_nfl,
    synthetic_problem,
)
from reference_impl.zcdp_nfl.algorithm import estimate_run_cost, nfl_round
from reference_impl.zcdp_nfl.problem import as_sparse_adjacency, graph_product

PATH = np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]])


@pytest.mark.parametrize("make", [np.asarray, sp.csr_array, sp.coo_array, lambda a: sp.csc_array(a.astype(float))])
def test_dense_and_sparse_adjacencies_give_one_canonical_form(make):
    A = as_sparse_adjacency(make(PATH))
    assert isinstance(A, sp.csr_array) and A.dtype == np.int64 and A.has_sorted_indices
    np.testing.assert_array_equal(A.toarray(), PATH)
    with pytest.raises(ValueError):
        A.data[0] = 2  # read-only, like the other arrays of an instance


@pytest.mark.parametrize(("adjacency", "needle"), [
    (np.array([[0, 1], [0, 0]]), "symmetric 0/1 matrix with zero diagonal"),
    (np.array([[0, 2], [2, 0]]), "symmetric 0/1 matrix with zero diagonal"),
    (np.array([[1, 1], [1, 0]]), "symmetric 0/1 matrix with zero diagonal"),
    (np.array([[0, np.nan], [np.nan, 0]]), "symmetric 0/1 matrix with zero diagonal"),
    (sp.coo_array(([1, 1], ([0, 0], [1, 1])), shape=(2, 2)), "symmetric 0/1 matrix with zero diagonal"),  # duplicates
    (np.zeros((1, 1)), "K >= 2"),
    (np.zeros((2, 3)), "square"),
    (np.array(["0", "1"]), "square (K, K) 0/1 matrix"),
])
def test_bad_adjacency_is_refused_by_name(adjacency, needle):
    with pytest.raises(ValueError) as err:
        as_sparse_adjacency(adjacency)
    assert str(err.value).startswith("adjacency must be") and needle in str(err.value)


def test_problem_keeps_a_sparse_adjacency_and_laplacian():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(4, 3, 2)), rng.normal(size=(4, 3))
    dense = NFLProblem(adjacency=PATH, X=X, y=y, objective="ridge")
    sparse = NFLProblem(adjacency=sp.csr_array(PATH), X=X, y=y, objective="ridge")
    assert sp.issparse(dense.adjacency) and (dense.adjacency != sparse.adjacency).nnz == 0
    np.testing.assert_array_equal(dense.degree, [1, 2, 2, 1])
    assert dense.n_edges == 3
    for sign in (-1, 1):
        np.testing.assert_array_equal(dense.laplacian(sign).toarray(), np.diag(PATH.sum(1)) + sign * PATH)
    with pytest.raises(ValueError, match="connected"):
        NFLProblem(adjacency=sp.csr_array(np.kron(np.eye(2), [[0, 1], [1, 0]])), X=X, y=y, objective="ridge")


@pytest.mark.parametrize("shape", [(7, 3), (1, 7, 3), (5, 7, 3), (2, 3, 7, 3)])
def test_graph_product_is_the_dense_product(shape):
    problem = synthetic_problem(np.random.default_rng(1), K=7, P=3, M=4, mean_degree=3.0)
    x = np.random.default_rng(2).normal(size=shape)
    dense = problem.adjacency.toarray().astype(float)
    np.testing.assert_allclose(graph_product(problem.adjacency, x), dense @ x, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(problem.neighbour_sum(x), dense @ x, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(graph_product(problem.laplacian(), x), problem.laplacian().toarray() @ x, rtol=1e-15,
                               atol=1e-15)


def test_sparse_rounds_equal_the_dense_product_rounds_to_rounding():
    """200 noisy rounds with the adjacency sparse (the reference) and dense (the former product): the same iterates up
    to rounding (the two sum a node's neighbours in different orders)."""
    problem = synthetic_problem(np.random.default_rng(3), K=30, P=4, M=10, mean_degree=4.0, objective="lad")
    config = NFLConfig(rho=1.0, step=StepSchedule(kind="inv_sqrt", eta0=0.5), privacy=PrivacySchedule(phi1=1e-2))
    etas = config.step.etas(200)
    sigma = np.sqrt(config.privacy.variances(problem, config.rho, etas))
    d = problem.degree.astype(float)[:, None]
    states = {}
    for name, A in (("sparse", problem.adjacency.astype(float)), ("dense", problem.adjacency.toarray().astype(float))):
        rng = np.random.default_rng(4)
        w_tilde, gamma = np.zeros((3, problem.K, problem.P)), np.zeros((3, problem.K, problem.P))
        for n in range(200):
            _, w_tilde, gamma, _ = nfl_round(problem, config.rho, etas[n], sigma[n], w_tilde, gamma, rng,
                                             _matrices=(A, d))
        states[name] = (w_tilde, gamma)
    for a, b in zip(states["sparse"], states["dense"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-11 * np.max(np.abs(b)))


def test_ten_thousand_agents_need_memory_linear_in_k():
    """K = 10,000 on a 4-regular graph: instance and 3 rounds peak far below one dense K x K array (800 MB)."""
    K = 10_000
    graph = nx.random_regular_graph(4, K, seed=0)
    tracemalloc.start()
    problem = synthetic_problem(np.random.default_rng(0), K=K, P=4, M=5, objective="lad", graph=graph)
    run = run_zcdp_nfl(problem, NFLConfig(privacy=PrivacySchedule(phi1=1e-2)), 3, np.random.default_rng(1))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert problem.n_edges == 2 * K and run.w.shape == (1, K, 4) and not run.diverged
    per_agent = 8 * (3 * problem.M * problem.P + 40)  # X and its transpose, y, the (K, P) iterates, the graph
    assert peak <= 4 * K * per_agent <= 8 * K * K / 25, peak  # at most 1/25 of one dense K x K array of doubles


@pytest.mark.parametrize(("objective", "clip", "runs", "keep"), [
    ("lad", None, 1, False), ("ridge", 1.0, 3, False), ("elastic_net", None, 4, True)])
def test_run_cost_estimate_bounds_the_memory(objective, clip, runs, keep):
    """The estimate made from the sizes alone bounds the traced peak of drawing the instance and running it."""
    K, M, P, T = 400, 12, 5, 30
    graph = nx.random_regular_graph(4, K, seed=1)
    est = estimate_run_cost(K, M, P, graph.number_of_edges(), iterations=T, runs=runs, keep_trajectory=keep,
                            clip=clip is not None)
    warm = synthetic_problem(np.random.default_rng(0), K=4, P=P, M=M, objective=objective, clip=clip)  # imports
    run_zcdp_nfl(warm, NFLConfig(privacy=PrivacySchedule(phi1=1e-2)), 2, np.random.default_rng(1), w_c=np.ones(P))
    tracemalloc.start()
    problem = synthetic_problem(np.random.default_rng(0), K=K, P=P, M=M, objective=objective, clip=clip, graph=graph)
    run_zcdp_nfl(problem, NFLConfig(privacy=PrivacySchedule(phi1=1e-2)), T, np.random.default_rng(1), runs=runs,
                 w_c=np.ones(P), keep_trajectory=keep)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak <= 8 * est.peak_elements, (peak, 8 * est.peak_elements)
    assert est.work >= T * runs * (2 * K * M * P + 4 * graph.number_of_edges() * P)


def test_run_cost_estimate_refuses_bad_sizes_by_name():
    with pytest.raises(ValueError, match="n_edges must be an integer in \\[K - 1, K\\(K - 1\\)/2\\] = \\[2, 3\\]"):
        estimate_run_cost(3, 5, 2, 4, iterations=10)
    with pytest.raises(ValueError, match="iterations must be an integer >= 1, got 0"):
        estimate_run_cost(3, 5, 2, 2, iterations=0)
