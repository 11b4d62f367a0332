"""Reference PAO-Fed: extended-state recursion (docs/papers/paofed.md#extended-state, docs/papers/paofed.md#erratum-e2),
delivery, schedules, accounting, baselines."""

import numpy as np
import pytest

from reference_impl.paofed import (
    ALGORITHMS,
    AlgorithmConfig,
    AsyncEnvironment,
    LinearData,
    algorithm_config,
    circshift_window,
    draw_selection,
    experiment_environment,
    faithful_setup,
    run_analysis_model,
    run_faithful,
    run_paofed,
    staleness_weights,
    time_average,
)
from reference_impl.paofed.simulation import (
    _aggregate_partial,  # the aggregation rule of P8, tested directly
)
from theory.msd.instance import (
    PAOFedInstance,
    reference_instance,
    selection_second_moment,
)

EPS = np.finfo(float).eps


def _small_instance(K=3, D=4, l_max=2, m=2, law="subset", delta=0.5, p=(0.9, 0.6, 0.4), mu=0.2):
    rng = np.random.default_rng(11)
    A = rng.standard_normal((K, D, D))
    R = A @ np.swapaxes(A, 1, 2) / D + 0.1 * np.eye(D)
    return PAOFedInstance(K=K, D=D, l_max=l_max, m=m, selection=law, p=np.array(p), delta=delta,
                          alpha=np.array([1.0, 0.5, 0.25][: l_max + 1]), sigma2_eta=np.full(K, 0.01), R=R,
                          w_star=rng.standard_normal(D), mu=mu)


def _record(instance, iterations, seed=0, env=None, config=None):
    steps = []
    env_, config_, data = faithful_setup(instance)
    run = run_paofed(env or env_, config or config_, data, iterations, np.random.default_rng(seed), runs=1,
                     observe=steps.append)
    return run, steps


def _extended_recursion(instance, steps, layout):
    """Iterate w_{e,n+1} = B_{e,n}(A_{e,n} w_{e,n} + mu Z_{e,n} e_n) with the recorded draws.

    ``corrected``: docs/papers/paofed.md#extended-state (N_b = 1 + K(l_max+1), block iota(l,k) = w_{k,n+1-l} for l >= 1,
    first block row [B_n, B_0, B_1, ..., B_lmax]). ``literal``: seed (4.15)/(4.21) (N_b = 1 + K(l_max+2), first block
    row [B_n, B_0, 0, B_1, ..., B_lmax]).
    Returns the server block after every iteration, (iterations, D).
    """
    K, D, L, mu = instance.K, instance.D, instance.l_max, instance.mu
    groups = L + 1 if layout == "corrected" else L + 2
    Nb = 1 + K * groups
    N = Nb * D
    blk = lambda i: slice(i * D, (i + 1) * D)  # noqa: E731
    iota = lambda g, k: 1 + g * K + k          # noqa: E731  (k = 0..K-1)
    # the server block of group l: corrected -> group l; literal -> l = 0: group 0, l >= 1: group l + 1
    src_group = (lambda ell: ell) if layout == "corrected" else (lambda ell: 0 if ell == 0 else ell + 1)
    eye_d = np.eye(D)
    we = np.zeros(N)
    out = []
    for rec in steps:
        A = np.eye(N)
        Z = np.zeros((N, K))
        for k in range(K):
            aM = np.diag(rec.participants[0, k] * rec.M[0, k].astype(float))
            i = iota(0, k)
            A[blk(i), blk(0)] = aM
            A[blk(i), blk(i)] = eye_d - aM
            Z[blk(i), k] = rec.z[0, k]
        e = rec.y[0] - Z.T @ A @ we
        B = np.zeros((N, N))
        B[blk(0), blk(0)] = eye_d
        r, ks, ages = rec.delivered
        sizes = np.bincount(ages, minlength=L + 1)
        for k, ell in zip(ks, ages, strict=True):
            S = np.diag(steps[rec.n - ell].S[0, k].astype(float))
            beta = instance.alpha[ell] / sizes[ell]
            B[blk(0), blk(0)] -= beta * S
            B[blk(0), blk(iota(src_group(ell), k))] += beta * S
        for k in range(K):
            B[blk(iota(0, k)), blk(iota(0, k))] = eye_d
            for g in range(1, groups):
                B[blk(iota(g, k)), blk(iota(g - 1, k))] = eye_d
        we = B @ (A @ we + mu * Z @ e)
        out.append(we[:D].copy())
    return np.array(out)


