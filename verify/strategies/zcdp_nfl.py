"""Hypothesis strategies of zCDP-NFL (Gauthier's thesis, Chapter 3 / Publication 2): privacy schedules, the network
form, Lemma II, Theorems II-IV and the experiments (verify/zcdp_nfl).

Part of :mod:`verify.strategies` (import them from there).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

__all__ = ["nfl_network_settings", "nfl_privacy_schedules", "nfl_run_settings", "nfl_tradeoff_points",
           "nfl_update_settings", "zcdp_budgets", "zcdp_nfl_experiment_seeds", "zcdp_nfl_privacy_budgets"]


# --- zCDP-NFL (seed 004, Chapter 3 / Publication 2) ----------------------------------------------


@st.composite
def nfl_update_settings(draw) -> tuple[dict, int]:
    """A zCDP-NFL round (K, P, M, rho, eta^(n), history scale, loss) and the seed of its random instance.

    Losses satisfy Assumption 1 with c1 = 1 (LAD on the unit ball, or clipped squared loss); every
    setting is admissible, the instance is built by ``verify.zcdp_nfl.lemma1_sensitivity.instance_from_settings``.
    """
    settings = {"K": draw(st.integers(min_value=2, max_value=12)), "P": draw(st.integers(min_value=1, max_value=8)),
                "M": draw(st.integers(min_value=1, max_value=60)),
                "rho": 10.0 ** draw(st.floats(min_value=-2.0, max_value=2.0)),
                "eta": 10.0 ** draw(st.floats(min_value=-4.0, max_value=2.0)),
                "history_scale": 10.0 ** draw(st.floats(min_value=-2.0, max_value=2.0)), "regular_degree": None,
                "loss": draw(st.sampled_from(["lad", "clipped_squared"]))}
    return settings, draw(st.integers(min_value=0, max_value=2**32 - 1))


@st.composite
def nfl_privacy_schedules(draw) -> tuple[float, float, int]:
    """(phi1 > 0, tau in [0.5, 1), T >= 1) for phi^(n) = phi1 tau^-(n-1), with tau^-T inside the double range."""
    phi1 = 10.0 ** draw(st.floats(min_value=-6.0, max_value=0.0))
    tau = draw(st.floats(min_value=0.5, max_value=1.0, exclude_max=True))
    max_rounds = int(min(2000, 600.0 / -np.log(tau)))
    return phi1, tau, draw(st.integers(min_value=1, max_value=max_rounds))


@st.composite
def nfl_tradeoff_points(draw) -> tuple[list[float], float, float]:
    """(Delta_1..Delta_K > 0, phi > 0, tau in (0, 1)) with K in 1..60, for the trade-off noise term."""
    deltas = draw(st.lists(st.floats(min_value=-6.0, max_value=2.0).map(lambda e: 10.0**e), min_size=1, max_size=60))
    phi = 10.0 ** draw(st.floats(min_value=-4.0, max_value=1.0))
    tau = draw(st.floats(min_value=0.0, max_value=1.0, exclude_min=True, exclude_max=True))
    return deltas, phi, tau


def zcdp_budgets() -> st.SearchStrategy[float]:
    """Per-iteration zCDP budgets phi in [1e-3, 0.2] (log-uniform): alpha (alpha - 1) phi <= 2.4 for alpha <= 4."""
    return st.floats(min_value=-3.0, max_value=float(np.log10(0.2))).map(lambda e: 10.0**e)


# --- zcdp_nfl (convergence side: network form, Lemma II, Theorems II-IV; verify/zcdp_nfl) ------------------------


@st.composite
def nfl_network_settings(draw, *, noise: bool = True) -> dict:
    """Settings of verify.zcdp_nfl._runs: a connected random graph (K in 3..12), one of the three objectives, any
    step family (growing with eta0 <= 1e-3 so 30 rounds stay finite), S1 noise (or none), T = 30."""
    K = draw(st.integers(min_value=3, max_value=12))
    step = draw(st.sampled_from(["constant", "inv_sqrt", "inv", "inv_square", "growing"]))
    eta_exp = draw(st.floats(min_value=-4.0, max_value=-3.0) if step == "growing" else st.floats(min_value=-2.0,
                                                                                                   max_value=0.3))
    return {"seed": draw(st.integers(min_value=0, max_value=2**31 - 1)), "K": K, "mean_degree": float(min(3.0, K - 1)),
            "P": draw(st.integers(min_value=1, max_value=4)), "M": draw(st.integers(min_value=2, max_value=20)),
            "objective": draw(st.sampled_from(["elastic_net", "lad", "ridge"])),
            "rho": 10.0 ** draw(st.floats(min_value=-1.0, max_value=1.0)), "step": step, "eta0": 10.0**eta_exp,
            "noise": "S1" if noise else "none", "sigma2_0": 10.0 ** draw(st.floats(min_value=-5.0, max_value=-1.0)),
            "tau": draw(st.floats(min_value=0.9, max_value=0.999)), "T": 30,
            "noise_seed": draw(st.integers(min_value=0, max_value=2**31 - 1))}


@st.composite
def nfl_run_settings(draw, *, steps=("constant", "inv_sqrt", "inv"), noise: bool = False, T: int = 150) -> dict:
    """Settings on the small instance family of docs/papers/zcdp_nfl.md#instances (K = 10, P = 3, M = 20, mean degree 3,
    random seed), one of the three objectives, rho in [0.3, 3], a step family of ``steps`` with eta0 in [0.01, 0.5], S2
    noise if asked."""
    return {"seed": draw(st.integers(min_value=0, max_value=2**31 - 1)),
            "objective": draw(st.sampled_from(["elastic_net", "lad", "ridge"])),
            "rho": 10.0 ** draw(st.floats(min_value=-0.5, max_value=0.5)), "step": draw(st.sampled_from(list(steps))),
            "eta0": 10.0 ** draw(st.floats(min_value=-2.0, max_value=-0.3)), "noise": "S2" if noise else "none",
            "phi1": 10.0 ** draw(st.floats(min_value=-2.0, max_value=0.0)), "tau": 0.99, "T": T,
            "noise_seed": draw(st.integers(min_value=0, max_value=2**31 - 1))}


# --- zcdp_nfl experiments (verify/zcdp_nfl/experiments.py) ---
def zcdp_nfl_experiment_seeds() -> st.SearchStrategy[int]:
    """Root seeds of the zCDP-NFL experiment design (each fixes every replicate's instance and noise)."""
    return st.integers(0, 2**16)


def zcdp_nfl_privacy_budgets() -> st.SearchStrategy[float]:
    """phi^(1) log-uniform on the trade-off range of docs/papers/zcdp_nfl.md#experiments [1e-4, 1e-2]."""
    return st.floats(-4.0, -2.0).map(lambda e: float(10.0**e))
