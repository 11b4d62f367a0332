"""Hypothesis strategies of FedPDM-DP (Privacy-Preserving Federated Primal-Dual Learning for Non-Convex Problems with
Non-Smooth Regularization): Lemmas 1-3, Theorems 1-3, Remarks 1-2, Algorithm 1 and the experiments (verify/fedpdm).

Part of :mod:`verify.strategies` (import them from there).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

__all__ = ["eps_delta_below_crossover_fraction", "eps_delta_below_one", "fedpdm_accounting_regimes",
           "fedpdm_adaptive_q_pairs", "fedpdm_algorithm_settings", "fedpdm_any_noise_settings",
           "fedpdm_classical_violations", "fedpdm_corrected_conditions_strict", "fedpdm_experiment_budgets",
           "fedpdm_experiment_seeds", "fedpdm_federations", "fedpdm_local_rounds", "fedpdm_noiseless_full_settings",
           "fedpdm_noisy_settings", "fedpdm_participation_schedules", "fedpdm_remark2_points",
           "fedpdm_seed_condition_violations", "fedpdm_unit_step_schedules"]


# ---- FedPDM-DP (seed 001_322f61f9958f64f9.txt): Lemma 1, Theorems 1 and 2 ---------------------------


@st.composite
def fedpdm_classical_violations(draw) -> tuple[float, float]:
    """(eps, delta) above the classical calibration's crossover: delta in [1e-12, 0.1] (log), eps in [11, 100].

    The crossover eps*(delta) is at most 10.23 for delta >= 1e-12 (fedpdm.lemma1's details).
    """
    delta = 10.0 ** draw(st.floats(min_value=-12.0, max_value=-1.0))
    epsilon = draw(st.floats(min_value=11.0, max_value=100.0))
    return epsilon, delta


@st.composite
def eps_delta_below_one(draw) -> tuple[float, float]:
    """(eps, delta) with eps in [1e-4, 1) and delta in [1e-300, 0.99] (log scale): Dwork-Roth Thm. A.1's range."""
    epsilon = draw(st.floats(min_value=1e-4, max_value=1.0, exclude_max=True))
    delta = 10.0 ** draw(st.floats(min_value=-300.0, max_value=float(np.log10(0.99))))
    return epsilon, delta


@st.composite
def fedpdm_local_rounds(draw) -> dict:
    """One FedPDM-DP local round: eta rho in (0, 2.5], Q in [1, 20], rho, G on log scales, a random shared state."""
    rho = 10.0 ** draw(st.floats(min_value=-1.0, max_value=2.0))
    eta = draw(st.floats(min_value=1e-3, max_value=2.5)) / rho
    return {"etas": [eta], "Qs": [draw(st.integers(min_value=1, max_value=20))], "rho": rho,
            "G": 10.0 ** draw(st.floats(min_value=-2.0, max_value=2.0)),
            "d": draw(st.integers(min_value=1, max_value=8)),
            "local_start": "warm", "seed": draw(st.integers(min_value=0, max_value=2**31 - 1)),
            "state_scale": 10.0 ** draw(st.floats(min_value=-2.0, max_value=1.0))}


@st.composite
def fedpdm_participation_schedules(draw, *, max_participations: int = 30) -> dict:
    """A client's participations: per-participation eta_j rho in (0, 2), Q_j in [1, 8], warm or global start."""
    n = draw(st.integers(min_value=1, max_value=max_participations))
    rho = 10.0 ** draw(st.floats(min_value=-1.0, max_value=2.0))
    eta_rho = draw(st.lists(st.floats(min_value=1e-3, max_value=1.99), min_size=n, max_size=n))
    return {"etas": [e / rho for e in eta_rho], "Qs": draw(st.lists(st.integers(min_value=1, max_value=8),
                                                                     min_size=n, max_size=n)),
            "rho": rho, "G": 10.0 ** draw(st.floats(min_value=-2.0, max_value=2.0)),
            "d": draw(st.integers(min_value=1, max_value=5)), "local_start": draw(st.sampled_from(["warm", "global"])),
            "seed": draw(st.integers(min_value=0, max_value=2**31 - 1)),
            "state_scale": 10.0 ** draw(st.floats(min_value=-2.0, max_value=1.0))}


@st.composite
def fedpdm_unit_step_schedules(draw) -> dict:
    """Constant schedules with eta rho = 1 exactly (eta = 1/rho for rho a power of two), n >= 2 participations."""
    rho = 2.0 ** draw(st.integers(min_value=-3, max_value=6))
    n = draw(st.integers(min_value=2, max_value=30))
    Q = draw(st.integers(min_value=1, max_value=10))
    return {"etas": [1.0 / rho] * n, "Qs": [Q] * n, "rho": rho,
            "G": 10.0 ** draw(st.floats(min_value=-2.0, max_value=2.0)),
            "d": draw(st.integers(min_value=1, max_value=5)), "local_start": draw(st.sampled_from(["warm", "global"])),
            "construction": "adversarial", "seed": draw(st.integers(min_value=0, max_value=2**31 - 1)),
            "state_scale": 1.0}


@st.composite
def fedpdm_accounting_regimes(draw) -> tuple[float, float, int]:
    """(per-round eps in [0.1, 1], delta in [1e-8, 1e-3] (log), participations n in [15, 1000] (log))."""
    epsilon = draw(st.floats(min_value=0.1, max_value=1.0))
    delta = 10.0 ** draw(st.floats(min_value=-8.0, max_value=-3.0))
    n = int(round(10.0 ** draw(st.floats(min_value=float(np.log10(15.0)), max_value=3.0))))
    return epsilon, delta, n


# --- fedpdm: Algorithm 1 reference implementation (verify/fedpdm/algorithm.py) ---------------------------------


@st.composite
def fedpdm_algorithm_settings(draw) -> dict:
    """A setting of docs/papers/fedpdm.md#instances on instance NC (N = 10, |D_i| = 60): K, batch rule and size with
    Q_max * b <= 60 for disjoint batches, noise mode, local start, nu, beta; full participation and full batch drawn
    often."""
    K = draw(st.sampled_from([10, draw(st.integers(min_value=1, max_value=10))]))
    rule = draw(st.sampled_from(["disjoint", "fresh"]))
    b = draw(st.sampled_from([60, draw(st.integers(min_value=1, max_value=30))])) if rule == "fresh" else \
        draw(st.integers(min_value=1, max_value=30))
    Q_max = draw(st.integers(min_value=1, max_value=max(1, 60 // b) if rule == "disjoint" else 40))
    noise = draw(st.sampled_from(["dp", "fixed", "none"]))
    return {"name": "drawn", "K": K, "batch_size": b, "batch_rule": rule, "Q_max": Q_max,
            "nu": 10.0 ** draw(st.floats(min_value=-12.0, max_value=-1.0)), "noise": noise,
            "noise_Q": draw(st.sampled_from(["adaptive", "cap"])),
            "local_start": draw(st.sampled_from(["warm", "global"])),
            "beta": draw(st.sampled_from([0.0, 0.1])), "eta0": draw(st.floats(min_value=0.01, max_value=0.15)),
            "epsilon": draw(st.floats(min_value=0.1, max_value=5.0)),
            "sigma": draw(st.floats(min_value=1e-3, max_value=1.0))}


# --- fedpdm: Theorem 3, Lemmas 2-3, the condition on L, realised-count accounting ------------------------------


@st.composite
def fedpdm_seed_condition_violations(draw) -> tuple[float, float]:
    """(L, rho) inside the seed's range 2 sqrt5 - 4 <= L <= rho/4 but outside 1/2 < L < rho/4: L in [2 sqrt5 - 4, 1/2]
    (rho in [2, 100]) or L = rho/4 exactly."""
    rho = draw(st.floats(min_value=2.0, max_value=100.0))
    if draw(st.booleans()):
        return float(draw(st.floats(min_value=2.0 * np.sqrt(5.0) - 4.0, max_value=0.5))), rho
    return rho / 4.0, rho


@st.composite
def fedpdm_noisy_settings(draw) -> dict:
    """Instance-NC settings with noise well above the seed's C3 = 8 rho: d in {20, 40}, K in {2, 5, 10} of N = 10,
    rho = 10, sigma in [0.03, 0.1], full batch (d rho/(8K) >= 2.5)."""
    return {"d": draw(st.sampled_from([20, 40])), "N": 10, "K": draw(st.sampled_from([2, 5, 10])), "batch_size": 60,
            "nu": 1e-8, "sigma": draw(st.floats(min_value=0.03, max_value=0.1)), "rho": 10.0, "eta": 0.08, "T": 200,
            "runs": 3, "seed": draw(st.integers(min_value=0, max_value=2**31 - 1)), "L_declared": 1.0}


@st.composite
def fedpdm_any_noise_settings(draw) -> dict:
    """Instance-NC settings for the corrected Theorem 3: d in {10, 20, 40}, K in {2, 5, 10}, rho in {10, 20}
    (eta rho = 0.8), sigma in [0.003, 0.1] or 0 (then mini-batches b = 10 are drawn too)."""
    rho = draw(st.sampled_from([10.0, 20.0]))
    sigma = draw(st.sampled_from([0.0, draw(st.floats(min_value=0.003, max_value=0.1))]))
    b = 60 if sigma > 0 else draw(st.sampled_from([10, 60]))
    return {"d": draw(st.sampled_from([10, 20, 40])), "N": 10, "K": draw(st.sampled_from([2, 5, 10])), "batch_size": b,
            "nu": 1e-8 if b == 60 else 1e-3, "sigma": sigma, "rho": rho, "eta": 0.8 / rho, "T": 200, "runs": 3,
            "seed": draw(st.integers(min_value=0, max_value=2**31 - 1)), "L_declared": 1.0}


@st.composite
def fedpdm_noiseless_full_settings(draw) -> dict:
    """Noiseless, K = N = 10: d in {10, 20, 40}, rho in {10, 20} (eta rho = 0.8), full batch or b = 10."""
    rho = draw(st.sampled_from([10.0, 20.0]))
    b = draw(st.sampled_from([10, 60]))
    return {"d": draw(st.sampled_from([10, 20, 40])), "N": 10, "K": 10, "batch_size": b,
            "nu": 1e-8 if b == 60 else 1e-3,
            "sigma": 0.0, "rho": rho, "eta": 0.8 / rho, "T": 200, "runs": 3,
            "seed": draw(st.integers(min_value=0, max_value=2**31 - 1)), "L_declared": 1.0}


@st.composite
def fedpdm_federations(draw) -> dict:
    """Federations for the realised-count accounting: N in [20, 200], 1 <= K <= N/10, T in [100, 400], per-round
    eps in [0.2, 1], q in {0.05, 0.1, 0.25}, delta = 1e-5."""
    N = draw(st.integers(min_value=20, max_value=200))
    return {"N": N, "K": draw(st.integers(min_value=1, max_value=N // 10)),
            "T": draw(st.integers(min_value=100, max_value=400)),
            "epsilon": draw(st.floats(min_value=0.2, max_value=1.0)), "delta": 1e-5,
            "q": draw(st.sampled_from([0.05, 0.1, 0.25])), "seed": draw(st.integers(min_value=0, max_value=2**31 - 1))}


# --- fedpdm (continued) ----------------------------------------------------------------------------------------


@st.composite
def fedpdm_corrected_conditions_strict(draw) -> tuple[float, float, int, int]:
    """(L, rho, N, K) with 1/2 < L < rho/4 strictly, rho in [2.01, 200] (so the L interval holds floats), 1 <= K <= N
    <= 200."""
    rho = draw(st.floats(min_value=2.01, max_value=200.0))
    L = draw(st.floats(min_value=0.5, max_value=rho / 4.0, exclude_min=True, exclude_max=True))
    N = draw(st.integers(min_value=1, max_value=200))
    return L, rho, N, draw(st.integers(min_value=1, max_value=N))


# --- fedpdm (Theorem 1 with the adaptive Q of rule (11)) ---
@st.composite
def fedpdm_adaptive_q_pairs(draw) -> dict:
    """Legal neighbouring pairs for ``verify.fedpdm.upload_simulation.evaluate_adaptive_q``: rho in [1, 20],
    eta rho in [0.02, 0.9] (the s(Q) of (19) grows with Q), G in [0.1, 2], batch b in [1, 20], Q_max in [2, 10],
    d in [1, 5], nu a fraction in [0.01, 0.9] of 4 G^2 / b^2 (so D stops at Q = 1 and D' does not),
    eps in [0.1, 0.99] (classical calibration valid), delta in {1e-3, 1e-5, 1e-8}."""
    rho = draw(st.floats(min_value=1.0, max_value=20.0))
    G = draw(st.floats(min_value=0.1, max_value=2.0))
    b = draw(st.integers(min_value=1, max_value=20))
    return {"d": draw(st.integers(min_value=1, max_value=5)), "b": b,
            "Q_max": draw(st.integers(min_value=2, max_value=10)),
            "eta": draw(st.floats(min_value=0.02, max_value=0.9)) / rho, "rho": rho, "G": G,
            "nu": draw(st.floats(min_value=0.01, max_value=0.9)) * 4.0 * G**2 / b**2,
            "epsilon": draw(st.floats(min_value=0.1, max_value=0.99)),
            "delta": draw(st.sampled_from([1e-3, 1e-5, 1e-8]))}


# --- fedpdm (Lemma 1 corrected up to the crossover eps*(delta)) ---
@st.composite
def eps_delta_below_crossover_fraction(draw) -> tuple[float, float]:
    """(u, delta) with u in [1e-4, 1) and delta in [1e-300, 0.99] (log scale): the point eps = u eps*(delta) lies in
    the corrected Lemma 1's range (0, eps*(delta)) (eps* by ``verify.fedpdm.lemma1_gaussian.crossover_epsilon``)."""
    fraction = draw(st.floats(min_value=1e-4, max_value=1.0, exclude_max=True))
    delta = 10.0 ** draw(st.floats(min_value=-300.0, max_value=float(np.log10(0.99))))
    return fraction, delta


# --- fedpdm experiments (verify/fedpdm/experiments.py) ---
def fedpdm_experiment_seeds() -> st.SearchStrategy[int]:
    """Root seeds of the FedPDM-DP experiment design (each fixes every replicate's data and run draws)."""
    return st.integers(0, 2**16)


def fedpdm_experiment_budgets() -> st.SearchStrategy[float]:
    """Total budgets epsbar log-uniform on [5, 30] (the paper's Fig. 1 and Fig. 2 values 7, 10, 20, 30 inside)."""
    return st.floats(float(np.log10(5.0)), float(np.log10(30.0))).map(lambda e: float(10.0**e))


# --- fedpdm Remark 2 (verify/fedpdm/remark2_rate.py) ---
def fedpdm_remark2_points() -> st.SearchStrategy[dict]:
    """Remark 2's parameter points: the check's own space, ``verify.fedpdm.remark2_rate.remark2_space`` (one sampler
    per claim)."""
    from verify.fedpdm.remark2_rate import remark2_space

    return remark2_space.strategy()