@pytest.mark.parametrize("law", ["subset", "window", "bernoulli"])
def test_corrected_extended_state_equals_the_algorithm_and_the_literal_layout_does_not(law):
    """docs/papers/paofed.md#extended-state: the matrix recursion with the corrected layout reproduces P1-P8 (<= 1e-12,
    60 iterations); the literal seed layout (4.15)/(4.21) feeds w_{k,n-l} instead of w_{k,n+1-l} and differs by O(1)
    (erratum E2, docs/papers/paofed.md#erratum-e2)."""
    instance = _small_instance(law=law)
    run, steps = _record(instance, 60, seed=3)
    server = np.array([s.w_after[0] for s in steps])
    # not vacuous: > 40 deliveries in 60 iterations, some of them delayed by 2
    assert sum(len(s.delivered[0]) for s in steps) > 40 and any(np.any(s.delivered[2] > 0) for s in steps)
    corrected = _extended_recursion(instance, steps, "corrected")
    scale = max(1.0, np.max(np.abs(server)))
    assert np.max(np.abs(corrected - server)) <= 1e-12 * scale  # docs/papers/paofed.md#extended-state's tolerance
    # (docstring)
    literal = _extended_recursion(instance, steps, "literal")
    assert np.max(np.abs(literal - server)) > 1e-2 * scale  # O(1) apart (erratum E2, docs/papers/paofed.md#erratum-e2);
    # 1e-2 is far above rounding


def test_local_blocks_of_the_extended_state_match_the_clients():
    instance = _small_instance(law="window")
    _, steps = _record(instance, 5, seed=1)
    # The local models after the step equal the A-update plus mu z e for every client (P3/P4, all have data).
    prev = np.zeros((instance.K, instance.D))
    w = np.zeros(instance.D)
    for rec in steps:
        M = rec.M[0].astype(float)
        a = rec.participants[0][:, None]
        start = a * (M * w + (1 - M) * prev) + (1 - a) * prev
        e = rec.y[0] - np.sum(start * rec.z[0], axis=1)
        expected = start + instance.mu * rec.z[0] * e[:, None]
        # the same few operations in another order: a few ulps of the models' scale
        assert np.max(np.abs(rec.w_clients_after[0] - expected)) <= 1e-14 * max(1.0, np.max(np.abs(expected)))
        prev, w = rec.w_clients_after[0], rec.w_after[0]


def test_every_message_is_delivered_exactly_once_at_its_arrival_time():
    env = AsyncEnvironment(K=5, D=3, p=np.array([1.0, 0.7, 0.5, 0.3, 0.9]), delta=0.6, l_max=3)
    data = LinearData(R=np.tile(np.eye(3), (5, 1, 1)), w_star=np.ones(3), sigma2_eta=np.full(5, 0.01))
    steps = []
    N = 200  # iterations: long enough for every delay up to l_max = 3 to occur and be delivered
    run = run_paofed(env, algorithm_config("paofed-u1", m=1, mu=0.1), data, N, np.random.default_rng(4), runs=3,
                     observe=steps.append)
    sent, delivered = {}, []
    for rec in steps:
        for r, k in zip(*np.nonzero(rec.arrival_time >= 0), strict=True):
            sent[(r, k, rec.n)] = rec.arrival_time[r, k]
        for r, k, age in zip(*rec.delivered, strict=True):
            delivered.append((r, k, rec.n - age))
            assert sent[(r, k, rec.n - age)] == rec.n            # arrives exactly at n + L
    assert len(delivered) == len(set(delivered))                 # never twice
    due = {key for key, t in sent.items() if t < N}
    assert set(delivered) == due                                 # every message due before the end arrives
    assert int(run.communication.delivered.sum()) == len(delivered)
    # discarded messages (delay > l_max) are counted but never delivered
    n_sent = sum(int(np.sum(rec.participants)) for rec in steps)
    assert int(run.communication.messages.sum()) == n_sent
    assert int(run.communication.discarded.sum()) == n_sent - len(sent)


