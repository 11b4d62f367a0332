"""reference_impl.npfl_rl.estimate_run_cost: it bounds the memory of drawing and running instances, counts the
iteration's products, is linear in K and the edges, and refuses bad sizes by name."""

import tracemalloc

import numpy as np
import pytest

from reference_impl.npfl_rl import NPFLConfig, RunCost, estimate_run_cost, run_npfl
from reference_impl.npfl_rl.data import synthetic_problem


def test_memory_is_linear_in_the_clients_and_the_edges():
    """K = 3000 clients (mean degree 12), SAC on two runs of one instance: drawing the instance and running it stay
    under the estimate made from the sizes alone, and the run holds far less than one dense K x K array of doubles
    (the former operators held four: A_in and B per run)."""
    K, d, runs, N = 3000, 3, 2, 5
    gen = dict(K=K, Q=3, d=d, mean_degree=12.0, D_range=(2, 3), sampler="linear")
    config = NPFLConfig(policy="sac", delta=0.1, epochs=2)
    warm = synthetic_problem(np.random.default_rng(0), K=12, d=d)[0]
    run_npfl(warm, config, 2, np.random.default_rng(0))  # imports and caches outside the trace
    tracemalloc.start()
    problems = [synthetic_problem(np.random.default_rng(0), **gen)[0]] * runs
    drawn, draw_peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    run = run_npfl(problems, config, N, np.random.default_rng(1))
    run_peak = tracemalloc.get_traced_memory()[1] - drawn
    peak = max(draw_peak, drawn + run_peak)
    tracemalloc.stop()
    assert run.finite.all()
    edges = max(p.n_edges for p in problems)
    assert 5 * K <= edges <= 7 * K and problems[0].graph.nnz == 2 * problems[0].n_edges
    kw = dict(iterations=N, runs=runs, policy="sac", epochs=2)
    full, run_only = estimate_run_cost(K, d, edges, D_max=3, **kw), estimate_run_cost(K, d, edges, **kw)
    assert peak <= 8 * full.peak_elements, (peak, 8 * full.peak_elements)
    assert run_peak <= 8 * run_only.peak_elements, (run_peak, 8 * run_only.peak_elements)
    assert run_peak <= 8 * K * K / 10, run_peak  # at most 1/10 of one dense K x K array of doubles
    assert 8 * run_only.peak_elements <= 8 * run_peak, "the estimate should not be loose by more than 8x"


def test_run_cost_estimate_counts_the_products_and_is_linear():
    K, d, E, N = 1_000, 20, 5_000, 50
    fixed = estimate_run_cost(K, d, E, iterations=N)
    assert isinstance(fixed, RunCost) and fixed.work >= N * (2 * K * d * d + 2 * E * d) + K * d ** 3
    sac = estimate_run_cost(K, d, E, iterations=N, policy="sac", epochs=3)
    assert sac.work >= fixed.work + 3 * N * 8 * K * d * d and sac.peak_elements == fixed.peak_elements
    assert estimate_run_cost(K, d, E, iterations=N, policy="dpg", epochs=3).work == sac.work
    big = estimate_run_cost(10 * K, d, 10 * E, iterations=N)
    assert 9.99 * fixed.work <= big.work <= 10.01 * fixed.work and big.peak_elements <= 10 * fixed.peak_elements
    two = estimate_run_cost(K, d, E, iterations=N, runs=2, D_max=30)
    assert two.peak_elements == 2 * estimate_run_cost(K, d, E, iterations=N, D_max=30).peak_elements


@pytest.mark.parametrize(("args", "kwargs", "needle"), [
    ((3, 5, 4), {"iterations": 10}, "n_edges must be an integer in \\[0, K\\(K - 1\\)/2\\] = \\[0, 3\\], got 4"),
    ((3, 5, -1), {"iterations": 10}, "n_edges must be an integer in"),
    ((1, 5, 0), {"iterations": 10}, "K must be an integer >= 2, got 1"),
    ((3, 0, 2), {"iterations": 10}, "d must be an integer >= 1, got 0"),
    ((3, 5, 2), {"iterations": 0}, "iterations must be an integer >= 1, got 0"),
    ((3, 5, 2), {"iterations": 1, "runs": True}, "runs must be an integer >= 1, got True"),
    ((3, 5, 2), {"iterations": 1, "policy": "ppo"}, "policy must be one of fixed, dpg, sac, got 'ppo'"),
    ((3, 5, 2), {"iterations": 1, "epochs": 0}, "epochs must be an integer >= 1, got 0"),
    ((3, 5, 2), {"iterations": 1, "D_max": -1}, "D_max must be an integer >= 0, got -1"),
])
def test_run_cost_estimate_refuses_bad_sizes_by_name(args, kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        estimate_run_cost(*args, **kwargs)
    with pytest.raises(ValueError, match="peak_elements must be an integer >= 0"):
        RunCost(work=1.0, peak_elements=-1)
