"""reference_impl.gtv.data graph generation: the linear-time SBM sampler, its cost estimate, the generators' limits."""

import math
import tracemalloc

import networkx as nx
import numpy as np
import pytest
from scipy import stats

from reference_impl.gtv.data import (
    SBM_NETWORKX_MAX_PAIRS,
    _bernoulli_indices,
    _triangle_pairs,
    dense_clusters_instance,
    estimate_sbm_cost,
    sbm_edges,
    sbm_instance,
)


def test_triangle_enumeration_round_trips_exactly_far_beyond_float_precision():
    idx = np.concatenate([np.arange(200_000), np.array([2**40 + 3, 10**12 - 1, 2**52 + 7, 4 * 10**15 + 11])])
    i, j = _triangle_pairs(idx)
    assert np.all((0 <= i) & (i < j)) and np.array_equal(j * (j - 1) // 2 + i, idx)
    first = _triangle_pairs(np.arange(6))
    assert list(zip(*first, strict=True)) == [(0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3)]


@pytest.mark.parametrize("p", [0.0, 1e-4, 0.3, 0.999, 1.0])
def test_bernoulli_indices_keep_each_index_with_probability_p(p):
    rng = np.random.default_rng(0)
    N, reps = 500, 400
    counts = np.zeros(N)
    for _ in range(reps):
        idx = _bernoulli_indices(rng, N, p)
        assert np.all(np.diff(idx) > 0) and (idx.size == 0 or (idx[0] >= 0 and idx[-1] < N))
        counts[idx] += 1
    if p in (0.0, 1.0):
        assert np.all(counts == p * reps)
        return
    # every index: a Binomial(reps, p) count; two-sided test at 1e-6 per index (Bonferroni over N)
    lo, hi = stats.binom.ppf([1e-6 / (2 * N), 1 - 1e-6 / (2 * N)], reps, p)
    assert np.all((counts >= lo - 1) & (counts <= hi + 1))
    total = counts.sum()
    mean, sd = N * reps * p, math.sqrt(N * reps * p * (1 - p))
    assert abs(total - mean) <= 6 * sd + 1


def test_sbm_edges_have_the_block_probabilities_and_cover_all_pairs_at_p_one():
    full = sbm_edges(np.random.default_rng(1), (5, 4, 3), np.ones((3, 3)))
    assert len(full) == 12 * 11 // 2 and len(np.unique(full, axis=0)) == len(full)
    probs = np.array([[0.3, 0.05], [0.05, 0.6]])
    sizes = (40, 30)
    rng = np.random.default_rng(2)
    counts = np.zeros((70, 70))
    for _ in range(300):
        e = sbm_edges(rng, sizes, probs)
        assert np.all(e[:, 0] < e[:, 1]) and np.all(np.diff(e[:, 0] * 70 + e[:, 1]) > 0)  # sorted, no repeats
        np.add.at(counts, (e[:, 0], e[:, 1]), 1)
    block = np.repeat([0, 1], sizes)
    upper = np.triu(np.ones((70, 70), dtype=bool), 1)
    for a in range(2):
        for b in range(2):
            mask = upper & (block[:, None] == a) & (block[None, :] == b)
            if mask.any():
                freq = counts[mask].sum() / (300 * mask.sum())
                assert abs(freq - probs[a, b]) <= 6 * math.sqrt(probs[a, b] * (1 - probs[a, b]) / (300 * mask.sum()))
    assert counts[~upper].sum() == 0


def test_sbm_edges_time_and_memory_are_linear_in_the_edges():
    """2 x 100,000 nodes at mean degree 4: about 400,000 edges drawn; the traced peak is a few arrays of the edges,
    while networkx would walk 2 x 10^10 pairs (one Python call each inside a cluster)."""
    n = 100_000
    probs = [[4.0 / n, 0.04 / n], [0.04 / n, 4.0 / n]]
    tracemalloc.start()
    e = sbm_edges(np.random.default_rng(3), (n, n), probs)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    expected = estimate_sbm_cost((n, n), 4.0 / n, 0.04 / n, 1, 1).expected_edges
    assert abs(len(e) - expected) <= 6 * math.sqrt(expected)
    assert peak <= 64 * 8 * len(e)  # a few edge-sized arrays, not n^2


def test_sbm_instance_keeps_networkx_draws_for_small_graphs_and_switches_above():
    small_auto, _ = sbm_instance(np.random.default_rng(4), sizes=(30, 30), d=3, m=4, p_in=0.3, p_out=0.05)
    small_nx, _ = sbm_instance(np.random.default_rng(4), sizes=(30, 30), d=3, m=4, p_in=0.3, p_out=0.05,
                               sampler="networkx")
    assert np.array_equal(small_auto.edges, small_nx.edges) and np.array_equal(small_auto.X, small_nx.X)
    linear, _ = sbm_instance(np.random.default_rng(4), sizes=(30, 30), d=3, m=4, p_in=0.3, p_out=0.05,
                             sampler="linear")
    assert not np.array_equal(linear.edges, small_nx.edges)  # another exact draw of the same model
    n = int((1 + math.isqrt(8 * SBM_NETWORKX_MAX_PAIRS)) // 2) + 2  # just above the switch
    big, _ = sbm_instance(np.random.default_rng(5), sizes=(n // 2, n - n // 2), d=1, m=1, p_in=4.0 / n, p_out=0.0)
    assert np.bincount(big.edges.ravel(), minlength=big.n).min() >= 1  # isolated nodes were joined to their cluster
    assert np.all(big.clusters[big.edges[:, 0]] == big.clusters[big.edges[:, 1]])
    with pytest.raises(ValueError, match="sampler must be one of 'auto', 'linear', 'networkx'"):
        sbm_instance(np.random.default_rng(0), sizes=(3, 3), sampler="fast")


def test_linear_and_networkx_samplers_draw_the_same_degree_distribution():
    """Both samplers are exact: the mean degree inside and across clusters agrees (z-test on 200 graphs each)."""
    def degrees(sampler, seed):
        inst, _ = sbm_instance(np.random.default_rng(seed), sizes=(25, 25), d=1, m=1, p_in=0.2, p_out=0.04,
                               sampler=sampler)
        same = inst.clusters[inst.edges[:, 0]] == inst.clusters[inst.edges[:, 1]]
        return same.sum(), (~same).sum()

    a = np.array([degrees("linear", s) for s in range(200)], dtype=float)
    b = np.array([degrees("networkx", s) for s in range(200)], dtype=float)
    z = (a.mean(0) - b.mean(0)) / np.sqrt(a.var(0, ddof=1) / 200 + b.var(0, ddof=1) / 200)
    assert np.all(np.abs(z) < 5)


def test_estimate_matches_the_paper_sbm_and_refuses_bad_arguments():
    est = estimate_sbm_cost((100, 100), 0.5, 0.01, 100, 10)
    assert est.expected_edges == 0.5 * 2 * 4950 + 0.01 * 100 * 100
    inst, _ = sbm_instance(np.random.default_rng(0))
    assert abs(inst.n_edges - est.expected_edges) <= 6 * math.sqrt(est.expected_edges)
    assert est.peak_elements >= 3 * 200 * 10 * 100
    huge = estimate_sbm_cost((200_000, 200_000), 0.5, 0.01, 100, 10)  # the CLI's defaults at 400,000 nodes
    assert huge.expected_edges > 2e10 and huge.peak_elements > 1e11
    with pytest.raises(ValueError, match="p_in must be in \\[0, 1\\]"):
        estimate_sbm_cost((10, 10), 1.5, 0.0, 2, 2)
    with pytest.raises(ValueError, match="sizes must list cluster sizes >= 1"):
        estimate_sbm_cost((), 0.5, 0.0, 2, 2)


def test_dense_clusters_refuse_more_inter_cluster_edges_than_exist():
    """n_inter above the k(k-1)/2 N^2 inter-cluster pairs used to loop for ever (rejection sampling)."""
    with pytest.raises(ValueError, match="n_inter must be an integer in \\[0, k\\(k - 1\\)/2 N\\^2\\] = \\[0, 4\\]"):
        dense_clusters_instance(np.random.default_rng(0), N=2, k=2, n_inter=5)
    inst, _ = dense_clusters_instance(np.random.default_rng(0), N=2, k=2, n_inter=4, d=2, m=3)
    assert inst.n_edges == 2 + 4
    assert nx.is_connected(nx.Graph(inst.edges.tolist()))
