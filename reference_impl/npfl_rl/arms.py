r"""The arms of the seed's figures (docs/papers/npfl_rl.md, C-npfl-7) and their simulation on
I0 (docs/papers/npfl_rl.md#instance-i0) replicates (common random numbers).

References
----------
.. [1] seed 004_180cd372987d137b.txt, thesis Chapter 6, eqs. (6.5)-(6.14), Algorithm 6, lines 1637-1722;
   Publication 7, eqs. (5)-(14), Algorithm 1, lines 3489-3562.
.. [2] docs/papers/npfl_rl.md: the algorithm as fedcheck runs it, errata D1-D4 (docs/papers/npfl_rl.md#erratum-d1 to
       #erratum-d4) and errata D11-D14 (docs/papers/npfl_rl.md#erratum-d11 to #erratum-d14), readings C-npfl-1..9.
"""

from __future__ import annotations

import numbers

import numpy as np

from reference_impl.npfl_rl.admm import run_npfl
from reference_impl.npfl_rl.config import NPFLConfig
from reference_impl.npfl_rl.data import synthetic_problem

__all__ = ["PAPER_ARMS", "run_arm", "simulate_replicates"]

#: The arms of the seed's figures (thesis 1734-1749, P7 3585-3600) with the choices of docs/papers/npfl_rl.md for what
#: is unstated (tau0 = 0.05 for the controllers, projection onto [0, 1], SAC candidates projected, literal timing,
#: E0 (docs/papers/npfl_rl.md#choice-empty-cluster)). Fig. 6.1: NFL and NPFL(tau); Fig. 6.2: RL/BRL with DPG and SAC
#: against NPFL(0.05); Fig. 6.3: tau of RL (DPG, SAC).
PAPER_ARMS = {
    "nfl": NPFLConfig(algorithm="nfl"),
    **{f"npfl_tau_{t:g}": NPFLConfig(tau0=t) for t in (0.0, 0.05, 0.1, 0.2, 0.4)},
    "rl_dpg": NPFLConfig(policy="dpg", delta=0.001, epochs=1),
    "brl_dpg": NPFLConfig(policy="dpg", delta=0.003, epochs=3),
    "rl_sac": NPFLConfig(policy="sac", delta=0.1, nu=0.05, epochs=1, clip_candidates=True),
    "brl_sac": NPFLConfig(policy="sac", delta=0.04, nu=0.05, epochs=3, clip_candidates=True),
}


def run_arm(config: NPFLConfig, iterations: int, seed: int, *, generator: dict | None = None) -> dict:
    """One arm on one replicate seed: the I0 (docs/papers/npfl_rl.md#instance-i0) instance of ``seed`` (C-npfl-6),
    Test-MSE curve and tau trajectories.

    The building block of the C1-C9 (docs/papers/npfl_rl.md#exp-c1 to #exp-c9) comparisons (the experiments of
    :mod:`verify.harness`). The instance is drawn from ``numpy.random.default_rng([seed, 0])`` and the SAC draws from
    ``default_rng([seed, 1])``, so every arm of one replicate sees the same instance (common random numbers).

    Returns
    -------
    dict
        ``test_mse`` (N+1,) printed (6.15), ``nmsd`` (N+1,), ``tau`` (N+1, K), ``D`` (K,), ``finite``,
        ``ill_posed`` and ``label``.
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    problem, _ = synthetic_problem(np.random.default_rng([int(seed), 0]), **(generator or {}))
    run = run_npfl(problem, config, iterations, np.random.default_rng([int(seed), 1]))
    return {"label": config.label, "test_mse": run.test_mse[0], "nmsd": run.nmsd[0], "tau": run.tau[0],
            "D": np.asarray(problem.D), "finite": bool(run.finite[0]), "ill_posed": int(run.ill_posed[0])}


def simulate_replicates(arms, iterations: int, root_seed: int, replicates, *, generator: dict | None = None,
                        metric: str = "test_mse") -> list[np.ndarray]:
    """Every arm on the replicates ``replicates``, vectorised over them: one array (len(replicates), N+1) per arm.

    The shape ``verify.harness.Design.simulate`` expects. Replicate ``i``'s instance is drawn from
    ``default_rng([root_seed, i, 0])`` and its SAC draws from ``default_rng([root_seed, i, 1])``, so it depends only
    on ``(root_seed, i)`` and is shared by every arm (common random numbers). ``arms`` are names of
    :data:`PAPER_ARMS` or :class:`NPFLConfig` records; ``metric`` is ``"test_mse"`` (6.15 as printed), ``"nmsd"``
    (denominator squared, erratum D9 (docs/papers/npfl_rl.md#erratum-d9)) or ``"tau"`` (trajectories, shape
    (len(replicates), N+1, K)).
    """
    if metric not in ("test_mse", "nmsd", "tau"):
        raise ValueError(f"metric must be 'test_mse', 'nmsd' or 'tau', got {metric!r}")
    replicates = [int(i) for i in replicates]
    if not replicates or any(i < 0 for i in replicates):
        raise ValueError(f"replicates must be a non-empty sequence of integers >= 0, got {replicates!r}")
    problems = [synthetic_problem(np.random.default_rng([int(root_seed), i, 0]), **(generator or {}))[0]
                for i in replicates]
    out = []
    for arm in arms:
        config = PAPER_ARMS[arm] if isinstance(arm, str) else arm
        if not isinstance(config, NPFLConfig):
            raise ValueError(f"arms must be names of PAPER_ARMS or NPFLConfig records, got {arm!r}")
        rngs = [np.random.default_rng([int(root_seed), i, 1]) for i in replicates]
        run = run_npfl(problems, config, iterations, rngs)
        out.append({"test_mse": run.test_mse, "nmsd": run.nmsd, "tau": run.tau}[metric])
    return out
