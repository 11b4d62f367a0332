"""Unit tests of reference_impl.fedpdm: validation, gradients, the measure (21), sampling, noise, baselines, data."""

import math

import numpy as np
import pytest

from reference_impl import fedpdm as fp
from theory.privacy.sensitivity import sensitivity_fedpdm
from theory.privacy.subsampled import rdp_poisson_subsampled_gaussian, rdp_to_approx_dp


def _nc(beta=0.1, seed=0):
    return fp.instance_nc(np.random.default_rng(seed), beta=beta)


def _config(**kw):
    base = dict(K=5, rounds=5, batch_size=10, rho=10.0, eta0=0.08, eta_schedule="constant", nu=1e-3, Q_max=5)
    return fp.FedPDMConfig(**{**base, **kw})


@pytest.mark.parametrize(("field", "value", "needle"), [
    ("K", 0, "K must be an integer >= 1"), ("rho", -1.0, "rho must be a finite real in (0.0"),
    ("eta_schedule", "cosine", "eta_schedule must be one of"),
    ("delta", 1.0, "delta must be a finite real in (0.0, 1.0)"),
    ("noise", "laplace", "noise must be one of"), ("local_start", "cold", "local_start must be one of"),
    ("G", 0.0, "G must be a finite real in (0.0"), ("nu", float("nan"), "nu must be a finite real")])
def test_config_rejects_bad_fields_by_name(field, value, needle):
    with pytest.raises(ValueError, match=None) as err:
        _config(**{field: value})
    assert needle in str(err.value)


def test_config_checks_against_the_problem():
    problem = _nc()
    with pytest.raises(ValueError, match="Q_max \\* batch_size must be <= \\|D_i\\| = 60"):
        _config(Q_max=7).validate_for(problem)
    with pytest.raises(ValueError, match="K must be an integer \\[1, 10\\]"):
        _config(K=11).validate_for(problem)
    _config(Q_max=7, batch_rule="fresh").validate_for(problem)


def test_problem_validation_and_readonly():
    with pytest.raises(ValueError, match="labels must be integers in \\[0, 0\\]"):
        fp.FedPDMProblem(features=np.ones((2, 3, 4)), labels=np.ones((2, 3), dtype=int), n_classes=1, beta=0, gamma=0)
    with pytest.raises(ValueError, match="beta must be a finite real"):
        fp.FedPDMProblem(features=np.ones((2, 3, 4)), labels=np.zeros((2, 3), dtype=int), n_classes=1, beta=-1, gamma=0)
    p = _nc()
    assert not p.features.flags.writeable and not p.labels.flags.writeable


@pytest.mark.parametrize("n_classes", [1, 4])
def test_gradient_matches_central_differences(n_classes):
    rng = np.random.default_rng(3)
    feats = rng.uniform(0, 1, (3, 7, 5))
    labels = rng.integers(0, n_classes, (3, 7))
    problem = fp.FedPDMProblem(features=feats, labels=labels, n_classes=n_classes, beta=0.3, gamma=0.0)
    x = rng.standard_normal((1, 3, problem.d))
    grad = fp.client_gradients(problem, x)
    h = 1e-6
    for j in range(problem.d):
        e = np.zeros(problem.d)
        e[j] = h
        fd = (fp.client_losses(problem, x + e) - fp.client_losses(problem, x - e)) / (2 * h)
        np.testing.assert_allclose(grad[..., j], fd, rtol=1e-6, atol=1e-8)


def test_certified_constants_bound_the_observed_ones():
    rng = np.random.default_rng(4)
    problem = _nc()
    G, L = fp.certified_G(problem), problem.L_smooth
    x = 3.0 * rng.standard_normal((50, problem.N, problem.d))
    idx = rng.integers(0, problem.n, (50, problem.N, 10))
    a = np.take_along_axis(np.broadcast_to(problem.features, (50, *problem.features.shape)), idx[..., None], axis=2)
    lab = np.take_along_axis(np.broadcast_to(problem.labels, (50, *problem.labels.shape)), idx, axis=2)
    assert np.linalg.norm(fp.batch_gradient(problem, x, a, lab), axis=-1).max() <= G
    y = x + 0.01 * rng.standard_normal(x.shape)
    ratio = (np.linalg.norm(fp.client_gradients(problem, x) - fp.client_gradients(problem, y), axis=-1)
             / np.linalg.norm(x - y, axis=-1))
    assert ratio.max() <= L
    assert 2.0 * math.sqrt(5.0) - 4.0 < 1.0 and 4 * L < 10.0  # docs/papers/fedpdm.md#instance-nc: declared L = 1 is
    # valid, rho = 10 > 4L


