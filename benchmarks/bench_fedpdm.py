"""FedPDM-DP: the cost of ``fedcheck run fedpdm`` against the algorithm alone, and one round vectorised vs a loop.

Run: .venv/bin/python benchmarks/bench_fedpdm.py [--cli-d 800,1600,3200] [--repeats N] [--skip-rounds]

1. ``--cli-d`` (the CLI's own work, issue 28): for each model dimension d, the whole ``fedcheck run fedpdm CONFIG
   --json`` in this process (config: ``fedcheck/examples/fedpdm.toml`` with the synthetic instance NC,
   N = ``--cli-N`` clients of |D_i| = ``--cli-n`` samples, noise "none" so that no privacy accounting is timed,
   60 rounds, the CLI's observers), against :func:`reference_impl.fedpdm.run_fedpdm` with the same observers on the
   same instance; the certified smoothness bracket alone (:func:`reference_impl.fedpdm.smoothness.smoothness_bracket`)
   against the same algorithm, with peak traced memory of both, and, up to ``--legacy-max-d``, the formula as
   computed before (one d x d eigendecomposition per client and class). Ratios, medians over ``--repeats``.
2. One FedPDM-DP round at the paper's size (N = 100 clients of |D_i| = 600 MNIST-shaped samples, d = 10 x 785,
   b = 30, Q_max = 5, rho = 10, eta = 0.1, per-round eps = 1), vectorised vs a per-client loop that replays the
   vectorised round's batches and noise (checked equal first); and at the checks' size (instance NC: N = 10,
   |D_i| = 60, d = 20, 12 Monte-Carlo runs side by side). Time and peak-memory ratios (loop / vectorised).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
from _timing import measure  # benchmarks/_timing.py (scripts run from this folder's path)

from fedcheck.cli import main as fedcheck_main
from reference_impl.fedpdm import (
    FedPDMConfig,
    accuracy,
    batch_gradient,
    certified_G,
    fedpdm_round,
    global_objective,
    initial_state,
    instance_nc,
    mnist_like_problem,
    run_fedpdm,
    soft_threshold,
    stationarity_measure,
)
from reference_impl.fedpdm.smoothness import smoothness_bracket
from theory.privacy.sensitivity import sensitivity_fedpdm
from theory.privacy.subsampled import noise_multiplier_fedpdm

_ALGORITHM = dict(K=5, rounds=60, batch_size=5, batch_rule="disjoint", rho=10.0, eta0=0.05, eta_schedule="constant",
                  nu=0.01, Q_max=5, noise="none")


def _config_toml(N: int, n: int, d: int) -> str:
    body = "\n".join(f"{k} = {v!r}".replace("'", '"') for k, v in _ALGORITHM.items())
    return f'[problem]\nsource = "nc"\nN = {N}\nn = {n}\nd = {d}\ndata_seed = 0\n\n[algorithm]\n{body}\n'


def _legacy_top(problem) -> float:
    """The formula as computed before: a d x d Gram matrix per client and class, each diagonalised."""
    top = 0.0
    for k in range(problem.n_classes):
        w = (problem.labels == k)[..., None] * problem.features
        gram = np.einsum("inf,ing->ifg", w, problem.features) / problem.n
        top = max(top, float(np.linalg.eigvalsh(gram)[:, -1].max()))
    return top


def _median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def _peak(fn) -> int:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def cli_costs(ds, N: int, n: int, repeats: int, legacy_max_d: int) -> None:
    """``fedcheck run fedpdm`` and the smoothness bracket against the algorithm alone, per d (section 1)."""
    print(f"fedcheck run fedpdm vs the algorithm alone: instance NC, N = {N}, |D_i| = {n}, T = 60, noise none, "
          f"{repeats} repeat(s), medians")
    config = FedPDMConfig(**_ALGORITHM)
    for d in ds:
        problem = instance_nc(np.random.default_rng(0), N=N, n=n, d=d)  # the CLI's instance (data_seed = 0)

        def algorithm(p=problem):
            observers = {"loss": lambda s: global_objective(p, s.x0), "accuracy": lambda s: accuracy(p, s.x0),
                         "stationarity": lambda s: stationarity_measure(p, s.x, s.x0, s.lam, config.rho)["P"]}
            with np.errstate(over="ignore", invalid="ignore"):
                return run_fedpdm(p, config, np.random.default_rng(0), runs=1, observers=observers)

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "fedpdm.toml"
            path.write_text(_config_toml(N, n, d))

            def cli(path=path):
                with contextlib.redirect_stdout(io.StringIO()):
                    status = fedcheck_main(["run", "fedpdm", str(path), "--json"])
                assert status == 0, status

            t_cli = _median_time(cli, repeats)
        t_alg = _median_time(algorithm, repeats)
        t_l = _median_time(lambda p=problem: smoothness_bracket(p), repeats)
        m_l, m_alg = _peak(lambda p=problem: smoothness_bracket(p)), _peak(algorithm)
        b = smoothness_bracket(problem)
        line = (f"  d = {d}: run fedpdm / algorithm {t_cli / t_alg:.2f}x ({t_cli:.2f} s vs {t_alg:.2f} s); smoothness "
                f"bracket / algorithm {t_l / t_alg:.4f}x in time ({t_l * 1e3:.1f} ms, route {b.route}, width "
                f"{(b.upper - b.lower) / b.upper:.1e}), {m_l / m_alg:.3f}x in peak memory ({m_l / 2**20:.1f} vs "
                f"{m_alg / 2**20:.1f} MiB)")
        if d <= legacy_max_d:
            t_old = _median_time(lambda p=problem: _legacy_top(p), 1)
            exact = _legacy_top(problem)
            assert b.lower <= exact <= b.upper, (b, exact)
            line += f"; before: {t_old / t_alg:.1f}x the algorithm ({t_old:.2f} s), inside the bracket"
        print(line)


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
            g = batch_gradient(problem, x, problem.features[i, idx], problem.labels[i, idx]) - lam + rho * (x - x0)
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

        def vectorised(t=t, sampled=sampled):
            return fedpdm_round(problem, config, state, t, sampled, np.random.default_rng(3), z=z, G=G)

        new, rec = vectorised()
        noise = rec.y_tilde - rec.y

        def looped(replay=False, t=t, rec=rec, noise=noise):
            rng = np.random.default_rng(3)
            return [loop_round(problem, config, state, t, rec.clients[r], G, rng, r,
                               (rec.batches[r], noise[r]) if replay else None)[0] for r in range(runs)]

        reference = np.array(looped(replay=True))
        assert np.allclose(new.x0, reference, rtol=1e-9, atol=1e-9), np.max(np.abs(new.x0 - reference))
        t_vec, m_vec = measure(vectorised, repeats)
        t_loop, m_loop = measure(looped, repeats)
        print(f"  t = {t} ({k} clients): vectorised {t_vec * 1e3:.2f} ms, peak {m_vec / 2**20:.1f} MiB; "
              f"per-client loop {t_loop * 1e3:.2f} ms, peak {m_loop / 2**20:.1f} MiB; time ratio loop / vectorised "
              f"{t_loop / t_vec:.2f}x, memory ratio {m_loop / max(m_vec, 1):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cli-d", default="800,1600,3200", help="comma-separated model dimensions ('' to skip)")
    parser.add_argument("--cli-N", type=int, default=10)
    parser.add_argument("--cli-n", type=int, default=60)
    parser.add_argument("--legacy-max-d", type=int, default=800, help="time the former formula up to this d")
    parser.add_argument("--skip-rounds", action="store_true", help="only section 1")
    args = parser.parse_args()
    if args.cli_d:
        cli_costs([int(v) for v in args.cli_d.split(",")], args.cli_N, args.cli_n, args.repeats, args.legacy_max_d)
    if args.skip_rounds:
        return
    paper = mnist_like_problem(np.random.default_rng(0))
    config = FedPDMConfig(K=5, rounds=2, batch_size=30, rho=10.0, eta0=0.1, eta_schedule="inv_sqrt", nu=0.0, Q_max=5,
                          epsilon=1.0, delta=1e-5)
    _compare("paper size (MNIST-shaped)", paper, config, 1, ((0, paper.N), (1, config.K)), args.repeats)
    nc = instance_nc(np.random.default_rng(0))
    config = FedPDMConfig(K=5, rounds=2, batch_size=10, rho=10.0, eta0=0.08, eta_schedule="constant", nu=0.0, Q_max=5,
                          epsilon=1.0, delta=1e-5)
    _compare("checks' size (instance NC)", nc, config, 12, ((0, nc.N), (1, config.K)), args.repeats * 10)


if __name__ == "__main__":
    main()
