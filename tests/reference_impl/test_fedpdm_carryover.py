"""reference_impl.fedpdm.carryover: the affine map of a FedPDM-DP client against the update equations and against a
direct Monte Carlo of Algorithm 1 itself (``fedpdm_round`` with a linear loss), both directions."""

import math

import numpy as np
import pytest

import reference_impl.fedpdm.algorithm as algorithm_module
from reference_impl import fedpdm as fp
from reference_impl.fedpdm.carryover import (
    AffineClient,
    affine_client_from_config,
    carryover_delta,
    carryover_delta_lower_bound,
    carryover_pair,
    inclusion_options,
    response_matrix,
)
from theory.privacy.carryover import hockey_stick_bracket, hockey_stick_terms, mixture_privacy_loss
from theory.privacy.history import history_coefficients_fedpdm
from theory.privacy.sensitivity import sensitivity_fedpdm
from verify.fedpdm.upload_simulation import simulate_uploads


@pytest.mark.parametrize("start", ["warm", "global"])
def test_response_matrix_last_row_is_the_history_impulse_response(start):
    etas = np.random.default_rng(1).uniform(0.01, 0.19, 6)
    client = AffineClient(etas=etas, Q=3, rho=10.0, q=0.3, sigmas=np.ones(6), gap=2.0, local_start=start)
    C = response_matrix(client)
    np.testing.assert_allclose(C[-1], history_coefficients_fedpdm(etas, [3] * 6, 10.0, local_start=start), atol=1e-15)
    assert np.all(np.diag(C) == -2.0) and np.all(np.triu(C, 1) == 0.0)
    stateless = response_matrix(AffineClient(etas=etas, Q=3, rho=10.0, q=0.3, sigmas=np.ones(6), gap=2.0,
                                             local_start=start, carry_state=False))
    assert np.array_equal(stateless, np.diag(np.diag(C)))


@pytest.mark.parametrize(("start", "curvature"), [("warm", 0.0), ("global", 0.0), ("warm", 3.0), ("global", 1.5)])
def test_affine_map_equals_the_update_equations(start, curvature):
    """For every inclusion pattern of a 3-participation client, the difference of the two neighbours' uploads from
    the literal updates (10a)-(10d) (linear or quadratic loss, random public x_0 and state) is C u(pattern)."""
    rng = np.random.default_rng(2)
    etas, Q, rho, gap = [0.05, 0.09, 0.02], 2, 10.0, 1.7
    client = AffineClient(etas=etas, Q=Q, rho=rho, q=0.5, sigmas=np.ones(3), gap=gap, local_start=start,
                          curvature=curvature)
    C = response_matrix(client)
    u, _ = inclusion_options(client)
    x_init, lam_init, x0s = rng.standard_normal(1), rng.standard_normal(1), rng.standard_normal((3, 1))
    for pattern in np.ndindex(*(Q + 1,) * 3):
        def gradient(j, r, x, pattern=pattern):  # D holds the record's batch gradient +gap/2, D' -gap/2 (same data)
            held = 0.5 * gap if pattern[j] == r + 1 else 0.0
            return np.stack([curvature * x[0] + 0.3 + held, curvature * x[1] + 0.3 - held]), 0.0

        ys, _ = simulate_uploads(x_init, lam_init, x0s, etas, [Q] * 3, rho, gradient, local_start=start)
        expected = C @ np.array([u[j, pattern[j]] for j in range(3)])
        np.testing.assert_allclose(ys[:, 0, 0] - ys[:, 1, 0], expected, rtol=0, atol=1e-12)


def test_pair_components_merge_and_weights():
    # eta rho = 1: a = 0, only the last local step's batch moves anything: Q + 1 options collapse to 2 per round
    client = AffineClient(etas=[0.1] * 4, Q=3, rho=10.0, q=0.6, sigmas=np.ones(4), gap=2.0)
    pair = carryover_pair(client)
    assert pair.means_p.shape == (16, 4) and math.isclose(float(pair.weights_p.sum()), 1.0, rel_tol=1e-15)
    assert pair.means_q.shape == (1, 4) and not np.any(pair.means_q)
    symmetric = carryover_pair(AffineClient(etas=[0.1] * 4, Q=3, rho=10.0, q=0.6, sigmas=np.ones(4), gap=2.0,
                                            neighbour="symmetric"))
    np.testing.assert_array_equal(symmetric.means_p, -symmetric.means_q)
    with pytest.raises(ValueError, match="more than max_components = 8"):
        carryover_pair(client, max_components=8)


def test_the_brief_case_reproduces_the_real_loss():
    """One client, linear loss, b = Q = 1, warm start, q = 0.25, z = 1, eta rho = 0.05, 8 rounds, record G v against
    -G v: the real delta at eps = 1 is about 0.746 (the accountant's PLD gives 0.082), and without kept state 0.037."""
    s = sensitivity_fedpdm(0.05, 1.0, 1, 1.0)
    kw = dict(etas=[0.05] * 8, Q=1, rho=1.0, q=0.25, sigmas=[s] * 8, gap=2.0, neighbour="symmetric")
    pair = carryover_pair(AffineClient(**kw))
    real = carryover_delta(pair, [1.0], np.random.default_rng(0), samples=60_000)
    assert real.lower[0] <= 0.747 <= real.upper[0] and real.upper[0] - real.lower[0] < 0.02
    assert 0.74 < carryover_delta_lower_bound(pair, 1.0) <= real.upper[0]
    independent = carryover_delta(carryover_pair(AffineClient(**kw, carry_state=False)), [1.0],
                                  np.random.default_rng(1), samples=60_000)
    assert independent.lower[0] <= 0.0365 <= independent.upper[0]