def test_stationarity_is_zero_at_an_exact_point_and_lagrangian_matches():
    problem = _nc(beta=0.0)
    x0 = np.zeros((1, problem.d))
    x = np.repeat(x0[:, None], problem.N, axis=1)
    lam = fp.client_gradients(problem, x)
    P = fp.stationarity_measure(problem, x, x0, lam, 10.0)
    assert P["x"][0] == 0 and P["lam"][0] == 0
    g0 = lam.mean(axis=1)[0]
    assert P["x0"][0] == pytest.approx(np.sum(np.maximum(np.abs(g0) - problem.gamma, 0) ** 2), rel=1e-12)
    assert fp.lagrangian(problem, x, x0, lam, 10.0)[0] == pytest.approx(math.log(2.0), rel=1e-14)
    assert fp.global_objective(problem, x0)[0] == pytest.approx(math.log(2.0), rel=1e-14)


def test_soft_threshold_exact_zeros():
    u = np.array([-0.3, -0.1, 0.0, 0.05, 0.2])
    out = fp.soft_threshold(u, 0.1)
    np.testing.assert_array_equal(out[1:4], 0.0)
    np.testing.assert_allclose(out[[0, 4]], [-0.2, 0.1], rtol=4e-16)


def test_participation_schedule_sizes_and_inclusion_rate():
    mask = fp.participation_schedule(100, 5, 300, np.random.default_rng(0), runs=20)
    assert mask.shape == (20, 300, 100) and np.all(mask[:, 0]) and np.all(mask[:, 1:].sum(-1) == 5)
    assert abs(mask[:, 1:].mean() - 0.05) < 0.002


def test_sensitivity_and_noise_follow_eq18_19():
    problem = _nc()
    config = _config(noise="dp", noise_Q="adaptive", epsilon=0.5)
    run = fp.run_fedpdm(problem, config, np.random.default_rng(0), keep_records=True)
    z = math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5
    assert run.z == pytest.approx(z, rel=1e-15)
    for rec in run.records:
        s = np.vectorize(lambda q: sensitivity_fedpdm(0.08, 10.0, int(q), run.G))(rec.Q)
        np.testing.assert_allclose(rec.sigma, z * s, rtol=1e-15)
    table = fp.sensitivity_table(0.08, 10.0, 5, 1.0)
    assert table[0] == 0 and table[3] == sensitivity_fedpdm(0.08, 10.0, 3, 1.0)


def test_same_seed_same_run_and_runs_are_independent():
    problem = _nc()
    config = _config(noise="fixed", sigma=0.1)
    a = fp.run_fedpdm(problem, config, np.random.default_rng(5), runs=3)
    b = fp.run_fedpdm(problem, config, np.random.default_rng(5), runs=3)
    np.testing.assert_array_equal(a.state.x0, b.state.x0)
    assert not np.allclose(a.state.x0[0], a.state.x0[1])


def test_target_total_eps_uses_the_realised_maximum_count():
    problem = _nc()
    config = _config(rounds=40, K=2, batch_size=6, Q_max=5, dp_calibration="target_total_eps", epsilon_total=3.0)
    run = fp.run_fedpdm(problem, config, np.random.default_rng(0))
    n_max = int(run.participation_counts.max())
    q = config.q(problem)
    orders = fp.ORDERS
    eps = rdp_to_approx_dp(n_max * rdp_poisson_subsampled_gaussian(q, run.z, orders), orders, 1e-5)[0]
    assert eps <= 3.0 and eps > 3.0 * (1 - 1e-6)
    assert n_max > 1 + (40 - 1) * 2 / 10  # the busiest client is above the expected count here


@pytest.mark.parametrize("name", ["fedavg", "fedprox", "scaffold"])
def test_baselines_run_and_lower_the_loss_without_noise(name):
    problem = fp.digits_problem(np.random.default_rng(0), N=10)
    config = _config(rounds=20, noise="none", eta0=0.1)
    run = fp.run_baseline(problem, config, fp.BaselineConfig(name=name, eta_cap=0.1), np.random.default_rng(0),
                          observers={"F": lambda s: fp.global_objective(problem, s.x0)})
    F = run.observations["F"][:, 0]
    assert F[-1] < 0.9 * F[0] and np.all(np.isfinite(F))


