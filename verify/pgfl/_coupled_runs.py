r"""Coupled PGFL runs for Theorem II: the :math:`\tau = 0` run and :math:`\tau`-runs that share data,
initialisation, scheduling and noise draws (common random numbers), run in lockstep
(:func:`reference_impl.pgfl.iterate_pgfl_arms`), with the gap reduced as the runs go instead of storing
trajectories.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from reference_impl.pgfl import PGFLConfig, PGFLProblem, iterate_pgfl_arms, run_pgfl, server_models_observer

__all__ = ["gap_sequence", "run_recorded_gaps"]


def gap_sequence(problem: PGFLProblem, config: PGFLConfig, iterations: int, seed: int, runs: int = 1, *,
                 mixed_seed: int | None = None):
    """D_n (mean over runs of max_{s,q} squared gap) for n = 1..iterations.

    Common random numbers by default (the two runs in lockstep); ``mixed_seed`` gives the tau-run its own draws
    (independent noise).
    """
    reference = dataclasses.replace(config, taus=(0.0,))
    if mixed_seed is None:
        out = np.empty(iterations)
        for n, state in iterate_pgfl_arms(problem, [reference, config], iterations, np.random.default_rng(seed),
                                          runs=runs):
            gap = state.w_servers[:runs] - state.w_servers[runs:]
            out[n - 1] = np.sum(gap**2, axis=-1).mean(axis=0).max()
        return out
    kw = dict(runs=runs, observe=server_models_observer)
    bar = run_pgfl(problem, reference, iterations, np.random.default_rng(seed), **kw).observations
    mixed = run_pgfl(problem, config, iterations, np.random.default_rng(mixed_seed), **kw).observations
    gaps = np.sum((bar - mixed) ** 2, axis=-1)                                # (N, R, S, Q)
    return gaps.mean(axis=1).max(axis=(1, 2))


def run_recorded_gaps(problem: PGFLProblem, config: PGFLConfig, taus, iterations: int, recorded: np.ndarray,
                      seed: int, runs: int, sink) -> None:
    """The tau = 0 run and one run per tau of ``config`` in lockstep from ``default_rng(seed)`` (``runs`` runs each,
    common random numbers); at the recorded iterations (1-based, increasing) calls ``sink(slot, i, gap)`` for
    every tau ``taus[i]`` with the gap ``w_bar - w`` of the server models, shape (runs, S, Q, d)."""
    configs = [dataclasses.replace(config, taus=(float(t),)) for t in (0.0, *taus)]
    slot_of = np.full(iterations, -1, dtype=np.int64)
    slot_of[np.asarray(recorded) - 1] = np.arange(len(recorded))
    for n, state in iterate_pgfl_arms(problem, configs, iterations, np.random.default_rng(seed), runs=runs):
        slot = int(slot_of[n - 1])
        if slot >= 0:
            reference = state.w_servers[:runs]
            for i in range(len(taus)):
                sink(slot, i, reference - state.w_servers[(i + 1) * runs:(i + 2) * runs])
