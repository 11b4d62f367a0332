"""Hypothesis strategies of GTV (Clustered Federated Learning via Generalized Total Variation Minimization):
convergence, well-connected and chain cases, SBM seeds and the experiments (verify/gtv).

Part of :mod:`verify.strategies` (import them from there).
"""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["gtv_chain_boundary_weights", "gtv_chain_cases", "gtv_convergence_cases", "gtv_digits_root_seeds",
           "gtv_sbm_seeds", "gtv_well_connected_cases"]


# --- GTV clustered FL (seed 002; verify/gtv) -----------------------------------------------------------------------
@st.composite
def gtv_convergence_cases(draw, penalty: str | None = None, loss: str = "squared") -> dict:
    """Instances for Algorithm 1 vs CVXPY (docs/papers/gtv.md#instances): SBM 2 x 6, d = 4, m in {2, 6}, lam log-uniform
    in [1e-2, 1]."""
    return {"penalty": penalty or draw(st.sampled_from(["l2", "l1", "mocha", "quad"])), "loss": loss,
            "seed": draw(st.integers(0, 2**31 - 1)), "m": draw(st.sampled_from([2, 6])),
            "lam": 10.0 ** draw(st.floats(-2.0, 0.0)), "size": 6}


@st.composite
def gtv_well_connected_cases(draw, penalty: str | None = None) -> dict:
    """Dense clusters K_N with a light boundary whose eps (fraction kappa of the limit) and lam (lam_factor x 3 max
    delta) make every cluster satisfy (35) by construction (verify.gtv._instances.well_connected_case)."""
    d = draw(st.integers(2, 4))
    return {"kind": "dense", "seed": draw(st.integers(0, 2**31 - 1)), "N": draw(st.integers(6, 12)),
            "k": draw(st.integers(2, 3)), "d": d, "m": draw(st.integers(d + 2, 12)),
            "noise": draw(st.floats(0.0, 0.1)), "n_inter": draw(st.integers(1, 6)),
            "kappa": draw(st.floats(0.05, 0.95)), "lam_factor": draw(st.floats(1.0, 10.0)),
            "penalty": penalty or draw(st.sampled_from(["l2", "l1"]))}


@st.composite
def gtv_chain_cases(draw) -> dict:
    """Noiseless d = 1 chains 2 x n with boundary weight eps < 1 (so (35) holds with the boundary anchor,
    R1 (docs/papers/gtv.md#review-r1))."""
    return {"kind": "chain", "seed": draw(st.integers(0, 2**31 - 1)), "n": draw(st.integers(3, 10)), "m": 3,
            "eps": draw(st.floats(0.05, 0.9)), "lam": draw(st.floats(0.05, 0.3))}


def gtv_sbm_seeds() -> st.SearchStrategy[int]:
    """Replicate seeds of the paper's SBM (section 5.1)."""
    return st.integers(0, 2**31 - 1)


# --- GTV experiments (verify/gtv/test_experiments.py) -------------------------------------------------------------
def gtv_chain_boundary_weights() -> st.SearchStrategy[float]:
    """Chain boundary weights eps in [0.2, 1] (section 5.3: the inter-cluster edge weight of Figs. 3-4)."""
    return st.floats(0.2, 1.0)


# --- GTV digits experiment (verify/gtv/test_digits.py) ------------------------------------------------------------
def gtv_digits_root_seeds() -> st.SearchStrategy[int]:
    """Root seeds of the digits stand-in (§5.4): each fixes every replicate's split, graph and IFCA models."""
    return st.integers(0, 2**31 - 1)
