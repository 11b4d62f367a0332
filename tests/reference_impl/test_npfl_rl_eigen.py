"""The fast paths of reference_impl.npfl_rl.run_npfl against the direct products they replace.

SAC evaluates the primal map in the eigenbasis of H_k (reference_impl.npfl_rl.eigen); DPG reuses w^(n-1) as the first
inner step's P(tau^(n-1)); fixed tau (NPFL, NFL) applies the shifted inverse formed once. The reference below is the
loop run_npfl ran before (every evaluation through primal_at / validation_value / value_derivative).
"""

import numpy as np
import pytest

from reference_impl.npfl_rl import NPFLConfig, run_npfl
from reference_impl.npfl_rl.controllers import dpg_step, sac_step
from reference_impl.npfl_rl.data import synthetic_problem
from reference_impl.npfl_rl.eigen import _values as eigen_values
from reference_impl.npfl_rl.eigen import (
    eigen_primal,
    eigen_sac_step,
    eigen_state,
    eigen_validation,
    from_eigen,
    shifted_inverse,
)
from reference_impl.npfl_rl.primal import build_structure, graph_product, primal_at, validation_value

EPS = np.finfo(np.float64).eps
SMALL = dict(K=12, d=8, D_range=(3, 10), mean_degree=4.0)


def _problems(n=3, seed=11, **sizes):
    return [synthetic_problem(np.random.default_rng([seed, i]), **(sizes or SMALL))[0] for i in range(n)]


def _reference_run(problems, config, iterations, rngs):
    """run_npfl's former loop (projection on, literal or online timing, corrected dual sign): tau (R, N+1, K) and
    w^(N)."""
    S = build_structure(tuple(problems), config)
    R, K, d = S.b.shape
    w, gamma = np.zeros((R, K, d)), np.zeros((R, K, d))
    tau = np.full((R, K), 0.0 if config.algorithm == "nfl" else config.tau0)
    taus = [tau]
    lo, hi = 0.0, config.tau_max
    prev_map = None
    nb_in = graph_product(S.A_in, w)
    for n in range(1, iterations + 1):
        m = graph_product(S.B, w)
        s = 0.5 * config.rho * (S.deg_in[..., None] * w + nb_in) - 0.5 * gamma
        if config.policy != "fixed" and n > 1:
            mm, ss = prev_map if config.timing == "literal" else (m, s)
            t = tau
            for _ in range(config.epochs):
                if config.policy == "dpg":
                    dt = dpg_step(S, mm, ss, t, config.delta)
                else:
                    alpha = np.stack([g.uniform(-config.nu / 2.0, config.nu / 2.0, size=K) for g in rngs])
                    a = np.clip(t + alpha, lo, hi) if config.clip_candidates else t + alpha
                    dt = sac_step(S, mm, ss, t, a - t, config.delta)
                t = np.clip(t + dt, lo, hi)
            tau = t
        prev_map = (m, s)
        w_new = primal_at(S, m, s, tau)
        nb_in = graph_product(S.A_in, w_new)
        gamma = gamma + config.rho * (S.deg_in[..., None] * w_new - nb_in)
        w = w_new
        taus.append(tau)
    return np.stack(taus, axis=1), w


def _random_state(problems, config, seed=0):
    S = build_structure(tuple(problems), config)
    rng = np.random.default_rng(seed)
    m, s = rng.normal(size=(2,) + S.b.shape)
    return S, m, s, rng.uniform(0.0, 0.5, size=S.c.shape)


def test_eigen_primal_and_values_equal_the_direct_products_to_rounding():
    problems = _problems()
    S, m, s, a = _random_state(problems, NPFLConfig(policy="sac"))
    E = eigen_state(S, m, s)
    direct = primal_at(S, m, s, a)
    fast = from_eigen(S, eigen_primal(S, E, a))
    scale = np.max(np.abs(direct))
    assert np.max(np.abs(fast - direct)) <= 64 * problems[0].d * EPS * scale
    V = eigen_validation(S)
    coefs = np.stack([eigen_primal(S, E, a), eigen_primal(S, E, 0.5 * a)], axis=-1)
    values = eigen_values(S, V, coefs)
    expected = np.stack([validation_value(S, direct), validation_value(S, primal_at(S, m, s, 0.5 * a))], axis=-1)
    # V_v is a quadratic form: its rounding scales with the terms summed, not with the (possibly cancelling) value.
    terms = np.einsum("rki,rkij,rkj->rk", direct, np.abs(S.Hv), direct) + np.abs(S.cv)
    assert np.all(np.abs(values - expected) <= 256 * problems[0].d * EPS * terms[..., None])