def test_delay_law_is_geometric():
    """P(L = l) = (1 - delta) delta^l (docs/papers/paofed.md#choice-delay-law), each frequency within 5 binomial
    standard errors."""
    env = AsyncEnvironment(K=50, D=2, p=np.ones(50), delta=0.3, l_max=6)
    steps = []
    data = LinearData(R=np.tile(np.eye(2), (50, 1, 1)), w_star=np.ones(2), sigma2_eta=np.zeros(50))
    run_paofed(env, algorithm_config("paofed-u1", m=1), data, 200, np.random.default_rng(0), runs=4,
               observe=steps.append)
    delays = np.concatenate([rec.delays.ravel() for rec in steps])
    n = delays.size
    for ell in range(4):
        p = 0.7 * 0.3**ell
        assert abs(np.mean(delays == ell) - p) <= 5 * np.sqrt(p * (1 - p) / n)  # 5 standard errors: false alarm < 1e-6
    np.testing.assert_allclose(env.delay_pmf()[:3], [0.7, 0.21, 0.063])


def test_straggler_delays_take_multiples_of_ten_with_a_capped_tail():
    env = AsyncEnvironment(K=40, D=2, p=np.ones(40), delta=0.4, l_max=60, delay_step=10, delay_tail="cap")
    pmf = env.delay_pmf()
    # delays 0, 10, ..., 60 (7 values); the capped tail P(delay >= 60) = delta^6
    assert np.isclose(pmf.sum(), 1.0) and np.isclose(pmf[60], 0.4**6) and np.count_nonzero(pmf) == 7
    steps = []
    data = LinearData(R=np.tile(np.eye(2), (40, 1, 1)), w_star=np.ones(2), sigma2_eta=np.zeros(40))
    run_paofed(env, algorithm_config("paofed-c2", m=1), data, 50, np.random.default_rng(0), runs=2,
               observe=steps.append)
    delays = np.concatenate([rec.delays.ravel() for rec in steps])
    assert set(np.unique(delays)) <= set(range(0, 61, 10)) and np.any(delays == 60)


def test_circshift_schedules_of_the_variants():
    """docs/papers/paofed.md#partial-sharing: uncoordinated M_{k,n} = window at m(n + k); coordinated at m(n + 1); S =
    M_{n+1} (*1, *2) or M_n (*0)."""
    K, D, m = 3, 10, 2
    env = AsyncEnvironment(K=K, D=D, p=np.ones(K), delta=0.0, l_max=0)
    data = LinearData(R=np.tile(np.eye(D), (K, 1, 1)), w_star=np.ones(D), sigma2_eta=np.zeros(K))
    for name in ("paofed-u1", "paofed-c1", "paofed-u0", "paofed-c0"):
        steps = []
        run_paofed(env, algorithm_config(name, m=m, mu=0.1), data, 7, np.random.default_rng(0), observe=steps.append)
        for rec in steps:
            n = rec.n
            starts = m * (n + 1) * np.ones(K, int) if name[-2] == "c" else m * (n + np.arange(1, K + 1))
            np.testing.assert_array_equal(rec.M[0], circshift_window(D, m, starts % D))
            shift = m if name[-1] == "1" else 0
            np.testing.assert_array_equal(rec.S[0], circshift_window(D, m, (starts + shift) % D))
    # S_{k,n} = M_{k,n+1}: the uplink window of iteration n is the downlink window of n + 1
    np.testing.assert_array_equal(circshift_window(D, m, np.array([m * 4])),
                                  np.roll(circshift_window(D, m, np.array([m * 3])), m))


def test_random_selection_laws_have_density_m_over_D_and_the_instance_second_moment():
    rng = np.random.default_rng(0)
    for law in ("subset", "window", "bernoulli"):
        masks = draw_selection(rng, law, 5, 2, (40000,)).astype(float)  # 4e4 draws: standard error <= 2.5e-3
        if law != "bernoulli":
            assert np.all(masks.sum(axis=1) == 2)
        Pi = masks.T @ masks / masks.shape[0]
        # 5 standard errors of a Bernoulli mean (variance <= 1/4)
        assert np.max(np.abs(Pi - selection_second_moment(5, 2, law))) <= 5 * np.sqrt(0.25 / masks.shape[0])


