"""All Hypothesis strategies of fedcheck.

Each strategy builds instances that satisfy the hypotheses of the claim it serves, by
construction (``@st.composite``), never by filtering.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

__all__ = [
    "etas",
    "gaussian_mechanisms",
    "geometric_privacy_schedules",
    "renyi_orders",
    "tau_sequences",
    "zcdp_conversion_points",
]

_unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@st.composite
def tau_sequences(draw, *, max_len: int = 300) -> np.ndarray:
    """Inter-cluster weights tau_1..tau_n in [0, 1]: arbitrary, constant, geometric, tiny or near 1."""
    n = draw(st.integers(min_value=1, max_value=max_len))
    kind = draw(st.sampled_from(["arbitrary", "constant", "geometric", "tiny", "near_one"]))
    if kind == "arbitrary":
        return np.array(draw(st.lists(_unit, min_size=n, max_size=n)))
    if kind == "constant":
        return np.full(n, draw(_unit))
    if kind == "geometric":
        tau0 = draw(_unit)
        beta = draw(st.floats(min_value=0.0, max_value=1.0))
        return tau0 * beta ** np.arange(1, n + 1)
    exponents = np.array(draw(st.lists(st.floats(min_value=-15.0, max_value=0.0), min_size=n, max_size=n)))
    return 10.0**exponents if kind == "tiny" else 1.0 - 10.0**exponents


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


@st.composite
def _pgfl_unit_rows(draw, n_rows: int, dim: int) -> np.ndarray:
    """n_rows unit vectors in R^dim (a near-zero draw becomes e_1: constructed, not filtered)."""
    raw = np.array(draw(st.lists(st.floats(min_value=-1.0, max_value=1.0), min_size=n_rows * dim,
                                 max_size=n_rows * dim))).reshape(n_rows, dim)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    raw[norms[:, 0] < 1e-6] = np.eye(dim)[0]
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


@st.composite
def pgfl_neighbouring_instances(draw, *, losses=("logistic", "huber"), max_dim: int = 8,
                                max_samples: int = 10) -> dict:
    """A client subproblem (4) and a replace-one neighbour satisfying Assumption 3 (shared/spec/pgfl.md R3).

    Parameters as in ``verify.pgfl.lemma1_sensitivity`` gap records: d in [2, max_dim], D_k in
    [1, max_samples], every feature (also the replacement) on the sphere of radius B in [10^-0.5, 10^0.5],
    logistic labels in {0, 1} or Huber responses in [-10, 10] with threshold kappa in [10^-0.5, 10^0.5],
    w_server in [-3, 3]^d, phi_dual in [-1, 1]^d, rho in R3's {0.1, 0.5, 1, 5} or [0.05, 10],
    lambda in {0, 0.01} or [0, 1], |C_s| in [1, 15]. The last sample of X is the one replaced by
    (x_new, y_new).
    """
    loss = draw(st.sampled_from(losses))
    dim = draw(st.integers(min_value=2, max_value=max_dim))
    n = draw(st.integers(min_value=1, max_value=max_samples))
    radius = 10.0 ** draw(st.floats(min_value=-0.5, max_value=0.5))
    rows = draw(_pgfl_unit_rows(n + 1, dim)) * radius
    if loss == "logistic":
        labels = [float(v) for v in draw(st.lists(st.integers(min_value=0, max_value=1), min_size=n + 1,
                                                  max_size=n + 1))]
    else:
        labels = draw(st.lists(st.floats(min_value=-10.0, max_value=10.0), min_size=n + 1, max_size=n + 1))
    vec = lambda bound: np.array(draw(st.lists(st.floats(min_value=-bound, max_value=bound), min_size=dim,  # noqa: E731
                                               max_size=dim)))
    return {"loss": loss, "feature_radius": radius, "X": rows[:n], "y": np.array(labels[:n]),
            "x_new": rows[n], "y_new": labels[n], "w_server": vec(3.0), "phi_dual": vec(1.0),
            "rho": draw(st.one_of(st.sampled_from([0.1, 0.5, 1.0, 5.0]), st.floats(min_value=0.05, max_value=10.0))),
            "lam": draw(st.one_of(st.sampled_from([0.0, 0.01]), st.floats(min_value=0.0, max_value=1.0))),
            "n_server_clients": draw(st.integers(min_value=1, max_value=15)),
            "huber_threshold": 10.0 ** draw(st.floats(min_value=-0.5, max_value=0.5)) if loss == "huber" else 1.0}


@st.composite
def pgfl_huber_attaining_instances(draw, *, max_dim: int = 6, max_samples: int = 10) -> dict:
    """Parameters of ``verify.pgfl.lemma1_sensitivity.attained_huber_instance`` (Huber, lambda = 0).

    Unit feature directions, residual signs of the first D - 1 samples, w_server in [-3, 3]^d,
    phi_dual in [-1, 1]^d, rho in [0.05, 10], kappa and B in [10^-0.5, 10^0.5], |C_s| in [1, 15].
    """
    dim = draw(st.integers(min_value=1, max_value=max_dim))
    n = draw(st.integers(min_value=1, max_value=max_samples))
    vec = lambda bound: np.array(draw(st.lists(st.floats(min_value=-bound, max_value=bound), min_size=dim,  # noqa: E731
                                               max_size=dim)))
    return {"X": draw(_pgfl_unit_rows(n, dim)),
            "signs": np.array(draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=n, max_size=n))),
            "w_server": vec(3.0), "phi_dual": vec(1.0), "rho": draw(st.floats(min_value=0.05, max_value=10.0)),
            "huber_threshold": 10.0 ** draw(st.floats(min_value=-0.5, max_value=0.5)),
            "feature_radius": 10.0 ** draw(st.floats(min_value=-0.5, max_value=0.5)),
            "n_server_clients": draw(st.integers(min_value=1, max_value=15))}


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
