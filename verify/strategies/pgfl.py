"""Hypothesis strategies of PGFL (Personalized Graph Federated Learning with Differential Privacy): Lemma 1, Theorems
I-III, the single-step server update and the regression and classification experiments (verify/pgfl).

Part of :mod:`verify.strategies` (import them from there).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

__all__ = ["pgfl_classification_root_seeds", "pgfl_dissimilar_gammas", "pgfl_experiment_seeds",
           "pgfl_huber_attaining_instances", "pgfl_large_taus", "pgfl_moderate_taus", "pgfl_neighbouring_instances",
           "pgfl_phi0_pairs", "pgfl_private_instances", "pgfl_private_iteration_instances",
           "pgfl_single_step_instances", "pgfl_tau0_instances", "pgfl_tau_decays", "pgfl_theorem2_instances",
           "pgfl_zeta_pairs", "tau_sequences"]


def tau_sequences(*, max_len: int = 300) -> st.SearchStrategy[np.ndarray]:
    """Inter-cluster weights tau_1..tau_n in [0, 1]: ``verify.pgfl._instances.TAU_SEQUENCES`` (the space the
    ``pgfl.theorem2.bound_closed_form`` check samples)."""
    from verify.pgfl._instances import TAU_SEQUENCES  # lazy: keeps this module numpy-only at import

    return TAU_SEQUENCES.strategy(max_len=max_len)


# --- PGFL Lemma 1 / Theorem III (client subproblem (4), seed 000) --------------------------------


def pgfl_neighbouring_instances(*, losses=("logistic", "huber"), max_dim: int = 8,
                                max_samples: int = 10) -> st.SearchStrategy[dict]:
    """A client subproblem (4) and a replace-one neighbour satisfying Assumption 3:
    ``verify.pgfl._lemma1_records.NEIGHBOURING_INSTANCES`` (the space the Lemma 1 / Theorem III checks sample)."""
    from verify.pgfl._lemma1_records import NEIGHBOURING_INSTANCES  # lazy: keeps this module numpy-only at import

    return NEIGHBOURING_INSTANCES.strategy(losses=losses, max_dim=max_dim, max_samples=max_samples)


def pgfl_huber_attaining_instances(*, max_dim: int = 6, max_samples: int = 10) -> st.SearchStrategy[dict]:
    """Parameters of ``verify.pgfl._lemma1_records.attained_huber_instance`` (Huber, lambda = 0):
    ``HUBER_ATTAINING_INSTANCES`` of that module (the space the check samples)."""
    from verify.pgfl._lemma1_records import HUBER_ATTAINING_INSTANCES  # lazy: keeps this module numpy-only at import

    return HUBER_ATTAINING_INSTANCES.strategy(max_dim=max_dim, max_samples=max_samples)


# --- PGFL Theorem I (tau = 0 convergence; verify/pgfl/theorem1.py) ---------------------------------


def _pgfl_connected_edges(draw, servers: int, *, tree_only: bool) -> list[tuple[int, int]]:
    """A spanning tree (server i joins a drawn earlier server) plus, unless ``tree_only``, drawn extra edges."""
    edges = {(draw(st.integers(min_value=0, max_value=i - 1)), i) for i in range(1, servers)}
    others = [(i, j) for i in range(servers) for j in range(i + 1, servers) if (i, j) not in edges]
    if others and not tree_only:
        edges |= set(draw(st.lists(st.sampled_from(others), unique=True, max_size=len(others))))
    return sorted(edges)


def pgfl_tau0_instances(*, min_servers: int = 1, max_servers: int = 4, tree_only: bool = False,
                        data: str | None = None) -> st.SearchStrategy[dict]:
    """Ridge instances of Theorem I: ``verify.pgfl._instances.TAU0_INSTANCES`` (the space its checks sample)."""
    from verify.pgfl._instances import TAU0_INSTANCES  # lazy: keeps this module numpy-only at import

    return TAU0_INSTANCES.strategy(min_servers=min_servers, max_servers=max_servers, tree_only=tree_only, data=data)


def pgfl_private_instances(*, zeta: float | None = None, min_servers: int = 1) -> st.SearchStrategy[dict]:
    """Instances of Theorem I with privacy noise: ``verify.pgfl._instances.PRIVATE_INSTANCES`` (the checks' space)."""
    from verify.pgfl._instances import PRIVATE_INSTANCES  # lazy: keeps this module numpy-only at import

    return PRIVATE_INSTANCES.strategy(zeta=zeta, min_servers=min_servers)


# --- PGFL regression experiments R-1 (docs/papers/pgfl.md#exp-r1) ... R-7 (docs/papers/pgfl.md#exp-r6)
# (verify/pgfl/experiments.py)


def pgfl_experiment_seeds() -> st.SearchStrategy[int]:
    """Root seeds of a Monte-Carlo experiment (every replicate's instance and algorithm seed derive from it)."""
    return st.integers(min_value=0, max_value=2**32 - 1)


def pgfl_moderate_taus() -> st.SearchStrategy[float]:
    """Constant inter-cluster weights tau in [0.2, 0.5] (around the paper's 0.4, inside
    R-4 (docs/papers/pgfl.md#exp-r4)'s (0.1, 0.5))."""
    return st.floats(min_value=0.2, max_value=0.5)


def pgfl_large_taus() -> st.SearchStrategy[float]:
    """Large constant inter-cluster weights tau in [0.6, 0.95] (R-4 (docs/papers/pgfl.md#exp-r4)'s "too large" end of
    the grid)."""
    return st.floats(min_value=0.6, max_value=0.95)


def pgfl_dissimilar_gammas() -> st.SearchStrategy[float]:
    """Cluster-model spreads gamma in [0.6, 0.8] (gamma_q ~ U(-gamma, gamma)): at least
    R-5 (docs/papers/pgfl.md#exp-r5)'s dissimilarity."""
    return st.floats(min_value=0.6, max_value=0.8)


def pgfl_tau_decays() -> st.SearchStrategy[float]:
    """Decay factors beta in [0.95, 0.99] of tau^(n) = 0.4 beta^n (the paper's 0.98 inside)."""
    return st.floats(min_value=0.95, max_value=0.99)


@st.composite
def pgfl_phi0_pairs(draw) -> tuple[float, float]:
    """(small, large) initial zCDP parameters: small in [1e-4, 3e-4], large in [1e-2, 1e-1] (log-uniform)."""
    small = 10.0 ** draw(st.floats(min_value=-4.0, max_value=float(np.log10(3e-4))))
    large = 10.0 ** draw(st.floats(min_value=-2.0, max_value=-1.0))
    return small, large


@st.composite
def pgfl_zeta_pairs(draw) -> tuple[float, float]:
    """(small, large) noise-variance decay factors: small in [0.9, 0.95], large in [0.995, 0.999]."""
    return draw(st.floats(min_value=0.9, max_value=0.95)), draw(st.floats(min_value=0.995, max_value=0.999))


# --- PGFL single-step server update V0 (docs/papers/pgfl.md#single-step) (verify/pgfl/single_step.py) -----------------


def pgfl_single_step_instances() -> st.SearchStrategy[dict]:
    """Ridge instances of the V0 (docs/papers/pgfl.md#single-step) claims:
    ``verify.pgfl._instances.SINGLE_STEP_INSTANCES`` (the checks' space)."""
    from verify.pgfl._instances import SINGLE_STEP_INSTANCES  # lazy: keeps this module numpy-only at import

    return SINGLE_STEP_INSTANCES.strategy()


# --- PGFL Theorem II with privacy noise (verify/pgfl/theorem2.py) ---------------------------------------------


@st.composite
def pgfl_theorem2_instances(draw, *, iterations: int = 30, runs: int = 3) -> dict:
    """Parameters for ``verify.pgfl.theorem2.evaluate_noise_decomposition`` (instance built by
    ``verify.pgfl._instances.build_instance``), after docs/papers/pgfl.md#instances: S in [1, 6] with a connected
    graph (spanning tree plus drawn edges), Q in [2, 4], clients per server in [Q, 5] (every group C_{s,(q)}
    non-empty by construction), d in [2, 8], D_k in [1, 10], lambda in [1e-3, 1] (log-uniform), gaussian data;
    rho/L_max in [0.1, 100] (log-uniform: the page's [0.1, 0.5] widened toward Theorem II's "sufficiently large
    rho"); tau constant in [0, 0.95] or tau_0 beta^n (tau_0 in [0.05, 0.95], beta in [0.9, 0.999]); privacy
    phi0 in [1e-3, 1] (log-uniform), zeta in [0.9, 1], C in [0.1, 1]; ``runs`` runs of ``iterations`` iterations."""
    S = draw(st.integers(min_value=1, max_value=6))
    Q = draw(st.integers(min_value=2, max_value=4))
    if draw(st.booleans()):
        taus = (draw(st.floats(min_value=0.0, max_value=0.95)),)
    else:
        tau0 = draw(st.floats(min_value=0.05, max_value=0.95))
        beta = draw(st.floats(min_value=0.9, max_value=0.999))
        taus = tuple(float(tau0 * beta**n) for n in range(1, iterations + 1))
    return {"seed": draw(st.integers(min_value=0, max_value=2**32 - 1)), "servers": S,
            "clients_per_server": draw(st.integers(min_value=Q, max_value=5)), "clusters": Q,
            "d": draw(st.integers(min_value=2, max_value=8)),
            "lam": 10.0 ** draw(st.floats(min_value=-3.0, max_value=0.0)), "samples": (1, 10), "data": "gaussian",
            "edges": _pgfl_connected_edges(draw, S, tree_only=False),
            "rho_factor": 10.0 ** draw(st.floats(min_value=-1.0, max_value=2.0)), "taus": taus,
            "phi0": 10.0 ** draw(st.floats(min_value=-3.0, max_value=0.0)),
            "zeta": draw(st.floats(min_value=0.9, max_value=1.0)), "C": draw(st.floats(min_value=0.1, max_value=1.0)),
            "iterations": iterations, "runs": runs, "run_seed": draw(st.integers(min_value=0, max_value=2**32 - 1))}


# --- PGFL classification experiments M-1 (docs/papers/pgfl.md#exp-m) ... M-3 (docs/papers/pgfl.md#exp-m)
# (verify/pgfl/classification.py)


def pgfl_classification_root_seeds() -> st.SearchStrategy[int]:
    """Root seeds 0..5 of the digits classification experiments: the seeds on which each registered verdict of
    ``pgfl.experiment_m1`` ... ``m3`` was established at the ci size (every replicate's instance, scheduling and
    noise derive from the root seed)."""
    return st.integers(min_value=0, max_value=5)


# --- pgfl (private Theorem I, iteration-dominated branch) ---
def pgfl_private_iteration_instances() -> st.SearchStrategy[dict]:
    """Instances of the iteration-dominated branch of the corrected private Theorem I (zeta <= r(T)^2 - 0.05):
    ``verify.pgfl._instances.ITERATION_BRANCH_INSTANCES`` (the checks' space)."""
    from verify.pgfl._instances import ITERATION_BRANCH_INSTANCES

    return ITERATION_BRANCH_INSTANCES.strategy()