def test_communication_accounting():
    """docs/papers/paofed.md#partial-sharing: m parameters per direction per exchanging client for PAO-Fed, D for
    Online-Fed."""
    env = experiment_environment(K=16, D=200)
    data = LinearData(R=np.tile(np.eye(200) / 200, (16, 1, 1)), w_star=np.zeros(200), sigma2_eta=np.zeros(16))
    results = {name: run_paofed(env, algorithm_config(name), data, 40, np.random.default_rng(5), runs=2).communication
               for name in ALGORITHMS}
    for name in ("paofed-u1", "paofed-c0", "paofed-u2"):
        c = results[name]
        assert c.messages.sum() > 0
        np.testing.assert_array_equal(c.uplink_params, 4 * c.messages)
        np.testing.assert_array_equal(c.downlink_params, 4 * c.messages)
        # m = 4 of D = 200 parameters each way; 4 x 32 bits = 128 per message
        assert c.savings(200) == (1 - 4 / 200, 1 - 4 / 200) and c.load_bits() == 128.0
    assert results["pso-fed"].savings(200) == (1 - 8 / 200, 1 - 8 / 200)  # PSO-Fed: m = 8 (setup.PSO_FED_M)
    for name in ("online-fed", "online-fedsgd"):
        assert results[name].savings(200) == (0.0, 0.0) and results[name].load_bits() == 6400.0  # all 200 x 32 bits
    sign = results["signsgd"]
    np.testing.assert_array_equal(sign.uplink_bits, 200 * sign.messages)
    np.testing.assert_array_equal(sign.downlink_bits, 6400 * sign.messages)
    # the same behaviour is shared by algorithms contacting every available client (common random numbers)
    assert np.array_equal(results["paofed-u1"].messages, results["online-fedsgd"].messages)
    assert results["online-fed"].messages.sum() < results["online-fedsgd"].messages.sum()


def test_bernoulli_selection_counts_the_actual_number_of_entries():
    instance = _small_instance(law="bernoulli", D=6, m=3)
    steps = []
    run = run_faithful(instance, 30, np.random.default_rng(2), runs=2, observe=steps.append)
    up = sum(np.sum(rec.participants * rec.S.sum(axis=2), axis=1) for rec in steps)
    np.testing.assert_array_equal(run.communication.uplink_params, up)


def test_determinism_and_common_random_numbers():
    env = experiment_environment(K=16, D=20)
    data = LinearData(R=np.tile(np.eye(20) / 20, (16, 1, 1)), w_star=np.ones(20) / 4, sigma2_eta=np.full(16, 0.01))
    a = run_paofed(env, algorithm_config("paofed-u2"), data, 50, np.random.default_rng(9), runs=3)
    b = run_paofed(env, algorithm_config("paofed-u2"), data, 50, np.random.default_rng(9), runs=3)
    c = run_paofed(env, algorithm_config("paofed-u2"), data, 50, np.random.default_rng(10), runs=3)
    assert np.array_equal(a.curve, b.curve) and np.array_equal(a.w_clients, b.w_clients)
    assert not np.array_equal(a.curve, c.curve)
    s1, s2 = [], []
    run_paofed(env, algorithm_config("paofed-u1"), data, 20, np.random.default_rng(9), observe=s1.append)
    run_paofed(env, algorithm_config("signsgd"), data, 20, np.random.default_rng(9), observe=s2.append)
    for r1, r2 in zip(s1, s2, strict=True):
        assert np.array_equal(r1.has_data, r2.has_data) and np.array_equal(r1.participants, r2.participants)
        assert np.array_equal(r1.delays, r2.delays) and np.array_equal(r1.z, r2.z) and np.array_equal(r1.y, r2.y)


def test_autonomous_updates_and_idle_clients():
    """P1: no sample -> no change; P4: unavailable with a sample -> local LMS step; Online-Fed: no autonomous step."""
    env = AsyncEnvironment(K=6, D=4, p=np.full(6, 0.3), delta=0.2, l_max=2, data_rate=np.full(6, 0.5))
    data = LinearData(R=np.tile(np.eye(4), (6, 1, 1)), w_star=np.ones(4), sigma2_eta=np.full(6, 0.01))
    for name, autonomous in (("paofed-u1", True), ("online-fedsgd", False)):
        steps = []
        run_paofed(env, algorithm_config(name, m=2, mu=0.1), data, 30, np.random.default_rng(1), runs=2,
                   observe=steps.append)
        prev = np.zeros((2, 6, 4))
        for rec in steps:
            idle = ~rec.has_data
            assert np.array_equal(rec.w_clients_after[idle], prev[idle])
            lonely = rec.has_data & ~rec.participants
            e = rec.y - np.sum(prev * rec.z, axis=2)
            stepped = prev + 0.1 * rec.z * e[..., None]
            expected = stepped[lonely] if autonomous else prev[lonely]
            assert np.allclose(rec.w_clients_after[lonely], expected, rtol=0, atol=1e-14)  # one LMS step: a few ulps
            prev = rec.w_clients_after


