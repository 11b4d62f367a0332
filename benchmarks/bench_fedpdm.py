"""One FedPDM-DP round at the paper's size: vectorised reference vs a straightforward per-client loop.

Run: .venv/bin/python benchmarks/bench_fedpdm.py [--repeats N]
Paper size (one run):  (shared/spec/fedpdm_dp.md 5.1-5.2): N = 100 clients of |D_i| = 600 MNIST-shaped samples, d = 10 x 785 = 7850,
b = 30, Q_max = 5 (nu = 0: every client takes 5 steps), rho = 10, eta = 0.1 (the E25 fix at t = 0), per-round
eps = 1. Two rounds: t = 0 (S_0 = [N], all 100 clients) and t = 1 (K = 5). The loop version replays the vectorised
round's batches and noise for a check that both give the same global model; timed, it draws its own batches
and noise and writes a new state, as the vectorised round does. Prints time and
peak-memory ratios (loop / vectorised) measured in this process. A second comparison runs the checks' size
(instance NC of spec 4.0: N = 10, |D_i| = 60, d = 20, b = 10, 12 Monte-Carlo runs side by side), where the loop
goes over runs and clients.
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import measure  # benchmarks/_timing.py (scripts run from this folder's path)

from reference_impl.fedpdm import (
    FedPDMConfig,
    _batch_gradient,
    certified_G,
    fedpdm_round,
    initial_state,
    instance_nc,
    mnist_like_problem,
    soft_threshold,
)
from theory.privacy.sensitivity import sensitivity_fedpdm
from theory.privacy.subsampled import noise_multiplier_fedpdm


def loop_round(problem, config, state, t, clients, G, rng, run=0, replay=None):
    """Algorithm 1, one round of one run, written the obvious way: a Python loop over the sampled clients and steps.

    Does the same work as the vectorised round: draws each client's batch permutation and noise (or replays the
    vectorised round's ``(batches, noise)``), and returns a new state (x, lam copied, sampled rows written) and x_0.
    """
    eta, rho = config.eta(t), config.rho
    x0 = state.x0[run]
    x_all, lam_all = state.x[run].copy(), state.lam[run].copy()
    s = sensitivity_fedpdm(eta, rho, config.Q_max, G)
    sigma = noise_multiplier_fedpdm(config.epsilon, config.delta) * s
    uploads = []
    for j, i in enumerate(clients):
        x = x_all[i].copy()
        lam = lam_all[i]
        perm = replay[0][j].ravel() if replay is not None else rng.permutation(problem.n)
        for r in range(config.Q_max):
            idx = perm[r * config.batch_size:(r + 1) * config.batch_size]
            g = _batch_gradient(problem, x, problem.features[i, idx], problem.labels[i, idx]) - lam + rho * (x - x0)
            x = x - eta * g
        lam_new = lam + rho * (x0 - x)
        noise = replay[1][j] if replay is not None else sigma * rng.standard_normal(problem.d)
        uploads.append(x - lam_new / rho + noise)
        x_all[i], lam_all[i] = x, lam_new
    return soft_threshold(np.mean(uploads, axis=0), problem.gamma / rho), x_all, lam_all


def _compare(label, problem, config, runs, ks, repeats):
    G = certified_G(problem)
    z = noise_multiplier_fedpdm(config.epsilon, config.delta)
    state = initial_state(problem, config, np.random.default_rng(1), runs)
    print(f"{label}: N = {problem.N}, |D_i| = {problem.n}, d = {problem.d}, b = {config.batch_size}, "
          f"Q_max = {config.Q_max}, runs = {runs}")
    for t, k in ks:
        sampled = np.zeros((runs, problem.N), dtype=bool)
        for r in range(runs):
            sampled[r, np.random.default_rng(2 + r).choice(problem.N, k, replace=False)] = True

        def vectorised():
            return fedpdm_round(problem, config, state, t, sampled, np.random.default_rng(3), z=z, G=G)

        new, rec = vectorised()
        noise = rec.y_tilde - rec.y

        def looped(replay=False):
            rng = np.random.default_rng(3)
            return [loop_round(problem, config, state, t, rec.clients[r], G, rng, r,
                               (rec.batches[r], noise[r]) if replay else None)[0] for r in range(runs)]

        reference = np.array(looped(replay=True))
        assert np.allclose(new.x0, reference, rtol=1e-9, atol=1e-9), np.max(np.abs(new.x0 - reference))
        t_vec, m_vec = measure(vectorised, repeats)
        t_loop, m_loop = measure(looped, repeats)
        print(f"  t = {t} ({k} clients): vectorised {t_vec * 1e3:.2f} ms, peak {m_vec / 2**20:.1f} MiB; per-client loop "
              f"{t_loop * 1e3:.2f} ms, peak {m_loop / 2**20:.1f} MiB; time ratio loop / vectorised "
              f"{t_loop / t_vec:.2f}x, memory ratio {m_loop / max(m_vec, 1):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    paper = mnist_like_problem(np.random.default_rng(0))
    config = FedPDMConfig(K=5, rounds=2, batch_size=30, rho=10.0, eta0=0.1, eta_schedule="inv_sqrt", nu=0.0, Q_max=5,
                          epsilon=1.0, delta=1e-5)
    _compare("paper size (MNIST-shaped)", paper, config, 1, ((0, paper.N), (1, config.K)), args.repeats)
    nc = instance_nc(np.random.default_rng(0))
    config = FedPDMConfig(K=5, rounds=2, batch_size=10, rho=10.0, eta0=0.08, eta_schedule="constant", nu=0.0, Q_max=5,
                          epsilon=1.0, delta=1e-5)
    _compare("checks' size (instance NC, spec 4.0)", nc, config, 12, ((0, nc.N), (1, config.K)), args.repeats * 10)


if __name__ == "__main__":
    main()
