"""Hypothesis strategies of PAO-Fed (Gauthier's thesis, Chapter 4 / P4): analysis instances, the mean and mean-square
analysis, the transient MSD, the paper-scale reduction and the experiments (theory.msd, verify/paofed).

Part of :mod:`verify.strategies` (import them from there).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

__all__ = ["paofed_communication_cases", "paofed_enumeration_cases", "paofed_hard_instances", "paofed_instances",
           "paofed_reference_step_sizes", "paofed_spd_stacks", "paofed_transient_step_sizes",
           "paofed_white_scaled_sizes"]


def paofed_communication_cases() -> st.SearchStrategy[dict]:
    """A short PAO-Fed / PSO-Fed / Online-Fed run (case dict of verify.paofed.sim_communication): the check's own
    space, ``verify.paofed.sim_communication.communication_space`` (one sampler per claim)."""
    from verify.paofed.sim_communication import communication_space

    return communication_space.strategy()


def paofed_reference_step_sizes() -> st.SearchStrategy[float]:
    """mu * lambda_max on the PAO-Fed reference instance (docs/papers/paofed.md#instances) where rho(F_exact) < 1 and
    the Monte-Carlo steady state is reached within a few hundred iterations."""
    return st.sampled_from((0.1, 0.2))


# ---- PAO-Fed mean / mean-square analysis (seed 004, Ch. 4 / P4; theory.msd, verify.paofed) ------------------


@st.composite
def _paofed_spd_stack(draw, K: int, D: int, lo: float = 0.2, hi: float = 2.0) -> list:
    """K symmetric positive definite D x D matrices with eigenvalues in [lo, hi] (rotation from the QR factor of a
    drawn matrix, which is orthogonal even when the drawn matrix is singular)."""
    out = []
    for _ in range(K):
        raw = np.array(draw(st.lists(st.floats(min_value=-1.0, max_value=1.0), min_size=D * D,
                                     max_size=D * D))).reshape(D, D)
        Q, _ = np.linalg.qr(raw + 1e-3 * np.eye(D))
        ev = np.array(draw(st.lists(st.floats(min_value=lo, max_value=hi), min_size=D, max_size=D)))
        R = (Q * ev) @ Q.T
        out.append((0.5 * (R + R.T)).tolist())
    return out


def paofed_instances(*, max_K: int = 3, max_D: int = 3, max_l: int = 2, max_N: int | None = None,
                     nonnegative_server_weight: bool = True,
                     mu_times_lambda: tuple[float, float] = (0.05, 0.4)) -> st.SearchStrategy[dict]:
    """A PAO-Fed analysis instance as plain data: ``verify.paofed._common.instance_space``, the space the checks
    sample (one sampler per claim; its docstring lists the ranges)."""
    from verify.paofed._common import instance_space

    return instance_space.strategy(max_K=max_K, max_D=max_D, max_l=max_l, max_N=max_N,
                                   nonnegative_server_weight=nonnegative_server_weight, mu_times_lambda=mu_times_lambda)


@st.composite
def paofed_enumeration_cases(draw) -> dict:
    """(p, delta, alpha, selection law, x_seed) at the enumeration size K = 2, D = 3, m = 2, l_max = 1
    (``verify.paofed.expectations_enumeration.evaluate_expectations``); the law is subset or window (the
    i.i.d. Bernoulli law has 6561 B-outcomes and is left to the thorough registry run)."""
    return {"p": draw(st.lists(st.floats(min_value=0.05, max_value=1.0), min_size=2, max_size=2)),
            "delta": draw(st.floats(min_value=0.0, max_value=0.9)),
            "alpha": [1.0, draw(st.floats(min_value=0.0, max_value=1.0))],
            "selection": draw(st.sampled_from(["subset", "window"])),
            "x_seed": draw(st.integers(min_value=0, max_value=2**31 - 1))}


def paofed_spd_stacks(K: int, D: int, lo: float = 0.01, hi: float = 3.0) -> st.SearchStrategy[list]:
    """K positive definite D x D regressor covariances with eigenvalues in [lo, hi] (plain nested lists)."""
    return _paofed_spd_stack(K, D, lo, hi)


# ---- PAO-Fed transient MSD and experiments (verify/paofed/sim_transient.py, experiments.py) -----------------


def paofed_transient_step_sizes() -> st.SearchStrategy[float]:
    """mu * lambda_max on the PAO-Fed reference instance (docs/papers/paofed.md#instances) in [0.05, 0.3]: rho(F_exact)
    < 1 (the exact threshold is 0.6724) and the learning curve up to n = 400 is resolved by a few hundred
    SIM-A (docs/papers/paofed.md#choice-simulators) runs."""
    return st.floats(min_value=0.05, max_value=0.3)


# --- paofed paper scale (white reduction) ---


@st.composite
def paofed_white_scaled_sizes(draw) -> dict:
    """(K, D, l_max) of a scaled-down paper set-up for verify.paofed.paper_scale: K a multiple of the 4
    availability groups (4 or 8), D in 3..8, l_max in 1..4 (the white reduction keeps each solve N_b^2)."""
    return {"K": 4 * draw(st.integers(1, 2)), "D": draw(st.integers(3, 8)), "l_max": draw(st.integers(1, 4))}


# --- paofed (Theorem 2 seed model: the counterexample search) ---
@st.composite
def paofed_hard_instances(draw, max_N: int = 30) -> dict:
    """Instances aimed at rho(F_seed) near 1 (``verify.paofed.theorem2.hard_instance`` from a drawn seed): R_k condition
    numbers up to 1e4, p down to 1e-2, delta up to 0.95, E[B_n] >= 0 by construction, N up to ``max_N``."""
    import numpy as np

    from verify.paofed._common import instance_to_dict
    from verify.paofed.theorem2 import hard_instance

    return instance_to_dict(hard_instance(np.random.default_rng(draw(st.integers(0, 2**32 - 1))), max_N=max_N))