def test_baseline_validation():
    with pytest.raises(ValueError, match="name must be one of"):
        fp.BaselineConfig(name="fedsgd")
    with pytest.raises(ValueError, match="mu must be a finite real"):
        fp.BaselineConfig(name="fedprox", mu=-1.0)


def test_run_arm_on_digits_learns():
    problem = fp.digits_problem(np.random.default_rng(0), N=10)
    assert problem.d == 650 and problem.n_classes == 10
    config = fp.FedPDMConfig(K=5, rounds=30, batch_size=5, rho=10.0, eta0=0.05, eta_schedule="constant", nu=1e-2,
                             Q_max=5, noise="none")
    curve = fp.run_arm("fedpdm", problem, config, seed=1)
    assert curve.loss.shape == (31,) and curve.accuracy[-1] > 0.5 > curve.accuracy[0]
    assert fp.run_arm("fedavg", problem, config, seed=1).accuracy[-1] > 0.3
    with pytest.raises(ValueError, match="arm must be one of"):
        fp.run_arm("sgd", problem, config, seed=1)


def test_mnist_like_shape_and_npz_loader(tmp_path):
    p = fp.mnist_like_problem(np.random.default_rng(0), N=10, n_train=600, n_test=100)
    assert p.d == 7850 and p.n == 60 and p.features.shape[-1] == 785
    assert 0.7 < np.mean(p.features[..., :-1] == 0) < 0.9
    rng = np.random.default_rng(1)
    path = tmp_path / "mnist.npz"
    np.savez(path, x_train=rng.integers(0, 256, (40, 28, 28)), y_train=rng.integers(0, 10, 40),
             x_test=rng.integers(0, 256, (10, 28, 28)), y_test=rng.integers(0, 10, 10))
    q = fp.mnist_npz_problem(path, np.random.default_rng(0), N=4)
    assert q.features.shape == (4, 10, 785) and q.features.max() <= 1.0 and q.test_features.shape == (10, 785)


def test_history_sensitivity_model_scales_sigma_by_kappa():
    """sensitivity_model = 'history': sigma = z kappa_n s with kappa_n of the client's own
    participations (docs/papers/fedpdm.md#review-notes: 1.73 for eta = 0.02, Q = 5, rho = 10, warm start, in the
    limit)."""
    from theory.privacy.history import history_factors_fedpdm

    problem = _nc()
    config = _config(rounds=20, eta0=0.02, nu=0.0, sensitivity_model="history")
    run = fp.run_fedpdm(problem, config, np.random.default_rng(0))
    plain = fp.run_fedpdm(problem, fp.FedPDMConfig(**{**config.__dict__, "sensitivity_model": "eq19"}),
                          np.random.default_rng(0))
    busiest = int(np.argmax(run.participation_counts[0]))
    rounds = np.flatnonzero(run.participation[0, :, busiest])
    kappa = history_factors_fedpdm([0.02] * rounds.size, [5] * rounds.size, 10.0)
    np.testing.assert_allclose(run.sigma[0, rounds, busiest], kappa * plain.sigma[0, rounds, busiest], rtol=1e-15)
    assert 1.7 < kappa[-1] <= 1.74
    with pytest.raises(ValueError, match="sensitivity_model = 'history' needs noise_Q = 'cap'"):
        _config(sensitivity_model="history", noise_Q="adaptive")
    table = fp.history_factor_table(run.participation, [0.15] * 20, 1, 10.0, "warm")  # b = -0.5: grows, not capped
    assert table.max() > 1.366 ** (run.participation_counts.max() - 3)


def test_in_place_run_gives_the_same_numbers_and_leaves_the_callers_state():
    """``in_place`` only drops the per-round (R, N, d) copies: the same trajectory, and a given state is not written."""
    problem = _nc()
    config = _config(rounds=8, K=3, noise="fixed", sigma=0.1)
    state = fp.initial_state(problem, config, np.random.default_rng(1), 2)
    before = state.x.copy(), state.lam.copy()
    kw = dict(runs=2, state=state, observers={"x0": lambda s: s.x0.copy()})
    a = fp.run_fedpdm(problem, config, np.random.default_rng(5), **kw)
    b = fp.run_fedpdm(problem, config, np.random.default_rng(5), in_place=True, **kw)
    for field in ("x", "lam", "x0"):
        np.testing.assert_array_equal(getattr(a.state, field), getattr(b.state, field))
    np.testing.assert_array_equal(a.observations["x0"], b.observations["x0"])
    np.testing.assert_array_equal(state.x, before[0])
    np.testing.assert_array_equal(state.lam, before[1])