def test_online_fedsgd_without_delays_averages_the_clients_lms_steps():
    env = AsyncEnvironment(K=4, D=3, p=np.ones(4), delta=0.0, l_max=0)
    data = LinearData(R=np.tile(np.eye(3), (4, 1, 1)), w_star=np.array([1.0, -1.0, 0.5]), sigma2_eta=np.full(4, 0.01))
    steps = []
    run_paofed(env, algorithm_config("online-fedsgd", mu=0.2), data, 10, np.random.default_rng(0), observe=steps.append)
    for rec in steps:
        w = rec.w_before[0]
        e = rec.y[0] - rec.z[0] @ w
        expected = np.mean(w + 0.2 * rec.z[0] * e[:, None], axis=0)
        assert np.allclose(rec.w_after[0], expected, rtol=0, atol=1e-14)  # same average, other order


def test_signsgd_majority_vote():
    env = AsyncEnvironment(K=5, D=3, p=np.ones(5), delta=0.0, l_max=0)
    data = LinearData(R=np.tile(np.eye(3), (5, 1, 1)), w_star=np.array([1.0, -1.0, 0.5]), sigma2_eta=np.zeros(5))
    steps = []
    run_paofed(env, algorithm_config("signsgd", sign_step=0.01), data, 5, np.random.default_rng(0),
               observe=steps.append)
    for rec in steps:
        w = rec.w_before[0]
        e = rec.y[0] - rec.z[0] @ w
        vote = np.sign(np.sum(np.sign(rec.z[0] * e[:, None]), axis=0))
        np.testing.assert_array_equal(rec.w_after[0], w + 0.01 * vote)


def test_overlap_rule_keeps_only_the_youngest_group_and_bounds_the_server_weight():
    """docs/papers/paofed.md#algorithm: without the rule a coordinate hit by several delay groups can get weight > 1
    (B_n < 0, erratum E10 (docs/papers/paofed.md#erratum-e10)); with most_recent every diagonal entry of B_n lies in [0,
    1]."""
    D = 3
    w = np.ones((1, D))
    r = np.zeros(3, dtype=int)
    ages = np.array([0, 1, 2])
    vals = np.zeros((3, D))
    masks = np.array([[1, 1, 0], [1, 0, 1], [1, 1, 1]], dtype=bool)
    alpha = np.ones(3)
    none = _aggregate_partial(w, r, ages, vals, masks, alpha, "none")[0]       # = diag(B_n) since vals = 0
    recent = _aggregate_partial(w, r, ages, vals, masks, alpha, "most_recent")[0]
    np.testing.assert_array_equal(none, [1 - 3, 1 - 2, 1 - 2])
    np.testing.assert_array_equal(recent, [0.0, 0.0, 0.0])
    masks = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1]], dtype=bool)
    recent = _aggregate_partial(w, r, ages, vals, masks, alpha * [1, 0.5, 0.25], "most_recent")[0]
    np.testing.assert_array_equal(recent, [0.0, 0.5, 0.75])


def test_full_downlink_replaces_the_local_model():
    env = AsyncEnvironment(K=3, D=6, p=np.ones(3), delta=0.0, l_max=0)
    data = LinearData(R=np.tile(np.eye(6), (3, 1, 1)), w_star=np.ones(6), sigma2_eta=np.zeros(3))
    steps = []
    run_paofed(env, algorithm_config("paofed-u1", m=2, full_downlink=True), data, 4, np.random.default_rng(0),
               observe=steps.append)
    assert all(rec.M.all() and np.all(rec.S.sum(axis=2) == 2) for rec in steps)


