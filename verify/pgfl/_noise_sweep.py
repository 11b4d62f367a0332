r"""Theorem II with privacy noise: the :math:`\tau\times\rho` sweep of Algorithm 2 with common random numbers
(docs/papers/pgfl.md#choice-coupling, #erratum-r-a), its sizes per profile and its horizon rule.

For ridge the iteration is affine in the noise, so run by run the gap is the noise-free gap plus a
data-independent, mean-zero response and :math:`E\lVert \bar w - w\rVert^2 \ge \lVert \bar w - w\rVert^2_{\xi = 0}`
(:func:`verify.pgfl.theorem2.evaluate_noise_decomposition` checks the identity): every noise-free violation is a
violation in expectation. The estimator and its limits are described in :func:`sweep_penalty`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType

import numpy as np
from scipy import stats

from reference_impl.pgfl import PGFLConfig, cluster_optima, eta_cluster_distance, synthetic_regression
from theory._validate import positive_int
from theory.bounds import intercluster_bound
from theory.pgfl.stability import slowest_cluster_curvature
from verify.pgfl._coupled_runs import run_recorded_gaps
from verify.tolerance import RECORDED_ALPHA, bonferroni

__all__ = ["PRIVACY_DEFAULTS", "RHO_GRID", "RHO_GRID_PAPER_SIZE", "SWEEP_COLUMNS", "SWEEP_MEMORY_BYTES",
           "SWEEP_SCALES", "SweepScale", "noise_sweep", "recorded_iterations", "smallest_rho_from_which_bound_holds",
           "sweep_horizon", "sweep_penalty"]


#: Penalties swept, as multiples of L_max, on the small ci instances (docs/papers/pgfl.md#erratum-r-a goes up to
#: 25 L_max; we go further where it is cheap).
RHO_GRID = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 100.0)


#: Penalties swept at the paper's size: the range of docs/papers/pgfl.md#erratum-r-a, 0.1 to 25 L_max. The horizon
#: grows like rho / mu_min (about 15,000-21,000 iterations at 100 L_max, over half of all the sweeps' iterations),
#: while max_n D_n / B_n has all but reached its rho-independent limit by 25 L_max: earlier thorough runs up to
#: 100 L_max moved it by under 1 % from 25 to 100 L_max on every instance and tau, with every status unchanged.
RHO_GRID_PAPER_SIZE = RHO_GRID[:-1]


#: Privacy parameters of the noisy column: phi^(0) = 0.001 and zeta = 0.99 are the paper's regression values
#: (experiment R-3 (docs/papers/pgfl.md#exp-r3), seed 003 line 436; docs/papers/pgfl.md#exp-r3), C = 1.0 the nominal
#: ridge value (ridge has no gradient bound, docs/papers/pgfl.md#erratum-e10, #choice-gradient-bound), noise index
#: convention I (docs/papers/pgfl.md#choice-noise-index).
PRIVACY_DEFAULTS = MappingProxyType({"phi0": 1e-3, "zeta": 0.99, "C": 1.0})


#: Sets the runs per batch, and so each batch's seed: the memory the tau = 0 trajectories of one batch took when they
#: were stored (the lockstep runs now store none; changing it would change the draws).
SWEEP_MEMORY_BYTES = 96 * 2**20


#: Columns of one row of the sweep table (one row per (tau, rho) cell), in order.
SWEEP_COLUMNS = (
    "tau", "rho_over_Lmax", "rho", "iterations", "recorded_iterations", "runs",
    "noiseless_max_gap", "noiseless_max_ratio", "noiseless_argmax_n", "noiseless_fraction_violated",
    "noiseless_status",
    "noisy_max_gap", "noisy_max_ratio", "noisy_max_ratio_lcl", "noisy_max_ratio_ucl", "noisy_max_ratio_plain",
    "noisy_argmax_n", "noisy_fraction_violated", "noisy_fraction_violated_lcl", "noisy_status",
)


_STATUSES = ("holds", "violated", "inconclusive")


@dataclasses.dataclass(frozen=True, kw_only=True)
class SweepScale:
    r"""Sizes of the :math:`\tau \times \rho` sweep of Theorem II (one profile).

    Attributes
    ----------
    servers, clients_per_server, d, clusters : int
        Instance sizes for :func:`reference_impl.pgfl.synthetic_regression`; every other field of the instance is
        its default (the paper's setting, docs/papers/pgfl.md#choice-regression-data: :math:`\lambda = 1`, observation
        noise variance 0.1,
        :math:`D_k \in \{2..9\}`, :math:`\gamma = 0.15`, average degree 3).
    taus : tuple of float
        Constant inter-cluster weights, each in [0, 1].
    rho_grid : tuple of float
        Penalties as multiples of :math:`L_{max}`, strictly increasing and > 0.
    base_iterations : int
        Shortest horizon.
    horizon_factor : float
        Horizon :math:`N(\rho) = \max(\text{base}, \lceil f\rho/\mu_{min}\rceil)` (:func:`sweep_horizon`).
    run_budget, min_runs, max_runs : int
        Monte-Carlo runs per cell: ``clip(run_budget // N(rho), min_runs, max_runs)`` (at least 2).
    dense_iterations : int
        Every iteration up to this one is recorded, then about as many more evenly spaced up to the horizon.
    """

    servers: int
    clients_per_server: int
    d: int
    clusters: int = 3
    taus: tuple = (0.1, 0.4, 0.8)
    rho_grid: tuple = (0.1, 1.0, 10.0)
    base_iterations: int = 300
    horizon_factor: float = 1.0
    run_budget: int = 6000
    min_runs: int = 20
    max_runs: int = 20
    dense_iterations: int = 800

    def __post_init__(self) -> None:
        for name in ("servers", "clients_per_server", "d", "base_iterations", "run_budget", "dense_iterations"):
            positive_int(name, getattr(self, name))
        positive_int("clusters", self.clusters, 2)
        positive_int("min_runs", self.min_runs, 2)
        positive_int("max_runs", self.max_runs, self.min_runs)
        taus = tuple(float(t) for t in self.taus)
        if not taus or any(not 0.0 <= t <= 1.0 for t in taus):
            raise ValueError(f"taus must be a non-empty sequence in [0, 1], got {self.taus!r}")
        grid = tuple(float(m) for m in self.rho_grid)
        increasing = all(b > a for a, b in itertools.pairwise(grid))
        if not grid or not increasing or any(not (math.isfinite(m) and m > 0) for m in grid):
            raise ValueError(f"rho_grid must be a non-empty strictly increasing sequence in (0, inf), "
                             f"got {self.rho_grid!r}")
        if not (math.isfinite(self.horizon_factor) and self.horizon_factor > 0):
            raise ValueError(f"horizon_factor must be a finite real in (0, inf), got {self.horizon_factor!r}")
        object.__setattr__(self, "taus", taus)
        object.__setattr__(self, "rho_grid", grid)

    @property
    def sizes(self) -> dict:
        return {"servers": self.servers, "clients_per_server": self.clients_per_server, "d": self.d,
                "clusters": self.clusters}


#: ci: a small instance and nine cells (about a second); thorough: the paper's size (S = 10, 15 clients per server,
#: d = 60) with tau in {0.1, 0.4, 0.8} and rho up to 25 L_max (:data:`RHO_GRID_PAPER_SIZE`).
SWEEP_SCALES = MappingProxyType({
    "ci": SweepScale(servers=4, clients_per_server=5, d=8),
    "thorough": SweepScale(servers=10, clients_per_server=15, d=60, rho_grid=RHO_GRID_PAPER_SIZE, min_runs=4,
                          max_runs=24),
})


def sweep_horizon(rho: float, mu_min: float, base: int, factor: float = 1.0) -> int:
    r""":math:`N = \max(\text{base}, \lceil f\,\rho/\mu_{min}\rceil)` iterations.

    :math:`\max_n D_n/B_n` peaks at :math:`n \approx (0.35\text{--}0.6)\,\rho/\mu_{min}` on the paper-size instances
    (found by fedcheck; docs/papers/pgfl.md#erratum-r-a: the peak moves to :math:`n \propto \rho`), so ``factor = 1``
    covers the peak about twice over. A sweep cell whose ratio still rises at the horizon is reported as inconclusive,
    never as holding.
    """
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite real in (0, inf), got {rho!r}")
    if not (math.isfinite(mu_min) and mu_min > 0):
        raise ValueError(f"mu_min must be a finite real in (0, inf), got {mu_min!r}")
    positive_int("base", base)
    if not (math.isfinite(factor) and factor > 0):
        raise ValueError(f"factor must be a finite real in (0, inf), got {factor!r}")
    return max(int(base), int(math.ceil(factor * rho / mu_min)))


def recorded_iterations(iterations: int, dense: int) -> np.ndarray:
    """The iterations (1-based, increasing) at which the sweep records the models.

    All of ``1..dense``, then about ``dense`` more evenly spaced up to ``iterations`` (always included). Past
    ``dense`` iterations the ratio moves on the scale of ``rho / mu_min`` iterations, much longer than the spacing.
    """
    positive_int("iterations", iterations)
    positive_int("dense", dense)
    if iterations <= 2 * dense:
        return np.arange(1, iterations + 1)
    tail = np.rint(np.linspace(dense, iterations, dense + 1)).astype(np.int64)
    return np.unique(np.concatenate([np.arange(1, dense + 1), tail]))


def _ratio(gap: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """gap / bound, with 0/0 = 0 and x/0 = inf for x > 0 (tau = 0 makes B_n = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(bound > 0, gap / np.where(bound > 0, bound, 1.0), np.where(gap > 0, np.inf, 0.0))


def _status(lower: float, upper: float, peaked: bool) -> str:
    """'violated' if the lower limit exceeds the bound; 'holds' if the upper one does not and the ratio peaked
    inside the horizon; else 'inconclusive'."""
    if lower > 1.0:
        return "violated"
    return "holds" if upper <= 1.0 and peaked else "inconclusive"


def smallest_rho_from_which_bound_holds(rho_grid: Sequence[float], statuses: Sequence[str]) -> float | str:
    """Smallest grid penalty from which every larger one has status 'holds', else 'none up to <max> L_max'."""
    grid = [float(m) for m in rho_grid]
    if len(grid) != len(statuses) or not grid:
        raise ValueError(f"rho_grid and statuses must be non-empty and of equal length, got {len(grid)} and "
                         f"{len(statuses)}")
    if any(s not in _STATUSES for s in statuses):
        raise ValueError(f"statuses must be in {_STATUSES}, got {list(statuses)!r}")
    holding = [m for i, m in enumerate(grid) if all(s == "holds" for s in statuses[i:])]
    return min(holding) if holding else f"none up to {grid[-1]:g} L_max"


def sweep_penalty(item: tuple) -> dict:
    r"""One penalty of the sweep: a row of :data:`SWEEP_COLUMNS` for every tau, and the ratio curves.

    ``item = (scale, instance_seed, rho_over_Lmax, seed, alpha_cell, privacy)`` (one argument, so that
    ``executor.map`` can ship it). Algorithm 2 (literal dual reference) on ``synthetic_regression(instance_seed)``;
    both columns use the same algorithm so that they differ by the privacy noise only.

    * Noise-free column: :math:`\xi \equiv 0`, one run; :math:`D_n = \max_{s,q}\lVert g_{s,q}^{(n)}\rVert^2` with
      :math:`g = \bar w - w` (exact, deterministic).
    * Privacy column: ``runs`` runs with :data:`PRIVACY_DEFAULTS`; run :math:`r` of the :math:`\tau = 0` reference
      and of every tau-run share data, initialisation, scheduling and noise draws (common random numbers).
      For ridge the iteration is affine in (state, noise) and the noise has mean 0, so
      :math:`E[g] = g^{\xi=0}` and :math:`E\lVert g\rVert^2 = \lVert g^{\xi=0}\rVert^2 + E\lVert g - g^{\xi=0}\rVert^2`.
      The estimator per run is :math:`\lVert g^{\xi=0}\rVert^2 + \lVert g_r - g^{\xi=0}\rVert^2` (the plain
      :math:`\lVert g_r\rVert^2` minus the mean-zero cross term: same mean, far smaller variance at large
      :math:`\rho`); the plain mean is reported too (``noisy_max_ratio_plain``).
    * Confidence limits per (n, s, q): Student t at ``alpha_cell`` split over the recorded iterations, the (s, q)
      pairs and both sides (asymptotic, see :func:`verify.tolerance.mean_upper_confidence_limit`). The lower limit is
      raised to :math:`\lVert g^{\xi=0}\rVert^2`, a certain lower bound (Jensen). Limits of
      :math:`\max_{s,q} E` are the maxima of the limits.
    """
    scale, instance_seed, rho_mult, seed, alpha_cell, privacy = item
    problem = synthetic_regression(np.random.default_rng(int(instance_seed)), **scale.sizes)
    eta = eta_cluster_distance(cluster_optima(problem))
    mu_min = slowest_cluster_curvature(problem)
    rho = float(rho_mult) * problem.max_curvature
    iterations = sweep_horizon(rho, mu_min, scale.base_iterations, scale.horizon_factor)
    recorded = recorded_iterations(iterations, scale.dense_iterations)
    G, S, Q, d = recorded.size, problem.S, problem.n_clusters, problem.d
    spacing = np.diff(np.concatenate([[0], recorded]))                        # iterations each recorded n stands for

    def fraction(violated: np.ndarray) -> float:
        return float(np.sum(spacing[violated])) / iterations

    runs = int(np.clip(scale.run_budget // iterations, scale.min_runs, scale.max_runs))
    per_batch = int(max(1, min(runs, SWEEP_MEMORY_BYTES // (G * S * Q * d * 8))))
    batches = [per_batch] * (runs // per_batch) + ([runs % per_batch] if runs % per_batch else [])
    seeds = np.random.SeedSequence(int(seed)).generate_state(len(batches) + 1)
    quiet = PGFLConfig(rho=rho, algorithm="alg2")
    noisy = PGFLConfig(rho=rho, algorithm="alg2", phi0=float(privacy["phi0"]), zeta=float(privacy["zeta"]),
                       C=float(privacy["C"]))

    # noise-free column (exact): g^{xi=0} at the recorded iterations, one vector per tau
    exact = {tau: np.empty((G, S, Q, d)) for tau in scale.taus}

    def keep(slot, i, gap):
        exact[scale.taus[i]][slot] = gap[0]
    run_recorded_gaps(problem, quiet, scale.taus, iterations, recorded, int(seeds[0]), 1, keep)
    exact_sq = {tau: np.sum(g**2, axis=-1) for tau, g in exact.items()}               # (G, S, Q)

    # privacy column: batches of runs, each batch from its own seed, CRN inside a batch; Chan's pooled moments
    count, mean, m2, plain = 0, {}, {}, {}
    for b, batch_seed in zip(batches, seeds[1:], strict=True):
        centred = {tau: np.empty((G, b, S, Q)) for tau in scale.taus}
        raw = {tau: np.empty((G, b, S, Q)) for tau in scale.taus}

        def sink(slot, i, gap, centred=centred, raw=raw):
            tau = scale.taus[i]
            raw[tau][slot] = np.sum(gap**2, axis=-1)
            centred[tau][slot] = exact_sq[tau][slot] + np.sum((gap - exact[tau][slot]) ** 2, axis=-1)
        run_recorded_gaps(problem, noisy, scale.taus, iterations, recorded, int(batch_seed), b, sink)
        for tau in scale.taus:
            batch_mean = centred[tau].mean(axis=1)
            batch_m2 = np.sum((centred[tau] - batch_mean[:, None]) ** 2, axis=1)
            if count == 0:
                mean[tau], m2[tau], plain[tau] = batch_mean, batch_m2, raw[tau].sum(axis=1)
            else:
                delta = batch_mean - mean[tau]
                mean[tau] = mean[tau] + delta * b / (count + b)
                m2[tau] = m2[tau] + batch_m2 + delta**2 * count * b / (count + b)
                plain[tau] = plain[tau] + raw[tau].sum(axis=1)
        count += b

    alpha_entry = bonferroni(alpha_cell, 2 * G * S * Q)
    t = float(stats.t.ppf(1.0 - alpha_entry, count - 1))
    rows, curves = [], {}
    for tau in scale.taus:
        bound = np.asarray(intercluster_bound(np.full(iterations, tau), eta))[recorded - 1]
        half = t * np.sqrt(m2[tau] / (count - 1) / count)
        gap_exact = exact_sq[tau].max(axis=(1, 2))
        gap_mean = mean[tau].max(axis=(1, 2))
        r_exact, r_mean = _ratio(gap_exact, bound), _ratio(gap_mean, bound)
        r_lcl = _ratio(np.maximum(mean[tau] - half, exact_sq[tau]).max(axis=(1, 2)), bound)
        r_ucl = _ratio((mean[tau] + half).max(axis=(1, 2)), bound)
        r_plain = _ratio((plain[tau] / count).max(axis=(1, 2)), bound)
        i_exact, i_mean = int(np.argmax(r_exact)), int(np.argmax(r_mean))
        rows.append({
            "tau": float(tau), "rho_over_Lmax": float(rho_mult), "rho": rho, "iterations": iterations,
            "recorded_iterations": G, "runs": count,
            "noiseless_max_gap": float(gap_exact.max()), "noiseless_max_ratio": float(r_exact.max()),
            "noiseless_argmax_n": int(recorded[i_exact]),
            "noiseless_fraction_violated": fraction(r_exact > 1.0),
            "noiseless_status": _status(float(r_exact.max()), float(r_exact.max()), i_exact < G - 1),
            "noisy_max_gap": float(gap_mean.max()), "noisy_max_ratio": float(r_mean.max()),
            "noisy_max_ratio_lcl": float(r_lcl.max()), "noisy_max_ratio_ucl": float(r_ucl.max()),
            "noisy_max_ratio_plain": float(r_plain.max()), "noisy_argmax_n": int(recorded[i_mean]),
            "noisy_fraction_violated": fraction(r_mean > 1.0),
            "noisy_fraction_violated_lcl": fraction(r_lcl > 1.0),
            "noisy_status": _status(float(r_lcl.max()), float(r_ucl.max()), i_mean < G - 1),
        })
        curves[float(tau)] = {"n": recorded, "noiseless": r_exact, "noisy": r_mean, "noisy_ucl": r_ucl}
    return {"rows": rows, "curves": curves, "eta": eta, "L_max": problem.max_curvature, "mu_min": mu_min,
            "alpha_entry": alpha_entry, "t_quantile": t}


def noise_sweep(scale: SweepScale, instance_seed: int, seed: int, *, executor=None,
                privacy: Mapping[str, float] = PRIVACY_DEFAULTS, alpha: float = RECORDED_ALPHA) -> dict:
    r"""Theorem II on one instance over ``scale.taus`` :math:`\times` ``scale.rho_grid``, with and without privacy
    noise (docs/papers/pgfl.md#choice-coupling, #erratum-r-a).

    Returns ``{"table": [row per (tau, rho)], "smallest_rho": [{"tau", "noiseless", "privacy_noise"}],
    "curves": {rho_over_Lmax: {tau: {...}}}, "instance": {...}}``; rows have the keys :data:`SWEEP_COLUMNS`
    (see :func:`sweep_penalty`). Penalties run through ``executor.map`` (serial when ``None``); the numbers do not
    depend on the executor. ``alpha`` is split by Bonferroni over the cells.

    References
    ----------
    Theorem II: seed 000 eqs. (27)-(28), lines 258-264 (seed 004
    Theorem 5.2). Privacy noise: Algorithm 2, seed 000 lines 118-151, with Lemma 1 / Theorem III calibration
    :math:`\delta_k^{2(n)} = \zeta^n (2C/(\rho D_k))^2/(2\phi^{(0)})` (docs/papers/pgfl.md#algorithm-2, convention I).
    """
    if not isinstance(scale, SweepScale):
        raise TypeError(f"scale must be a SweepScale, got {type(scale).__name__}")
    missing = {"phi0", "zeta", "C"} - set(privacy)
    if missing:
        raise ValueError(f"privacy must give phi0, zeta and C; missing {sorted(missing)}")
    PGFLConfig(rho=1.0, algorithm="alg2", phi0=float(privacy["phi0"]), zeta=float(privacy["zeta"]),
               C=float(privacy["C"]))                                                 # validates the values
    alpha_cell = bonferroni(alpha, len(scale.taus) * len(scale.rho_grid))
    seeds = np.random.SeedSequence(int(seed)).generate_state(len(scale.rho_grid))
    items = [(scale, int(instance_seed), m, int(s), alpha_cell, dict(privacy))
             for m, s in zip(scale.rho_grid, seeds, strict=True)]
    if executor is None:
        parts = [sweep_penalty(item) for item in items]
    else:
        parts = executor.map(sweep_penalty, items)
    table = sorted((row for part in parts for row in part["rows"]), key=lambda r: (r["tau"], r["rho_over_Lmax"]))
    smallest = []
    for tau in scale.taus:
        cells = [r for r in table if r["tau"] == float(tau)]
        smallest.append({"tau": float(tau),
                         "noiseless": smallest_rho_from_which_bound_holds(scale.rho_grid,
                                                                          [r["noiseless_status"] for r in cells]),
                         "privacy_noise": smallest_rho_from_which_bound_holds(scale.rho_grid,
                                                                              [r["noisy_status"] for r in cells])})
    first = parts[0]
    return {"table": table, "smallest_rho": smallest,
            "curves": {m: part["curves"] for m, part in zip(scale.rho_grid, parts, strict=True)},
            "instance": {"seed": int(instance_seed), **scale.sizes, "lam": 1.0, "observation_noise_variance": 0.1,
                         "eta": first["eta"], "L_max": first["L_max"], "mu_min": first["mu_min"]},
            "privacy": dict(privacy), "alpha": alpha, "alpha_per_cell": alpha_cell}