def test_objective_and_accuracy_by_one_gemm_match_the_per_client_and_model_products():
    """``one_gemm`` (every model's scores from one GEMM) gives F of (24) and the accuracy of several models as the
    default products per client and model do: to 4 ulps (the same products, BLAS's blocking aside), on 4 clients, on
    the same data pooled into one client (the experiments' evaluation) and on the binary instance NC."""
    problem = fp.mnist_like_problem(np.random.default_rng(2), N=4, n_train=200, n_test=50, side=6)
    pooled = fp.FedPDMProblem(features=problem.features.reshape(1, -1, problem.n_features),
                              labels=problem.labels.reshape(1, -1), n_classes=10, beta=problem.beta,
                              gamma=problem.gamma, test_features=problem.test_features,
                              test_labels=problem.test_labels)
    eps4 = 4 * np.finfo(float).eps  # a few roundings of a mean of logistic losses
    for instance in (problem, pooled, _nc()):
        x0 = 0.3 * np.random.default_rng(3).standard_normal((5, instance.d))  # 5 models
        np.testing.assert_allclose(fp.global_objective(instance, x0, one_gemm=True),
                                   fp.global_objective(instance, x0), rtol=eps4)
        np.testing.assert_array_equal(fp.accuracy(instance, x0, one_gemm=True), fp.accuracy(instance, x0))
    x0 = 0.3 * np.random.default_rng(3).standard_normal((5, problem.d))
    np.testing.assert_allclose(fp.global_objective(pooled, x0), fp.global_objective(problem, x0), rtol=eps4)  # pooling


def test_labelled_scores_per_class_match_the_full_gemm_gather():
    """The labelled class's scores by one GEMM per class (samples in any order, or sorted by label as the experiments
    pool them) are the full class-score GEMM's entries at the labels to 4 ulps of the largest score, and F of (24) on
    the label-sorted pool is F on the clients to 4 ulps (the mean over the samples, in another order)."""
    from reference_impl.fedpdm.objective import _scores, as_matrix

    problem = fp.mnist_like_problem(np.random.default_rng(2), N=4, n_train=200, n_test=50, side=6)
    x0 = 0.3 * np.random.default_rng(3).standard_normal((5, problem.d))
    a, lab = problem.features.reshape(-1, problem.n_features), problem.labels.reshape(-1)
    full = a @ as_matrix(problem, x0).reshape(5 * 10, -1).T  # the old path: every class score, then the label's
    old = full[np.arange(a.shape[0]), np.arange(0, 50, 10)[:, None] + lab]
    eps4 = 4 * np.finfo(float).eps
    order = np.argsort(lab, kind="stable")
    for rows in (np.arange(a.shape[0]), order):
        np.testing.assert_allclose(_scores(problem, a[rows], x0, lab[rows]), old[:, rows], rtol=0,
                                   atol=eps4 * np.abs(old).max())
    pooled = fp.FedPDMProblem(features=a[order][None], labels=lab[order][None], n_classes=10, beta=problem.beta,
                              gamma=problem.gamma)
    np.testing.assert_allclose(fp.global_objective(pooled, x0, one_gemm=True), fp.global_objective(problem, x0),
                               rtol=eps4)
    assert _scores(problem, a[:0], x0, lab[:0]).shape == (5, 0)


def test_problem_keeps_frozen_arrays_and_copies_writeable_ones():
    """A read-only array nobody can write (an instance's own data, reshaped) is kept; a read-only view of a writeable
    array is copied, so the instance cannot change behind its back."""
    problem = _nc()
    same = fp.FedPDMProblem(features=problem.features.reshape(1, -1, problem.n_features),
                            labels=problem.labels.reshape(1, -1), n_classes=1, beta=0.0, gamma=0.0)
    assert np.shares_memory(same.features, problem.features)
    source = np.ones((2, 3, 4))
    view = source.view()
    view.setflags(write=False)
    copied = fp.FedPDMProblem(features=view, labels=np.zeros((2, 3), dtype=int), n_classes=1, beta=0.0, gamma=0.0)
    assert not np.shares_memory(copied.features, source)
