"""All Hypothesis strategies of fedcheck.

Each strategy builds instances that satisfy the hypotheses of the claim it serves, by
construction (``@st.composite``), never by filtering.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

__all__ = [
    "eps_delta_below_one",
    "etas",
    "fedpdm_accounting_regimes",
    "fedpdm_classical_violations",
    "fedpdm_local_rounds",
    "fedpdm_participation_schedules",
    "fedpdm_unit_step_schedules",
    "gaussian_mechanisms",
    "geometric_privacy_schedules",
    "nfl_privacy_schedules",
    "nfl_tradeoff_points",
    "nfl_update_settings",
    "paofed_communication_cases",
    "paofed_enumeration_cases",
    "paofed_instances",
    "paofed_reference_step_sizes",
    "paofed_spd_stacks",
    "paofed_transient_step_sizes",
    "pgfl_dissimilar_gammas",
    "pgfl_experiment_seeds",
    "pgfl_huber_attaining_instances",
    "pgfl_large_taus",
    "pgfl_moderate_taus",
    "pgfl_neighbouring_instances",
    "pgfl_phi0_pairs",
    "pgfl_private_instances",
    "pgfl_single_step_instances",
    "pgfl_tau0_instances",
    "pgfl_theorem2_instances",
    "pgfl_tau_decays",
    "pgfl_zeta_pairs",
    "renyi_orders",
    "tau_sequences",
    "zcdp_budgets",
    "zcdp_conversion_points",
    "pgfl_classification_root_seeds",
]


def tau_sequences(*, max_len: int = 300) -> st.SearchStrategy[np.ndarray]:
    """Inter-cluster weights tau_1..tau_n in [0, 1]: ``verify.pgfl._instances.TAU_SEQUENCES`` (the space the
    ``pgfl.theorem2.bound_closed_form`` check samples)."""
    from verify.pgfl._instances import TAU_SEQUENCES  # lazy: keeps this module numpy-only at import

    return TAU_SEQUENCES.strategy(max_len=max_len)


def etas() -> st.SearchStrategy[float]:
    """Squared cluster distances eta >= 0 (zero included), over twelve decades."""
    return st.one_of(st.just(0.0), st.floats(min_value=-6.0, max_value=6.0).map(lambda e: 10.0**e))


@st.composite
def gaussian_mechanisms(draw, *, max_ratio: float = 10.0) -> tuple[float, float]:
    """(sensitivity Delta >= 0, sigma > 0) with Delta / sigma <= max_ratio, sigma in [1e-3, 1e3]."""
    sigma = 10.0 ** draw(st.floats(min_value=-3.0, max_value=3.0))
    ratio = draw(st.one_of(st.just(0.0), st.floats(min_value=1e-4, max_value=max_ratio)))
    return ratio * sigma, sigma


def renyi_orders() -> st.SearchStrategy[float]:
    """Rényi orders alpha in (1, 256]."""
    return st.floats(min_value=1.0, max_value=256.0, exclude_min=True)


@st.composite
def geometric_privacy_schedules(draw) -> tuple[float, float, int, float]:
    """(phi0 > 0, zeta in [0.5, 1], rounds N >= 1, sensitivity > 0) with zeta^-N inside the double range."""
    phi0 = 10.0 ** draw(st.floats(min_value=-6.0, max_value=1.0))
    zeta = draw(st.floats(min_value=0.5, max_value=1.0))
    log_decay = -np.log(zeta)
    max_rounds = int(min(2000, 600.0 / log_decay)) if log_decay > 0 else 2000
    rounds = draw(st.integers(min_value=1, max_value=max_rounds))
    sensitivity = 10.0 ** draw(st.floats(min_value=-3.0, max_value=3.0))
    return phi0, zeta, rounds, sensitivity


@st.composite
def zcdp_conversion_points(draw) -> tuple[float, float]:
    """(rho, delta) with rho in [1e-8, 1e5] (log scale) and delta in [1e-300, 0.999] (log scale, or near 1)."""
    rho = 10.0 ** draw(st.floats(min_value=-8.0, max_value=5.0))
    kind = draw(st.sampled_from(["log", "near_one"]))
    if kind == "log":
        delta = 10.0 ** draw(st.floats(min_value=-300.0, max_value=-1e-3))
    else:
        delta = 1.0 - 10.0 ** draw(st.floats(min_value=-3.0, max_value=-0.3))
    return rho, delta


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
            "G": 10.0 ** draw(st.floats(min_value=-2.0, max_value=2.0)), "d": draw(st.integers(min_value=1, max_value=8)),
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
    return {"etas": [1.0 / rho] * n, "Qs": [Q] * n, "rho": rho, "G": 10.0 ** draw(st.floats(min_value=-2.0, max_value=2.0)),
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


def paofed_communication_cases() -> st.SearchStrategy[dict]:
    """A short PAO-Fed / PSO-Fed / Online-Fed run (case dict of verify.paofed.sim_communication): the check's own
    space, ``verify.paofed.sim_communication.communication_space`` (one sampler per claim)."""
    from verify.paofed.sim_communication import communication_space

    return communication_space.strategy()


def paofed_reference_step_sizes() -> st.SearchStrategy[float]:
    """mu * lambda_max on the PAO-Fed reference instance (spec 4.1) where rho(F_exact) < 1 and the Monte-Carlo
    steady state is reached within a few hundred iterations."""
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


# --- PGFL regression experiments R-1 ... R-7 (verify/pgfl/experiments.py) -----------------------


def pgfl_experiment_seeds() -> st.SearchStrategy[int]:
    """Root seeds of a Monte-Carlo experiment (every replicate's instance and algorithm seed derive from it)."""
    return st.integers(min_value=0, max_value=2**32 - 1)


def pgfl_moderate_taus() -> st.SearchStrategy[float]:
    """Constant inter-cluster weights tau in [0.2, 0.5] (around the paper's 0.4, inside R-4's (0.1, 0.5))."""
    return st.floats(min_value=0.2, max_value=0.5)


def pgfl_large_taus() -> st.SearchStrategy[float]:
    """Large constant inter-cluster weights tau in [0.6, 0.95] (R-4's "too large" end of the grid)."""
    return st.floats(min_value=0.6, max_value=0.95)


def pgfl_dissimilar_gammas() -> st.SearchStrategy[float]:
    """Cluster-model spreads gamma in [0.6, 0.8] (gamma_q ~ U(-gamma, gamma)): at least R-5's dissimilarity."""
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


# --- PGFL single-step server update V0 (verify/pgfl/single_step.py) --------------------------------


def pgfl_single_step_instances() -> st.SearchStrategy[dict]:
    """Ridge instances of the V0 claims: ``verify.pgfl._instances.SINGLE_STEP_INSTANCES`` (the checks' space)."""
    from verify.pgfl._instances import SINGLE_STEP_INSTANCES  # lazy: keeps this module numpy-only at import

    return SINGLE_STEP_INSTANCES.strategy()


# ---- PAO-Fed transient MSD and experiments (verify/paofed/sim_transient.py, experiments.py) -----------------


def paofed_transient_step_sizes() -> st.SearchStrategy[float]:
    """mu * lambda_max on the PAO-Fed reference instance (spec 4.1) in [0.05, 0.3]: rho(F_exact) < 1 (the exact
    threshold is 0.6724) and the learning curve up to n = 400 is resolved by a few hundred SIM-A runs."""
    return st.floats(min_value=0.05, max_value=0.3)


# --- PGFL Theorem II with privacy noise (verify/pgfl/theorem2.py) ---------------------------------------------


@st.composite
def pgfl_theorem2_instances(draw, *, iterations: int = 30, runs: int = 3) -> dict:
    """Parameters for ``verify.pgfl.theorem2.evaluate_noise_decomposition`` (instance built by
    ``verify.pgfl._instances.build_instance``), after spec pgfl.md section 4 preamble: S in [1, 6] with a connected
    graph (spanning tree plus drawn edges), Q in [2, 4], clients per server in [Q, 5] (every group C_{s,(q)}
    non-empty by construction), d in [2, 8], D_k in [1, 10], lambda in [1e-3, 1] (log-uniform), gaussian data;
    rho/L_max in [0.1, 100] (log-uniform: the spec's [0.1, 0.5] widened toward Theorem II's "sufficiently large
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


# --- PGFL classification experiments M-1 ... M-3 (verify/pgfl/classification.py) -------------------------------


def pgfl_classification_root_seeds() -> st.SearchStrategy[int]:
    """Root seeds 0..5 of the digits classification experiments: the seeds on which each registered verdict of
    ``pgfl.experiment_m1`` ... ``m3`` was established at the ci size (every replicate's instance, scheduling and
    noise derive from the root seed)."""
    return st.integers(min_value=0, max_value=5)


# --- zcdp_nfl (convergence side: network form, Lemma II, Theorems II-IV; verify/zcdp_nfl) ------------------------
__all__ += ["nfl_network_settings", "nfl_run_settings"]


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
    """Settings on the spec's small instance family (K = 10, P = 3, M = 20, mean degree 3, random seed), one of the
    three objectives, rho in [0.3, 3], a step family of ``steps`` with eta0 in [0.01, 0.5], S2 noise if asked."""
    return {"seed": draw(st.integers(min_value=0, max_value=2**31 - 1)),
            "objective": draw(st.sampled_from(["elastic_net", "lad", "ridge"])),
            "rho": 10.0 ** draw(st.floats(min_value=-0.5, max_value=0.5)), "step": draw(st.sampled_from(list(steps))),
            "eta0": 10.0 ** draw(st.floats(min_value=-2.0, max_value=-0.3)), "noise": "S2" if noise else "none",
            "phi1": 10.0 ** draw(st.floats(min_value=-2.0, max_value=0.0)), "tau": 0.99, "T": T,
            "noise_seed": draw(st.integers(min_value=0, max_value=2**31 - 1))}


# --- fedpdm: Algorithm 1 reference implementation (verify/fedpdm/algorithm.py) ---------------------------------


@st.composite
def fedpdm_algorithm_settings(draw) -> dict:
    """A setting of spec 4.5 on instance NC (N = 10, |D_i| = 60): K, batch rule and size with Q_max * b <= 60 for
    disjoint batches, noise mode, local start, nu, beta; full participation and full batch drawn often."""
    K = draw(st.sampled_from([10, draw(st.integers(min_value=1, max_value=10))]))
    rule = draw(st.sampled_from(["disjoint", "fresh"]))
    b = draw(st.sampled_from([60, draw(st.integers(min_value=1, max_value=30))])) if rule == "fresh" else \
        draw(st.integers(min_value=1, max_value=30))
    Q_max = draw(st.integers(min_value=1, max_value=max(1, 60 // b) if rule == "disjoint" else 40))
    noise = draw(st.sampled_from(["dp", "fixed", "none"]))
    return {"name": "drawn", "K": K, "batch_size": b, "batch_rule": rule, "Q_max": Q_max,
            "nu": 10.0 ** draw(st.floats(min_value=-12.0, max_value=-1.0)), "noise": noise,
            "noise_Q": draw(st.sampled_from(["adaptive", "cap"])), "local_start": draw(st.sampled_from(["warm", "global"])),
            "beta": draw(st.sampled_from([0.0, 0.1])), "eta0": draw(st.floats(min_value=0.01, max_value=0.15)),
            "epsilon": draw(st.floats(min_value=0.1, max_value=5.0)), "sigma": draw(st.floats(min_value=1e-3, max_value=1.0))}


__all__ += ["fedpdm_algorithm_settings"]


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
    return {"d": draw(st.sampled_from([10, 20, 40])), "N": 10, "K": 10, "batch_size": b, "nu": 1e-8 if b == 60 else 1e-3,
            "sigma": 0.0, "rho": rho, "eta": 0.8 / rho, "T": 200, "runs": 3,
            "seed": draw(st.integers(min_value=0, max_value=2**31 - 1)), "L_declared": 1.0}


@st.composite
def fedpdm_federations(draw) -> dict:
    """Federations for the realised-count accounting: N in [20, 200], 1 <= K <= N/10, T in [100, 400], per-round
    eps in [0.2, 1], q in {0.05, 0.1, 0.25}, delta = 1e-5."""
    N = draw(st.integers(min_value=20, max_value=200))
    return {"N": N, "K": draw(st.integers(min_value=1, max_value=N // 10)), "T": draw(st.integers(min_value=100, max_value=400)),
            "epsilon": draw(st.floats(min_value=0.2, max_value=1.0)), "delta": 1e-5,
            "q": draw(st.sampled_from([0.05, 0.1, 0.25])), "seed": draw(st.integers(min_value=0, max_value=2**31 - 1))}


__all__ += ["fedpdm_any_noise_settings", "fedpdm_federations", "fedpdm_noiseless_full_settings",
            "fedpdm_noisy_settings", "fedpdm_seed_condition_violations"]


# --- fedpdm (continued) ----------------------------------------------------------------------------------------


@st.composite
def fedpdm_corrected_conditions_strict(draw) -> tuple[float, float, int, int]:
    """(L, rho, N, K) with 1/2 < L < rho/4 strictly, rho in [2.01, 200] (so the L interval holds floats), 1 <= K <= N <= 200."""
    rho = draw(st.floats(min_value=2.01, max_value=200.0))
    L = draw(st.floats(min_value=0.5, max_value=rho / 4.0, exclude_min=True, exclude_max=True))
    N = draw(st.integers(min_value=1, max_value=200))
    return L, rho, N, draw(st.integers(min_value=1, max_value=N))

__all__ += ["fedpdm_corrected_conditions_strict"]


# --- GTV clustered FL (seed 002; verify/gtv) -----------------------------------------------------------------------
@st.composite
def gtv_convergence_cases(draw, penalty: str | None = None, loss: str = "squared") -> dict:
    """Spec 4 T6 instances for Algorithm 1 vs CVXPY: SBM 2 x 6, d = 4, m in {2, 6}, lam log-uniform in [1e-2, 1]."""
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
    """Noiseless d = 1 chains 2 x n with boundary weight eps < 1 (so (35) holds with the boundary anchor, R1)."""
    return {"kind": "chain", "seed": draw(st.integers(0, 2**31 - 1)), "n": draw(st.integers(3, 10)), "m": 3,
            "eps": draw(st.floats(0.05, 0.9)), "lam": draw(st.floats(0.05, 0.3))}


def gtv_sbm_seeds() -> st.SearchStrategy[int]:
    """Replicate seeds of the paper's SBM (section 5.1)."""
    return st.integers(0, 2**31 - 1)


__all__ += ["gtv_chain_cases", "gtv_convergence_cases", "gtv_sbm_seeds", "gtv_well_connected_cases"]


# --- pgfl (private Theorem I, iteration-dominated branch) ---
def pgfl_private_iteration_instances() -> st.SearchStrategy[dict]:
    """Instances of the iteration-dominated branch of the corrected private Theorem I (zeta <= r(T)^2 - 0.05):
    ``verify.pgfl._instances.ITERATION_BRANCH_INSTANCES`` (the checks' space)."""
    from verify.pgfl._instances import ITERATION_BRANCH_INSTANCES

    return ITERATION_BRANCH_INSTANCES.strategy()


__all__ += ["pgfl_private_iteration_instances"]


# --- npfl_rl ---
@st.composite
def npfl_instances(draw) -> dict:
    """Small NPFL-RL instances (spec 6: K = 6-12, d = 3-8, sparse graphs so that disconnected intra-cluster
    subgraphs, clients without same-cluster neighbours and missing clusters N_k^(r) = {} all occur), as settings of
    ``verify.npfl_rl._common.problem_from``; D_k < d is allowed (singular H_k)."""
    K = draw(st.integers(6, 12))
    d = draw(st.integers(3, 8))
    D_lo = draw(st.integers(2, d + 2))
    return {"seed": draw(st.integers(0, 2**31 - 1)), "K": K, "d": d, "D_lo": D_lo,
            "D_hi": draw(st.integers(D_lo, d + 4)), "mean_degree": draw(st.floats(1.5, min(4.0, K - 1.0))),
            "lam": draw(st.floats(0.01, 1.0)), "symmetric": False}


@st.composite
def npfl_symmetric_instances(draw) -> dict:
    """NPFL-RL instances of K4's symmetric case: every G_q connected and every N_k^(r) non-empty (dense graphs)."""
    K = draw(st.integers(9, 12))
    d = draw(st.integers(3, 6))
    return {"seed": draw(st.integers(0, 2**31 - 1)), "K": K, "d": d, "D_lo": 2, "D_hi": d + 3,
            "mean_degree": float(K - 2), "lam": draw(st.floats(0.01, 1.0)), "symmetric": True}


__all__ += ["npfl_instances", "npfl_symmetric_instances"]


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
    return {"d": draw(st.integers(min_value=1, max_value=5)), "b": b, "Q_max": draw(st.integers(min_value=2, max_value=10)),
            "eta": draw(st.floats(min_value=0.02, max_value=0.9)) / rho, "rho": rho, "G": G,
            "nu": draw(st.floats(min_value=0.01, max_value=0.9)) * 4.0 * G**2 / b**2,
            "epsilon": draw(st.floats(min_value=0.1, max_value=0.99)),
            "delta": draw(st.sampled_from([1e-3, 1e-5, 1e-8]))}


__all__ += ["fedpdm_adaptive_q_pairs"]


# --- fedpdm (Lemma 1 corrected up to the crossover eps*(delta)) ---
@st.composite
def eps_delta_below_crossover_fraction(draw) -> tuple[float, float]:
    """(u, delta) with u in [1e-4, 1) and delta in [1e-300, 0.99] (log scale): the point eps = u eps*(delta) lies in
    the corrected Lemma 1's range (0, eps*(delta)) (eps* by ``verify.fedpdm.lemma1_gaussian.crossover_epsilon``)."""
    fraction = draw(st.floats(min_value=1e-4, max_value=1.0, exclude_max=True))
    delta = 10.0 ** draw(st.floats(min_value=-300.0, max_value=float(np.log10(0.99))))
    return fraction, delta


__all__ += ["eps_delta_below_crossover_fraction"]


# --- cli (issue 12: malformed configuration fields) ---
#: Values that are wrong for a field of each kind, whatever the rest of the configuration says.
_BAD_BY_KIND = {
    "pos_int": (0, -1, -(10**6), 2.5, "3", True, [1], {"a": 1}),
    "nonneg_int": (-1, -(10**6), 0.5, "0", False, [0], {"a": 1}),
    "pos_real": (0.0, -1.0, -1e-300, float("nan"), float("inf"), float("-inf"), "1.0", True, [1.0], {"a": 1}),
    "nonneg_real": (-1.0, -1e-300, float("nan"), float("inf"), "0", False, [0.5], {"a": 1}),
    "unit_real": (-0.1, 1.5, float("nan"), float("inf"), "0.5", True, [0.5], {"a": 1}),
    "choice": ("", "bogus", "RIDGE", " alg1", 3, 1.5, True, ["x"], {"a": 1}),
    "real_list": ([], ["a"], [True, False], [float("nan")], [float("inf")], [[1.0], [2.0, 3.0]], "x", {"a": 1}),
}


@st.composite
def malformed_config(draw, fields: dict) -> tuple[str, str, object]:
    """One field of a valid configuration replaced by a value that is wrong for it.

    ``fields`` maps ``"section.field"`` to its kind (a key of ``_BAD_BY_KIND``). Returns
    ``(section, field, bad_value)``; every value drawn is invalid by construction (wrong type, outside the
    allowed range, non-finite, an unknown choice, or an empty/ragged/non-numeric list).
    """
    name = draw(st.sampled_from(sorted(fields)))
    section, field = name.split(".", 1)
    bad = draw(st.sampled_from(_BAD_BY_KIND[fields[name]]))
    return section, field, bad


__all__ += ["malformed_config"]


# --- paofed paper scale (white reduction) ---
__all__ += ["paofed_white_scaled_sizes"]


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


__all__ += ["paofed_hard_instances"]


# --- zcdp_nfl experiments (verify/zcdp_nfl/experiments.py) ---
def zcdp_nfl_experiment_seeds() -> st.SearchStrategy[int]:
    """Root seeds of the zCDP-NFL experiment design (each fixes every replicate's instance and noise)."""
    return st.integers(0, 2**16)


def zcdp_nfl_privacy_budgets() -> st.SearchStrategy[float]:
    """phi^(1) log-uniform on the spec 6 trade-off range [1e-4, 1e-2]."""
    return st.floats(-4.0, -2.0).map(lambda e: float(10.0**e))


__all__ += ["zcdp_nfl_experiment_seeds", "zcdp_nfl_privacy_budgets"]


# --- npfl_rl experiments (verify/npfl_rl/experiments.py) ---
def npfl_experiment_seeds() -> st.SearchStrategy[int]:
    """Root seeds of the NPFL-RL experiment design (each fixes every replicate's instance and SAC draws)."""
    return st.integers(0, 2**16)


__all__ += ["npfl_experiment_seeds"]


# --- fedpdm experiments (verify/fedpdm/experiments.py) ---
def fedpdm_experiment_seeds() -> st.SearchStrategy[int]:
    """Root seeds of the FedPDM-DP experiment design (each fixes every replicate's data and run draws)."""
    return st.integers(0, 2**16)


def fedpdm_experiment_budgets() -> st.SearchStrategy[float]:
    """Total budgets epsbar log-uniform on [5, 30] (the paper's Fig. 1 and Fig. 2 values 7, 10, 20, 30 inside)."""
    return st.floats(float(np.log10(5.0)), float(np.log10(30.0))).map(lambda e: float(10.0**e))


__all__ += ["fedpdm_experiment_budgets", "fedpdm_experiment_seeds"]


# --- fedpdm Remark 2 (verify/fedpdm/remark2_rate.py) ---
def fedpdm_remark2_points() -> st.SearchStrategy[dict]:
    """Remark 2's parameter points: the check's own space, ``verify.fedpdm.remark2_rate.remark2_space`` (one sampler
    per claim)."""
    from verify.fedpdm.remark2_rate import remark2_space

    return remark2_space.strategy()


__all__ += ["fedpdm_remark2_points"]


# --- GTV experiments (verify/gtv/test_experiments.py) -------------------------------------------------------------
def gtv_chain_boundary_weights() -> st.SearchStrategy[float]:
    """Chain boundary weights eps in [0.2, 1] (section 5.3: the inter-cluster edge weight of Figs. 3-4)."""
    return st.floats(0.2, 1.0)


__all__ += ["gtv_chain_boundary_weights"]


# --- GTV digits experiment (verify/gtv/test_digits.py) ------------------------------------------------------------
def gtv_digits_root_seeds() -> st.SearchStrategy[int]:
    """Root seeds of the digits stand-in (§5.4): each fixes every replicate's split, graph and IFCA models."""
    return st.integers(0, 2**31 - 1)


__all__ += ["gtv_digits_root_seeds"]
