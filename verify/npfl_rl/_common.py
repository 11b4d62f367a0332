"""Shared helpers of the NPFL-RL checks: instances from settings, the paper's point, seeded small instances."""

from __future__ import annotations

import functools

import numpy as np

from reference_impl.npfl_rl.data import NPFLProblem, synthetic_problem

__all__ = ["PAPER", "paper_point", "problem_and_draws", "problem_from", "random_settings"]

#: The paper's set-up (thesis line 1714, Publication 7 line 3570) with fedcheck's choices for what it leaves open
#: (docs/papers/npfl_rl.md#instance-i0).
PAPER = {"K": 30, "d": 60, "D_lo": 5, "D_hi": 35, "mean_degree": 6.0, "lam": 0.1, "symmetric": False}


def paper_point(seed: int) -> dict:
    """Settings of the standard instance (docs/papers/npfl_rl.md#instance-i0) of replicate ``seed`` at the paper's
    size."""
    return {"seed": int(seed), **PAPER}


def _key(settings: dict) -> tuple:
    keys = ("seed", "K", "d", "D_lo", "D_hi", "mean_degree", "lam", "symmetric")
    return tuple(settings.get(k, PAPER.get(k)) for k in keys)


@functools.lru_cache(maxsize=64)
def _cached(key: tuple):
    seed, K, d, D_lo, D_hi, mean_degree, lam, symmetric = key
    return synthetic_problem(np.random.default_rng(int(seed)), K=int(K), d=int(d), D_range=(int(D_lo), int(D_hi)),
                             mean_degree=float(mean_degree), lam=float(lam), symmetric=bool(symmetric))


def problem_and_draws(settings: dict) -> tuple[NPFLProblem, dict]:
    """The generator's instance and draws (w0, deltas, noise) for ``settings`` (cached: instances are immutable)."""
    return _cached(_key(settings))


def problem_from(settings: dict) -> NPFLProblem:
    return problem_and_draws(settings)[0]


def random_settings(rng: np.random.Generator, *, symmetric: bool = False) -> dict:
    """A small instance as :func:`verify.strategies.npfl_instances` draws them (sparse, or the symmetric case of
    docs/papers/npfl_rl.md#k4)."""
    if symmetric:
        K, d = int(rng.integers(9, 13)), int(rng.integers(3, 7))
        return {"seed": int(rng.integers(2**31)), "K": K, "d": d, "D_lo": 2, "D_hi": d + 3,
                "mean_degree": float(K - 2), "lam": float(rng.uniform(0.01, 1.0)), "symmetric": True}
    K, d = int(rng.integers(6, 13)), int(rng.integers(3, 9))
    D_lo = int(rng.integers(2, d + 3))
    return {"seed": int(rng.integers(2**31)), "K": K, "d": d, "D_lo": D_lo, "D_hi": int(rng.integers(D_lo, d + 5)),
            "mean_degree": float(rng.uniform(1.5, min(4.0, K - 1.0))), "lam": float(rng.uniform(0.01, 1.0)),
            "symmetric": False}
