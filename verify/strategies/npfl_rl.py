"""Hypothesis strategies of NPFL-RL (Gauthier's thesis, Chapter 6): small instances and the experiments' seeds
(verify/npfl_rl).

Part of :mod:`verify.strategies` (import them from there).
"""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["npfl_experiment_seeds", "npfl_instances", "npfl_symmetric_instances"]


# --- npfl_rl ---
@st.composite
def npfl_instances(draw) -> dict:
    """Small NPFL-RL instances (docs/papers/npfl_rl.md#instances: K = 6-12, d = 3-8, sparse graphs so that disconnected
    intra-cluster subgraphs, clients without same-cluster neighbours and missing clusters N_k^(r) = {} all occur), as
    settings of ``verify.npfl_rl._common.problem_from``; D_k < d is allowed (singular H_k)."""
    K = draw(st.integers(6, 12))
    d = draw(st.integers(3, 8))
    D_lo = draw(st.integers(2, d + 2))
    return {"seed": draw(st.integers(0, 2**31 - 1)), "K": K, "d": d, "D_lo": D_lo,
            "D_hi": draw(st.integers(D_lo, d + 4)), "mean_degree": draw(st.floats(1.5, min(4.0, K - 1.0))),
            "lam": draw(st.floats(0.01, 1.0)), "symmetric": False}


@st.composite
def npfl_symmetric_instances(draw) -> dict:
    """NPFL-RL instances of K4 (docs/papers/npfl_rl.md#k4)'s symmetric case: every G_q connected and every N_k^(r)
    non-empty (dense graphs)."""
    K = draw(st.integers(9, 12))
    d = draw(st.integers(3, 6))
    return {"seed": draw(st.integers(0, 2**31 - 1)), "K": K, "d": d, "D_lo": 2, "D_hi": d + 3,
            "mean_degree": float(K - 2), "lam": draw(st.floats(0.01, 1.0)), "symmetric": True}


# --- npfl_rl experiments (verify/npfl_rl/experiments.py) ---
def npfl_experiment_seeds() -> st.SearchStrategy[int]:
    """Root seeds of the NPFL-RL experiment design (each fixes every replicate's instance and SAC draws)."""
    return st.integers(0, 2**16)
