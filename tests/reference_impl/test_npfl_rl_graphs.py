"""reference_impl.npfl_rl.data graph generation: components, the two samplers, the expected number of draws."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from reference_impl.npfl_rl.data import (
    PAIRS_SAMPLER_MAX_PAIRS,
    _components,
    _linear_graph,
    estimate_graph_draws,
    intra_cluster_components,
    synthetic_problem,
)


def _label_propagation(adjacency: np.ndarray) -> np.ndarray:
    """The former dense implementation (min-label propagation, components numbered by their smallest node)."""
    K = adjacency.shape[0]
    label = np.arange(K)
    reach = adjacency | np.eye(K, dtype=bool)
    for _ in range(K):
        new = np.min(np.where(reach, label[None, :], K), axis=1)
        if np.array_equal(new, label):
            break
        label = new
    return np.unique(label, return_inverse=True)[1]


@pytest.mark.parametrize("p", [0.0, 0.02, 0.06, 0.3])
def test_components_number_like_the_former_label_propagation(p):
    rng = np.random.default_rng(int(100 * p))
    for _ in range(20):
        A = np.triu(rng.random((60, 60)) < p, 1)
        A = A | A.T
        expected = _label_propagation(A)
        np.testing.assert_array_equal(_components(A), expected)
        np.testing.assert_array_equal(_components(sp.csr_array(A)), expected)
        labels = rng.integers(0, 3, 60)
        same = A & (labels[:, None] == labels[None, :])
        np.testing.assert_array_equal(intra_cluster_components(A, labels), _label_propagation(same))
        np.testing.assert_array_equal(intra_cluster_components(sp.csr_array(A), labels), _label_propagation(same))


def test_linear_graph_is_symmetric_without_loops_and_has_density_p():
    K, p = 400, 0.02
    rng = np.random.default_rng(1)
    total = 0
    for _ in range(50):
        A = _linear_graph(rng, K, p)
        assert (A != A.T).nnz == 0 and not A.diagonal().any() and A.dtype == bool
        total += A.nnz // 2
    pairs = 50 * K * (K - 1) / 2
    assert abs(total - p * pairs) <= 6 * math.sqrt(pairs * p * (1 - p))
    assert _linear_graph(rng, 5, 1.0).nnz == 20 and _linear_graph(rng, 5, 0.0).nnz == 0


def test_auto_keeps_the_pair_draws_below_the_switch_and_linear_draws_connected_instances():
    kw = dict(K=12, Q=3, d=4, D_range=(3, 5), mean_degree=5.0)
    auto, _ = synthetic_problem(np.random.default_rng(2), **kw)
    pairs, _ = synthetic_problem(np.random.default_rng(2), sampler="pairs", **kw)
    assert np.array_equal(auto.adjacency, pairs.adjacency) and np.array_equal(auto.H, pairs.H)
    linear, _ = synthetic_problem(np.random.default_rng(2), sampler="linear", symmetric=True, **kw)
    A = linear.adjacency
    assert np.array_equal(A, A.T) and not A.diagonal().any() and np.all(_components(A) == 0)
    assert np.unique(linear.components).size == 3 and np.all(linear.neighbour_counts() + np.eye(3)[linear.labels])
    assert 2000 * 1999 // 2 <= PAIRS_SAMPLER_MAX_PAIRS < 2001 * 2000 // 2
    with pytest.raises(ValueError, match="sampler must be one of 'auto', 'pairs', 'linear'"):
        synthetic_problem(np.random.default_rng(0), sampler="fast")


def test_expected_draws_track_the_observed_connection_rate():
    """At K = 200, mean degree 5: mu = K (1 - p)^(K - 1) isolated nodes on average; e^-mu approximates the rate of
    connected draws (from above: connectivity needs more than no isolated node)."""
    K, c = 200, 5.0
    est = estimate_graph_draws(K, c)
    rng = np.random.default_rng(3)
    draws = [_linear_graph(rng, K, est["p"]) for _ in range(400)]
    isolated = np.mean([np.sum(np.diff(A.indptr) == 0) for A in draws])
    connected = np.mean([np.all(_components(A) == 0) for A in draws])
    assert abs(isolated - est["expected_isolated"]) <= 0.25 * est["expected_isolated"] + 0.2
    assert connected <= est["p_connected"] + 0.08 and connected >= est["p_connected"] - 0.15
    assert estimate_graph_draws(4000, 6.0)["expected_draws"] > 10_000  # the default max_draws cannot make it
    assert estimate_graph_draws(10_000, 6.0)["p_connected"] < 1e-10
    with pytest.raises(ValueError, match="mean_degree must be in \\(0, K-1 = 9\\]"):
        estimate_graph_draws(10, 12.0)
