r"""Coupled PGFL runs for Theorem II: the :math:`\tau = 0` run and a :math:`\tau`-run that share data,
initialisation, scheduling and noise draws (common random numbers), and a recorder that streams the models of
chosen iterations to a sink instead of storing the whole trajectory.
"""

from __future__ import annotations

import numpy as np

from reference_impl.pgfl import PGFLConfig, PGFLProblem, run_pgfl, server_models_observer

__all__ = ["Recorder", "gap_sequence", "run_recorded"]


def gap_sequence(problem: PGFLProblem, config: PGFLConfig, iterations: int, seed: int, runs: int = 1, *,
                 mixed_seed: int | None = None):
    """D_n (mean over runs of max_{s,q} squared gap) for n = 1..iterations.

    Common random numbers by default; ``mixed_seed`` gives the tau-run its own draws (independent noise).
    """
    reference = PGFLConfig(**{**config.__dict__, "taus": (0.0,)})
    kw = dict(runs=runs, observe=server_models_observer)
    bar = run_pgfl(problem, reference, iterations, np.random.default_rng(seed), **kw).observations
    other = seed if mixed_seed is None else mixed_seed
    mixed = run_pgfl(problem, config, iterations, np.random.default_rng(other), **kw).observations
    gaps = np.sum((bar - mixed) ** 2, axis=-1)                                # (N, R, S, Q)
    return gaps.mean(axis=1).max(axis=(1, 2))


class Recorder:
    """``run_pgfl`` observer: calls ``sink(slot, state)`` at the recorded iterations and keeps nothing itself."""

    _NOTHING = np.empty(0)

    def __init__(self, iterations: int, recorded: np.ndarray, sink):
        self._slot = np.full(iterations, -1, dtype=np.int64)
        self._slot[np.asarray(recorded) - 1] = np.arange(len(recorded))
        self._n = 0
        self._sink = sink

    def __call__(self, state) -> np.ndarray:
        slot = self._slot[self._n]
        self._n += 1
        if slot >= 0:
            self._sink(int(slot), state)
        return self._NOTHING


def run_recorded(problem, config, iterations, recorded, seed, runs, sink) -> None:
    """One ``run_pgfl`` from ``default_rng(seed)``: equal seeds give equal scheduling and noise draws (CRN)."""
    run_pgfl(problem, config, iterations, np.random.default_rng(seed), runs=runs,
             observe=Recorder(iterations, recorded, sink))
