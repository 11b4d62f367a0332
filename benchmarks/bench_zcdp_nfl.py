"""One zCDP-NFL round at the paper's size: vectorised reference vs a straightforward per-agent loop.

Run: .venv/bin/python benchmarks/bench_zcdp_nfl.py [--repeats N]
Prints the time and peak-memory ratios (loop / vectorised) measured in this process, after checking that
both produce the same iterates. Sizes (shared/spec/zcdp_nfl.md 6): K = 50 agents, connected G(50, 75)
(mean degree 3), P = 8, M = 50, LAD, rho = 1, eta = 0.5, S2 noise (phi1 = 1e-3, tau = 0.99); one Monte-Carlo
run, and 100 runs (the batch axis of the reference vs the loop repeated per run).
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import measure  # benchmarks/_timing.py (scripts run from this folder's path)

from reference_impl.zcdp_nfl import NFLConfig, PrivacySchedule, StepSchedule, nfl_round, synthetic_problem


def loop_round(problem, rho, eta, sigma, w_tilde, gamma, noise):
    """Algorithm 1, one round, written the obvious way: a Python loop over agents and their neighbours."""
    K = problem.K
    nbrs = [np.flatnonzero(problem.adjacency[k]) for k in range(K)]
    w = np.empty_like(w_tilde)
    for k in range(K):
        r = problem.X[k] @ w_tilde[k] - problem.y[k]
        g = problem.X[k].T @ np.sign(r) / problem.M
        s = sum(w_tilde[k] + w_tilde[l] for l in nbrs[k])
        w[k] = (w_tilde[k] / eta + rho * s - gamma[k] - g) / (1.0 / eta + 2.0 * rho * len(nbrs[k]))
    new = np.empty_like(w)
    for k in range(K):
        new[k] = w[k] + sigma[k] * noise[k]
    new_gamma = np.empty_like(gamma)
    for k in range(K):
        new_gamma[k] = gamma[k] + rho * sum(new[k] - new[l] for l in nbrs[k])
    return w, new, new_gamma


class _Replay:
    """A Generator stand-in returning prepared standard normals (so both versions see the same noise)."""

    def __init__(self, z):
        self.z = z

    def normal(self, size):
        return self.z.reshape(size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    problem = synthetic_problem(np.random.default_rng(0), K=50, P=8, M=50, objective="lad")
    config = NFLConfig(rho=1.0, step=StepSchedule(kind="constant", eta0=0.5), privacy=PrivacySchedule(phi1=1e-3))
    etas = config.step.etas(1)
    sigma = np.sqrt(config.privacy.variances(problem, config.rho, etas))[0]
    rng = np.random.default_rng(1)
    for runs in (1, 100):
        w_tilde = rng.normal(size=(runs, problem.K, problem.P))
        gamma = config.rho * np.einsum("ij,rjp->rip", problem.laplacian(), rng.normal(size=w_tilde.shape))
        z = rng.normal(size=w_tilde.shape)

        def vectorised():
            return nfl_round(problem, config.rho, etas[0], sigma, w_tilde, gamma, _Replay(z))

        def looped():
            return [loop_round(problem, config.rho, etas[0], sigma, w_tilde[r], gamma[r], z[r]) for r in range(runs)]

        fast, slow = vectorised(), looped()
        for r in range(runs):
            for a, b in zip((fast[0][r], fast[1][r], fast[2][r]), slow[r]):
                assert np.allclose(a, b, rtol=1e-12, atol=1e-12)
        t_vec, m_vec = measure(vectorised, args.repeats)
        t_loop, m_loop = measure(looped, max(3, args.repeats // (10 if runs > 1 else 1)))
        print(f"zCDP-NFL round, K = {problem.K}, P = {problem.P}, M = {problem.M}, runs = {runs}")
        print(f"  vectorised: {t_vec * 1e3:.3f} ms, peak {m_vec / 2**20:.2f} MiB")
        print(f"  per-agent loop: {t_loop * 1e3:.3f} ms, peak {m_loop / 2**20:.2f} MiB")
        print(f"  time ratio loop / vectorised: {t_loop / t_vec:.1f}x; memory ratio: {m_loop / max(m_vec, 1):.2f}x")


if __name__ == "__main__":
    main()