def test_config_builder_validates_and_uses_the_noise_model():
    config = fp.FedPDMConfig(K=1, rounds=3, batch_size=2, rho=10.0, eta0=0.05, eta_schedule="constant", nu=0.0,
                             Q_max=2, sensitivity_model="history")
    client = affine_client_from_config(config, [0, 1, 2], n_records=8, G=1.5)
    assert client.q == 0.5 and client.gap == 3.0 and client.Q == 2
    s = sensitivity_fedpdm(0.05, 10.0, 2, 1.5)
    assert client.sigmas[0] == pytest.approx(fp.run_noise_multiplier(None, config, np.ones((1, 3, 1), bool)) * s,
                                             rel=1e-15)
    with pytest.raises(ValueError, match="nu must be 0 for the affine oracle"):
        affine_client_from_config(fp.FedPDMConfig(**{**config.__dict__, "nu": 1e-3}), [0], n_records=8, G=1.0)
    with pytest.raises(ValueError, match="rounds must be increasing integers"):
        affine_client_from_config(config, [1, 1], n_records=8, G=1.0)
    with pytest.raises(ValueError, match="q must be a finite real"):
        AffineClient(etas=[0.1], Q=1, rho=1.0, q=0.0, sigmas=[1.0], gap=1.0)


def _linear_gradient(problem, x, a, lab):
    """Batch gradient of the linear per-sample loss a^T x: the batch mean of the features, whatever x."""
    return np.broadcast_to(a.mean(axis=-2), x.shape).copy()


def _one_client_problem(record: float, n_records: int, G: float) -> fp.FedPDMProblem:
    features = np.full((1, n_records, 1), -G)
    features[0, 0, 0] = record
    return fp.FedPDMProblem(features=features, labels=np.zeros((1, n_records), dtype=np.int64), n_classes=1, beta=0.0,
                            gamma=0.0)


def test_direct_monte_carlo_of_the_algorithm_agrees_with_the_oracle(monkeypatch):
    """Algorithm 1 itself (``run_fedpdm`` / ``fedpdm_round``, one client, gamma = 0 so x_0 is the upload) with the
    linear loss of the extremal pair: D's record (2b - 1) G, D' -G, every other record -G. The run's outputs, minus
    what D' would upload given the same released history, over sigma, are the oracle's P under D and its Q under D'.
    The algorithm's privacy-loss hockey sticks (both directions) overlap the oracle's Monte-Carlo brackets."""
    monkeypatch.setattr(algorithm_module, "batch_gradient", _linear_gradient)
    n_records, b, Q, T, G, R = 8, 2, 1, 4, 1.0, 12_000
    config = fp.FedPDMConfig(K=1, rounds=T, batch_size=b, rho=1.0, eta0=0.1, eta_schedule="constant", nu=0.0, Q_max=Q,
                             G=G, epsilon=6.0, delta=1e-5)

    def whitened(problem, seed):
        run = fp.run_fedpdm(problem, config, np.random.default_rng(seed), runs=R, keep_records=True)
        Y = np.stack([rec.y_tilde[:, 0, 0] for rec in run.records], axis=1)
        sigma = np.stack([rec.sigma[:, 0] for rec in run.records], axis=1)
        x, lam, x0, W = np.zeros(R), np.zeros(R), np.zeros(R), np.empty_like(Y)
        for t in range(T):  # D' (every record -G) given the observed x_0 = previous output: noise-free upload
            z = x.copy()
            for _ in range(Q):
                z = z - config.eta(t) * (-G - lam + config.rho * (z - x0))
            lam, x = lam + config.rho * (x0 - z), z
            W[:, t] = (Y[:, t] - (x - lam / config.rho)) / sigma[:, t]
            x0 = Y[:, t]
        return W

    W_D = whitened(_one_client_problem((2 * b - 1) * G, n_records, G), 1)
    W_Dp = whitened(_one_client_problem(-G, n_records, G), 2)
    assert np.abs(W_Dp.mean(axis=0)).max() < 5 / math.sqrt(R) and np.abs(W_Dp.std(axis=0) - 1).max() < 0.05
    pair = carryover_pair(affine_client_from_config(config, np.arange(T), n_records=n_records, G=G))
    oracle = carryover_delta(pair, [0.5, 1.0], np.random.default_rng(3), samples=100_000, alpha=1e-3)
    for k, eps in enumerate((0.5, 1.0)):
        forward = hockey_stick_bracket(hockey_stick_terms(mixture_privacy_loss(pair, W_D), eps), 1e-3)
        backward = hockey_stick_bracket(hockey_stick_terms(-mixture_privacy_loss(pair, W_Dp), eps), 1e-3)
        for algo, orc in ((forward, oracle.forward[:, k]), (backward, oracle.backward[:, k])):
            assert algo[0] <= orc[2] and orc[0] <= algo[2], (eps, algo, orc)
    assert oracle.estimate[1] > 0.1  # an informative regime, not two zeros