def test_staleness_weights_and_config_validation():
    assert staleness_weights(algorithm_config("paofed-u1"), 2).tolist() == [1.0, 1.0, 1.0]
    assert staleness_weights(AlgorithmConfig(name="x", mu=0.1, alpha=(1.0, 0.5)), 1).tolist() == [1.0, 0.5]
    with pytest.raises(ValueError, match="alpha must have l_max"):
        staleness_weights(AlgorithmConfig(name="x", mu=0.1, alpha=(1.0, 0.5)), 2)
    for kwargs, field in ((dict(mu=0.0), "mu"), (dict(mu=0.1, m=0), "m"), (dict(mu=0.1, schedule="random"), "schedule"),
                          (dict(mu=0.1, aggregation="average"), "aggregation"), (dict(mu=0.1, server_fraction=0.0),
                                                                                 "server_fraction"),
                          (dict(mu=0.1, overlap_rule="oldest"), "overlap_rule"), (dict(mu=0.1, alpha=(0.5,)), "alpha")):
        with pytest.raises(ValueError, match=field):
            AlgorithmConfig(name="x", **kwargs)
    with pytest.raises(ValueError, match="name must be one of"):
        algorithm_config("fedavg")
    with pytest.raises(ValueError, match="delta"):
        AsyncEnvironment(K=2, D=2, p=np.ones(2), delta=1.0, l_max=1)
    with pytest.raises(ValueError, match="p must"):
        AsyncEnvironment(K=2, D=2, p=np.ones(3), delta=0.1, l_max=1)
    env = AsyncEnvironment(K=2, D=3, p=np.ones(2), delta=0.1, l_max=1)
    data = LinearData(R=np.tile(np.eye(3), (2, 1, 1)), w_star=np.ones(3), sigma2_eta=np.zeros(2))
    with pytest.raises(ValueError, match="m must"):
        run_paofed(env, algorithm_config("paofed-u1", m=4), data, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="iterations"):
        run_paofed(env, algorithm_config("paofed-u1", m=1), data, 0, np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng"):
        run_paofed(env, algorithm_config("paofed-u1", m=1), data, 2, 0)


def test_sim_a_and_sim_f_agree_with_the_spec_regression_values():
    """docs/papers/paofed.md#instance-reference table at mu lambda_max = 0.2:
    SIM-A (docs/papers/paofed.md#choice-simulators) -26.735 dB, SIM-F (docs/papers/paofed.md#choice-simulators) -27.762
    dB (1000 runs x 6000 iterations).

    Labelled regression values (not certificates): with 150 runs x 600 iterations the time averages over the
    second half must lie within 0.5 dB of them (observed spread of such short runs: about 0.1 dB).
    """
    inst = reference_instance(0.2)
    a = run_analysis_model(inst, 600, np.random.default_rng(1), runs=150)
    f = run_faithful(inst, 600, np.random.default_rng(1), runs=150)
    sim_a = 10 * np.log10(time_average(a.msd, 300).mean())
    sim_f = 10 * np.log10(time_average(f.curve, 300).mean())
    assert abs(sim_a - (-26.735)) <= 0.5 and abs(sim_f - (-27.762)) <= 0.5


def test_analysis_model_pool_regressors_and_transient_start():
    inst = _small_instance(K=2, D=3, l_max=1, m=2, p=(0.8, 0.5))
    pool = np.random.default_rng(0).standard_normal((2, 50, 3))
    run = run_analysis_model(inst, 20, np.random.default_rng(0), runs=4, pool=pool)
    # 20 iterations + start, 4 runs
    assert run.msd.shape == (21, 4) and np.allclose(run.msd[0], inst.w_star @ inst.w_star)
    with pytest.raises(ValueError, match="pool"):
        run_analysis_model(inst, 5, np.random.default_rng(0), pool=pool[:, :, :2])
    with pytest.raises(ValueError, match="start"):
        time_average(run.msd, 21)


def test_doctests_of_the_paofed_modules():
    import doctest

    import reference_impl.paofed.data
    from reference_impl.paofed import analysis, selection, setup, simulation

    results = [doctest.testmod(m, optionflags=doctest.ELLIPSIS)
               for m in (setup, selection, simulation, analysis, reference_impl.paofed.data)]
    assert all(r.failed == 0 for r in results) and sum(r.attempted for r in results) > 0


@pytest.mark.parametrize("runs", [1, 2])  # one run (the experiments' fast paths) and a batch of runs
def test_lockstep_arms_equal_separate_runs_bit_for_bit(runs):
    """run_paofed_arms draws the environment and data once for all algorithms; each result is run_paofed's."""
    from reference_impl.paofed.data import SyntheticRFFData
    from reference_impl.paofed.simulation import run_paofed_arms

    env = experiment_environment(K=8, D=12, delta=0.5, l_max=3)   # small, with delays and discarded messages
    data = SyntheticRFFData(K=8, D=12, test_size=20)
    configs = [algorithm_config("paofed-u1", m=2), algorithm_config("paofed-c2", m=3), algorithm_config("pso-fed", m=2),
               algorithm_config("online-fed", server_fraction=0.5), algorithm_config("signsgd", sign_noise=0.5),
               AlgorithmConfig(name="subset", mu=0.3, m=3, schedule="subset", overlap_rule="most_recent")]
    together = run_paofed_arms(env, configs, data, 40, np.random.default_rng(4), runs=runs)  # 40: every slot used
    for config, run in zip(configs, together, strict=True):
        alone = run_paofed(env, config, data, 40, np.random.default_rng(4), runs=runs)
        assert np.array_equal(alone.curve, run.curve) and np.array_equal(alone.w_clients, run.w_clients)
        assert np.array_equal(alone.communication.uplink_bits, run.communication.uplink_bits)
    with pytest.raises(ValueError, match="configs"):
        run_paofed_arms(env, [], data, 5, np.random.default_rng(4))


def test_reduction_along_rows_adds_them_in_order_as_add_at_does():
    """The one-run server aggregation sums the delivered messages with np.add.reduce along the rows of [w; rows]
    instead of np.add.at: numpy accumulates a reduction over the outer axis row after row, so the two agree bit for
    bit (rows of mixed magnitude and sign, where another order would round differently)."""
    rng = np.random.default_rng(2)
    rows = rng.standard_normal((300, 50)) * 10.0 ** rng.integers(-8, 8, size=(300, 1))  # 300 messages, 16 decades
    rows *= rng.random((300, 50)) < 0.5  # masked entries contribute exact zeros, as in the aggregation
    w = rng.standard_normal((1, 50))
    expected = w.copy()
    np.add.at(expected, np.zeros(300, dtype=np.intp), rows)
    assert np.array_equal(np.add.reduce(np.concatenate([w, rows]), axis=0, keepdims=True), expected)
    assert not np.array_equal(np.add.reduce(np.concatenate([w, rows[::-1]]), axis=0, keepdims=True), expected)


def test_a_curve_recorded_at_some_iterations_is_the_full_curve_there_and_nan_elsewhere():
    """``record`` only skips the metric: the recorded points, the models and the counts are those of a full run."""
    from reference_impl.paofed.data import SyntheticRFFData
    from reference_impl.paofed.simulation import run_paofed_arms

    env = experiment_environment(K=8, D=12, delta=0.5, l_max=3)   # small, with delays
    data = SyntheticRFFData(K=8, D=12, test_size=20)
    configs = [algorithm_config("paofed-u1", m=2), algorithm_config("online-fed", server_fraction=0.5)]
    record = np.zeros(31, dtype=bool)  # 30 iterations: w_0 .. w_30
    record[::4] = record[25:] = True   # every 4th point and a final window
    full = run_paofed_arms(env, configs, data, 30, np.random.default_rng(4))
    part = run_paofed_arms(env, configs, data, 30, np.random.default_rng(4), record=record)
    for a, b in zip(full, part, strict=True):
        assert np.array_equal(a.curve[record], b.curve[record]) and np.all(np.isnan(b.curve[~record]))
        assert np.array_equal(a.w_clients, b.w_clients) and np.array_equal(a.w, b.w)
        assert np.array_equal(a.communication.delivered, b.communication.delivered)
    with pytest.raises(ValueError, match="record"):
        run_paofed_arms(env, configs, data, 30, np.random.default_rng(4), record=record[:-1])


def test_one_run_aggregation_equals_the_batched_rule_bit_for_bit():
    """The one-run aggregation (no run index) is the general rule's row of that run: the same operations."""
    rng = np.random.default_rng(6)
    G, D, A = 4, 10, 9  # slots, entries, delivered messages (several per age)
    alpha = 0.2 ** np.arange(G)
    ages = rng.integers(G, size=A)
    vals = rng.standard_normal((A, D))
    masks = rng.random((A, D)) < 0.5
    w = rng.standard_normal((2, D))
    one = _aggregate_partial(w[:1], np.zeros(A, dtype=np.intp), ages, vals, masks, alpha, "none")
    both = _aggregate_partial(w, np.zeros(A, dtype=np.intp), ages, vals, masks, alpha, "none")
    assert np.array_equal(one[0], both[0]) and np.array_equal(both[1], w[1])