def test_eigen_sac_step_takes_the_direct_step_where_the_comparison_is_not_a_rounding_tie():
    problems = _problems()
    S, m, s, t = _random_state(problems, NPFLConfig(policy="sac"), seed=1)
    alpha = np.random.default_rng(2).uniform(-0.025, 0.025, size=t.shape)
    alpha[0, 0] = 0.0  # a zero draw (a clipped candidate) is no step on either path
    direct = sac_step(S, m, s, t, alpha, 0.1)
    fast = eigen_sac_step(S, eigen_validation(S), eigen_state(S, m, s), t, alpha, 0.1)
    assert fast[0, 0] == 0.0 and direct[0, 0] == 0.0
    assert np.array_equal(fast, direct)


@pytest.mark.parametrize("timing", ["literal", "online"])
@pytest.mark.parametrize("epochs", [1, 3])
def test_dpg_runs_are_bit_for_bit_the_former_loop(timing, epochs):
    problems = _problems()
    config = NPFLConfig(policy="dpg", delta=0.003, epochs=epochs, timing=timing)
    run = run_npfl(problems, config, 60)
    tau, w = _reference_run(problems, config, 60, None)
    assert np.array_equal(run.tau, tau)
    assert np.array_equal(run.w, w)


@pytest.mark.parametrize("timing", ["literal", "online"])
@pytest.mark.parametrize("epochs", [1, 3])
def test_sac_runs_take_the_former_loops_steps_and_iterates_to_rounding(timing, epochs):
    problems = _problems()
    config = NPFLConfig(policy="sac", delta=0.1, nu=0.05, epochs=epochs, clip_candidates=True, timing=timing)
    rngs = [np.random.default_rng([5, i]) for i in range(len(problems))]
    run = run_npfl(problems, config, 60, rngs)
    tau, w = _reference_run(problems, config, 60, [np.random.default_rng([5, i]) for i in range(len(problems))])
    assert np.array_equal(run.tau, tau)  # every sign of (6.14) the same
    assert np.max(np.abs(run.w - w)) <= 1e3 * EPS * np.max(np.abs(w))


def test_sac_fast_path_is_invariant_to_the_batch():
    """Replicate r's run does not depend on the other runs of its batch (common random numbers across chunks)."""
    problems = _problems(n=3)
    config = NPFLConfig(policy="sac", delta=0.1, epochs=3, clip_candidates=True)
    batch = run_npfl(problems, config, 40, [np.random.default_rng([7, i]) for i in range(3)])
    for i, p in enumerate(problems):
        single = run_npfl(p, config, 40, [np.random.default_rng([7, i])])
        assert np.array_equal(single.tau[0], batch.tau[i])
        assert np.max(np.abs(single.w[0] - batch.w[i])) <= 1e3 * EPS * np.max(np.abs(batch.w[i]))


@pytest.mark.parametrize("config", [NPFLConfig(tau0=0.0), NPFLConfig(tau0=0.2), NPFLConfig(algorithm="nfl")],
                         ids=["tau0", "tau0.2", "nfl"])
def test_fixed_tau_runs_equal_the_former_loop_to_rounding(config):
    problems = _problems()
    run = run_npfl(problems, config, 80)
    tau, w = _reference_run(problems, config, 80, None)
    assert np.array_equal(run.tau, tau)
    assert np.max(np.abs(run.w - w)) <= 1e3 * EPS * np.max(np.abs(w))


def test_shifted_inverse_inverts_the_shifted_matrix():
    problems = _problems()
    S, _, _, a = _random_state(problems, NPFLConfig())
    inverse = shifted_inverse(S, a)
    H = np.stack([p.H for p in problems]) + (S.c + S.omega * a)[..., None, None] * np.eye(problems[0].d)
    residual = inverse @ H - np.eye(problems[0].d)
    assert np.max(np.abs(residual)) <= 64 * problems[0].d * EPS * np.max(np.linalg.cond(H))


def test_eigendecomposition_is_cached_per_instance_and_equals_a_batched_eigh():
    problems = _problems()
    Lam, U = np.linalg.eigh(np.stack([p.H for p in problems]))
    for i, p in enumerate(problems):
        assert p.H_eigen is p.H_eigen
        assert np.array_equal(p.H_eigen[0], np.maximum(Lam[i], 0.0)) and np.array_equal(p.H_eigen[1], U[i])
        assert not p.H_eigen[1].flags.writeable
