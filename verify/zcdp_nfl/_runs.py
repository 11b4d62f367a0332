"""Run settings of the zCDP-NFL convergence checks: a flat dict of scalars -> problem, config, ground truth, run.

Evidence records carry the settings dict, so a counterexample is re-run from it exactly
(``reproduce``). Keys: ``seed`` (instance), ``K, P, M, mean_degree, objective, lam, heterogeneity,
zero_coordinates`` (:func:`reference_impl.zcdp_nfl.synthetic_problem`), ``rho, step, eta0`` (step
schedule), ``noise`` ("none", "S1" with ``sigma2_0, tau``, "S2" with ``phi1, tau, c1``), ``T``,
``runs`` and ``noise_seed``.
"""

from __future__ import annotations

import functools

import numpy as np

from reference_impl.zcdp_nfl import (
    GroundTruth,
    NFLConfig,
    NFLProblem,
    NFLRun,
    PrivacySchedule,
    StepSchedule,
    centralized_optimum,
    run_zcdp_nfl,
    synthetic_problem,
)
from verify.tolerance import CLARABEL_TOL

__all__ = ["DEFAULTS", "config_from", "problem_from", "run_from", "truth_from"]

#: The small instance (docs/papers/zcdp_nfl.md): K = 10, P = 3, M = 20, mean degree 3, lambda = 1, noise-free.
DEFAULTS = {"seed": 0, "K": 10, "P": 3, "M": 20, "mean_degree": 3.0, "objective": "ridge", "lam": 1.0,
            "heterogeneity": 0.0, "zero_coordinates": 0, "rho": 1.0, "step": "constant", "eta0": 0.5,
            "noise": "none", "sigma2_0": 0.01, "phi1": 1e-2, "tau": 0.99, "c1": 1.0, "T": 200, "runs": 1,
            "noise_seed": 0}


def _full(settings) -> dict:
    unknown = set(settings) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"settings has unknown keys {sorted(unknown)} (allowed: {sorted(DEFAULTS)})")
    return {**DEFAULTS, **settings}


@functools.lru_cache(maxsize=64)
def _problem(key: tuple) -> NFLProblem:
    s = dict(key)
    return synthetic_problem(np.random.default_rng(s["seed"]), K=s["K"], P=s["P"], M=s["M"],
                             mean_degree=s["mean_degree"], objective=s["objective"], lam=s["lam"],
                             heterogeneity=s["heterogeneity"], zero_coordinates=s["zero_coordinates"])


def _problem_key(s: dict) -> tuple:
    return tuple((k, s[k]) for k in ("seed", "K", "P", "M", "mean_degree", "objective", "lam", "heterogeneity",
                                     "zero_coordinates"))


def problem_from(settings) -> NFLProblem:
    return _problem(_problem_key(_full(settings)))


@functools.lru_cache(maxsize=64)
def _truth(key: tuple) -> GroundTruth:
    return centralized_optimum(_problem(key), tol=CLARABEL_TOL)


def truth_from(settings) -> GroundTruth:
    """The CVXPY/Clarabel optimum (tolerance ``CLARABEL_TOL``), certified (see ``GroundTruth.certificate``)."""
    return _truth(_problem_key(_full(settings)))


def config_from(settings) -> NFLConfig:
    s = _full(settings)
    if s["noise"] == "none":
        privacy = PrivacySchedule(kind="none")
    elif s["noise"] == "S1":
        privacy = PrivacySchedule(kind="S1", sigma2_0=s["sigma2_0"], tau=s["tau"], c1=s["c1"])
    else:
        privacy = PrivacySchedule(kind=s["noise"], phi1=s["phi1"], tau=s["tau"], c1=s["c1"])
    return NFLConfig(rho=s["rho"], step=StepSchedule(kind=s["step"], eta0=s["eta0"]), privacy=privacy)


def run_from(settings, *, keep_trajectory: bool = False) -> NFLRun:
    """Run the settings (error curve against the certified optimum)."""
    s = _full(settings)
    return run_zcdp_nfl(problem_from(s), config_from(s), s["T"], np.random.default_rng(s["noise_seed"]),
                        runs=s["runs"], w_c=truth_from(s).w_c, keep_trajectory=keep_trajectory)
