"""Several PGFL configurations run in lockstep on the same problem with common random numbers (the experiments' arms).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from reference_impl.pgfl.algorithm import _key_ranks, step
from reference_impl.pgfl.config import PGFLState, initial_state
from reference_impl.pgfl.solvers import client_solver
from theory.pgfl.problem import PGFLProblem

__all__ = ["LOCKSTEP_SHARED", "iterate_pgfl_arms", "run_pgfl_arms"]


#: Fields of :class:`PGFLConfig` that configurations run in lockstep by :func:`run_pgfl_arms` must share (the client
#: step, the aggregation and the dual update are then the same for all of them).
LOCKSTEP_SHARED = ("rho", "algorithm", "dual_ref", "aggregation", "server_update")


def _lockstep_setup(problem: PGFLProblem, configs, horizons, rng) -> None:
    """Validate a lockstep call (shared by :func:`iterate_pgfl_arms` and :func:`run_pgfl_arms`)."""
    if not configs:
        raise ValueError("configs must hold at least one PGFLConfig, got none")
    for h in horizons:
        if isinstance(h, bool) or not isinstance(h, int) or h < 1:
            raise ValueError(f"iterations must be integers >= 1, got {h!r}")
    first = configs[0]
    for name in LOCKSTEP_SHARED:
        values = {getattr(c, name) for c in configs}
        if len(values) > 1:
            raise ValueError(f"configs must share {name} to run in lockstep, got {sorted(map(str, values))}")
    if first.server_update != "multi_step":
        raise ValueError(f"run_pgfl_arms needs server_update = 'multi_step', got {first.server_update!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")


def iterate_pgfl_arms(problem: PGFLProblem, configs, iterations: int, rng: np.random.Generator, *,
                      runs: int = 1) -> Iterator[tuple[int, PGFLState]]:
    """Several configurations of one problem in lockstep, ``runs`` runs each, with common random numbers: yields
    ``(n, state)`` after every iteration n = 1..iterations.

    The state holds ``len(configs) * runs`` runs, configuration-major (configuration ``i``'s runs are
    ``i * runs .. (i + 1) * runs - 1``). Configuration ``i``'s runs are, bit for bit, those of ``run_pgfl(problem,
    configs[i], iterations, rng_i, runs=runs)`` when every ``rng_i`` starts in the state of ``rng``: the scheduling
    keys ``(runs, K)`` and the standard-normal noise ``(runs, K, d)`` are drawn once per iteration and shared, and
    the client step's matrix is factorised once. When no configuration has privacy noise or scheduling the draws
    are skipped (they would not change any iterate; ``rng`` is then left where it was). Same conditions on the
    configurations as :func:`run_pgfl_arms`.
    """
    configs = list(configs)
    _lockstep_setup(problem, configs, [iterations], rng)
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    first, C, K, d = configs[0], len(configs), problem.K, problem.d
    solve = client_solver(problem, first.rho)
    state = initial_state(problem, C * runs)
    scheduled = np.repeat([K if c.scheduled is None else c.scheduled for c in configs], runs)[:, None]
    full = np.repeat([c.scheduled is None for c in configs], runs)[:, None]
    draws = not full.all() or any(c.phi0 is not None for c in configs)
    selected = np.ones((C * runs, K), dtype=bool)
    noise = np.zeros((C * runs, K, d))
    for n in range(1, iterations + 1):
        if draws:
            keys = rng.random((runs, K))                            # _select's draw, shared by every configuration
            if not full.all():
                selected = full | (np.tile(_key_ranks(problem, keys), (C, 1)) < scheduled)
            std = np.stack([np.sqrt(c.noise_variance(problem.samples, n)) for c in configs])     # (C, K)
            z = rng.standard_normal((runs, K, d))
            noise = (z[None] * std[:, None, :, None]).reshape(C * runs, K, d)
        tau = np.repeat([c.tau(n) for c in configs], runs)
        state = step(problem, first, solve, state, n, noise, selected, tau=tau)
        yield n, state


def run_pgfl_arms(problem: PGFLProblem, configs, iterations, rng: np.random.Generator, *,
                  observe: Callable[[PGFLState], np.ndarray]) -> list[np.ndarray]:
    """Several configurations of one problem run in lockstep, one run each, with common random numbers.

    Configuration ``i`` gives what ``run_pgfl(problem, configs[i], iterations[i], rng_i, observe=observe)
    .observations`` gives, bit for bit, when every ``rng_i`` starts in the state of ``rng``: the scheduling keys
    and the standard-normal noise are drawn once per iteration and shared, and the client step's matrix is
    factorised once (:func:`iterate_pgfl_arms`). The configurations may differ in their tau schedule, privacy noise
    (phi0, zeta, C, noise convention) and scheduling; they must share :data:`LOCKSTEP_SHARED` and use the
    multi-step server update. ``iterations`` is one horizon or one per configuration (all run to the longest; each
    keeps its own prefix). Returns the observations of each configuration, shape ``(iterations[i], ...)``.
    """
    configs = list(configs)
    horizons = [iterations] * len(configs) if isinstance(iterations, int) else list(iterations)
    if configs and len(horizons) != len(configs):
        raise ValueError(f"iterations must be one integer or one per configuration ({len(configs)}), "
                         f"got {len(horizons)}")
    _lockstep_setup(problem, configs, horizons, rng)
    observations = [observe(state) for _, state in iterate_pgfl_arms(problem, configs, max(horizons), rng)]
    stacked = np.stack(observations)                                # (max horizon, R, ...)
    return [stacked[:h, i] for i, h in enumerate(horizons)]
