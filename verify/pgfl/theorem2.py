r"""PGFL Theorem II and its Corollary on the running algorithm (common random numbers).

:math:`D_n = \max_{s,q}\lVert\bar w_{s,(q)}^{(n)} - w_{s,(q)}^{(n)}\rVert^2`, where :math:`\bar w` is the
:math:`\tau \equiv 0` run and both runs share data, initialisation, scheduling and noise draws.
Theorem II claims :math:`D_n \le B_n = \eta(1 - \prod_{j\le n}(1-\tau^{(j)}))` for all :math:`n` once
:math:`\rho` is large enough.

Findings:

* **Exact counterexample for every** :math:`\rho > 0` (spec pgfl.md, Review note R-a): one server, two
  clusters with one client each, :math:`f_q(w) = a_q(w - w_0)^2`, :math:`a_1 \ne a_2`. Both optima are
  :math:`w_0`, so :math:`\eta = 0` and :math:`B_n \equiv 0`, but
  :math:`D_1 = \tau^2 w_0^2 (2a_1/(2a_1+\rho) - 2a_2/(2a_2+\rho))^2 > 0`. The same instance refutes the
  Corollary (its hypothesis is vacuous at :math:`n = 1`).
* **The limit fails too** (found by fedcheck, not in the spec): with anisotropic cluster Hessians the
  :math:`\tau`-run's fixed point is pulled toward the Hessian-weighted pooled optimum, and
  :math:`\lim_n D_n` exceeds :math:`\eta` by two orders of magnitude (one server, two clusters, d = 2).
* **Privacy noise only makes it worse** (the :math:`\tau\times\rho` sweep, :func:`noise_sweep`): Algorithm 2 with
  the paper's :math:`\phi^{(0)} = 0.001`, :math:`\zeta = 0.99` (nominal :math:`C = 1`) and common random numbers.
  For ridge the iteration is affine in the noise, so run by run the gap is the noise-free gap plus a data-independent,
  mean-zero response (:func:`evaluate_noise_decomposition`) and
  :math:`E\lVert \bar w - w\rVert^2 \ge \lVert \bar w - w\rVert^2_{\xi = 0}`: every noise-free violation is a
  violation in expectation, and the noise (variance :math:`\propto 1/\rho^2`) adds violations at small
  :math:`\rho`. The per-cell table (max ratio with confidence limits, fraction of iterations violated, smallest
  :math:`\rho` per :math:`\tau`) is in the result's details.
* **Corrected Corollary** (an identity, checked on the algorithm): if :math:`\tau^{(i)} = 0` for
  :math:`i < n`, then :math:`\bar w^{(n)}_{s,(q)} - w^{(n)}_{s,(q)} = \tau^{(n)}\bigl(\hat w_{s,(q)}^{(n)} -
  \tfrac{1}{Q-1}\sum_{r\ne q}\hat w_{s,(r)}^{(n)}\bigr)`, so :math:`D_n \le (\tau^{(n)})^2 \max_{s,q,r}
  \lVert\hat w_{s,(q)}^{(n)} - \hat w_{s,(r)}^{(n)}\rVert^2`: quadratic in :math:`\tau^{(n)}` and measured
  on the iterates :math:`\hat w`, not on the optima.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType

import numpy as np
from scipy import stats

from reference_impl.pgfl import (
    PGFLConfig,
    PGFLProblem,
    _affine_map,
    cluster_optima,
    eta_cluster_distance,
    fixed_point,
    run_pgfl,
    server_models_observer,
    synthetic_regression,
)
from theory.bounds import intercluster_bound
from verify.evidence import result_from_evidence
from verify.records import (
    CheckContext,
    CheckResult,
    Citation,
    Claim,
    Evidence,
    FigureSpec,
    MonteCarlo,
    Series,
    Verdict,
)
from verify.tolerance import RECORDED_ALPHA as SWEEP_ALPHA
from verify.tolerance import bonferroni, gamma

__all__ = [
    "CLAIMS",
    "PRIVACY_DEFAULTS",
    "SWEEP_ALPHA",
    "SWEEP_COLUMNS",
    "SWEEP_SCALES",
    "SweepScale",
    "anisotropic_instance",
    "check_corollary",
    "check_corollary_identity",
    "check_limit_identity",
    "evaluate_limit_identity",
    "check_steady_state",
    "check_theorem2",
    "equal_optima_instance",
    "evaluate_corollary_identity",
    "evaluate_equal_optima",
    "evaluate_noise_decomposition",
    "evaluate_steady_state",
    "gap_sequence",
    "noise_sweep",
    "recorded_iterations",
    "slowest_cluster_curvature",
    "smallest_rho_from_which_bound_holds",
    "sweep_horizon",
    "sweep_penalty",
]

SEED_A = "000_133b71fd0aa99eb4.txt"
SEED_THESIS = "004_180cd372987d137b.txt"
#: Penalties swept, as multiples of L_max (spec R2.3 and Review note R-a go up to 25 L_max; we go further).
RHO_GRID = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 100.0)


def _sqrtm_psd(H: np.ndarray) -> np.ndarray:
    vals, vecs = np.linalg.eigh(H)
    return (vecs * np.sqrt(np.clip(vals, 0.0, None))) @ vecs.T


def _single_server(hessians, optima) -> PGFLProblem:
    """One server, one client per cluster, lambda = 0, f_q(w) = (w - w_q)^T H_q (w - w_q) / 2 (Hessian H_q)."""
    hessians = [np.atleast_2d(np.asarray(h, dtype=np.float64)) for h in hessians]
    optima = [np.atleast_1d(np.asarray(w, dtype=np.float64)) for w in optima]
    d = hessians[0].shape[0]
    # ridge client loss (1/D)||y - X w||^2 has data Hessian (2/D) X^T X = H when X = sqrt(D/2) H^(1/2)
    X = tuple(math.sqrt(d / 2.0) * _sqrtm_psd(h) for h in hessians)
    y = tuple(x @ w for x, w in zip(X, optima))
    Q = len(hessians)
    return PGFLProblem(adjacency=np.zeros((1, 1), dtype=bool), client_server=np.zeros(Q, dtype=np.int64),
                       client_cluster=np.arange(Q), n_clusters=Q, X=X, y=y, lam=0.0)


def equal_optima_instance(a1: float, a2: float, w0: float) -> PGFLProblem:
    """Review note R-a: S = 1, Q = 2, d = 1, f_q(w) = a_q (w - w0)^2 (Hessian 2 a_q; both optima w0, eta = 0)."""
    return _single_server([[[2.0 * a1]], [[2.0 * a2]]], [[w0], [w0]])


def anisotropic_instance() -> PGFLProblem:
    """S = 1, Q = 2, d = 2: cluster Hessians for which ||(H_1+H_2)^{-1} H_2|| = 12.4 (found by random search)."""
    H1 = np.array([[8.84737261, -0.0476630268], [-0.0476630268, 0.00276185202]])
    H2 = np.array([[3.50001744, -0.20463609], [-0.20463609, 0.01312955]])
    _, _, vt = np.linalg.svd(np.linalg.solve(H1 + H2, H2))
    return _single_server([H1, H2], [vt[0], np.zeros(2)])


def gap_sequence(problem: PGFLProblem, config: PGFLConfig, iterations: int, seed: int, runs: int = 1, *,
                 mixed_seed: int | None = None):
    """D_n (mean over runs of max_{s,q} squared gap) for n = 1..iterations.

    Common random numbers by default; ``mixed_seed`` gives the tau-run its own draws (independent noise).
    """
    reference = PGFLConfig(**{**config.__dict__, "taus": (0.0,)})
    kw = dict(runs=runs, observe=server_models_observer)
    bar = run_pgfl(problem, reference, iterations, np.random.default_rng(seed), **kw).observations
    other = seed if mixed_seed is None else mixed_seed
    mixed = run_pgfl(problem, config, iterations, np.random.default_rng(other), **kw).observations
    gaps = np.sum((bar - mixed) ** 2, axis=-1)                                # (N, R, S, Q)
    return gaps.mean(axis=1).max(axis=(1, 2))


def evaluate_equal_optima(a1: float, a2: float, w0: float, rho: float, tau: float) -> Evidence:
    """One iteration of the equal-optima instance: D_1 > B_1 = 0 is a violation (cross-checked in closed form)."""
    problem = equal_optima_instance(a1, a2, w0)
    eta = eta_cluster_distance(cluster_optima(problem))
    d1 = float(gap_sequence(problem, PGFLConfig(rho=rho, taus=(tau,)), 1, seed=0)[0])
    bound = float(intercluster_bound([tau], eta)[0])
    hat1, hat2 = 2 * a1 * w0 / (2 * a1 + rho), 2 * a2 * w0 / (2 * a2 + rho)
    predicted = tau**2 * (hat1 - hat2) ** 2
    # D_1 squares w_bar - w = hat_q - ((1 - tau) hat_q + tau hat_r), a difference of O(|hat|) numbers equal
    # to tau (hat_q - hat_r): relative error 2 (|hat1| + |hat2|) / (tau |hat1 - hat2|) times the ~32 rounded
    # operations behind each hat (client solve, aggregation, mixing).
    condition = 2.0 * (abs(hat1) + abs(hat2)) / max(tau * abs(hat1 - hat2), 1e-300)
    agrees = abs(d1 - predicted) <= gamma(32) * condition * max(predicted, abs(d1)) + 1e-300
    return Evidence(measured=d1, bound=bound, holds=d1 <= bound,
                    parameters={"a1": a1, "a2": a2, "w0": w0, "rho": rho, "tau": tau, "eta": eta,
                                "D_1": d1, "D_1_closed_form": predicted, "closed_form_agrees": bool(agrees)})


def _sweep_instance(item):
    """One instance of the paper-like sweep (module level: runs on the executor)."""
    i, seed, sizes, base = item
    problem = synthetic_regression(np.random.default_rng(seed), **sizes)
    eta = eta_cluster_distance(cluster_optima(problem))
    mu_min = slowest_cluster_curvature(problem)
    row = {"instance": i, "seed": seed, "eta": eta, "L_max": problem.max_curvature, "mu_min": mu_min,
           "ratio_by_rho": {}, "iterations_by_rho": {}, "peak_iteration_by_rho": {}, "status_by_rho": {}}
    curves = {}
    for mult in RHO_GRID:
        rho = mult * problem.max_curvature
        iterations = sweep_horizon(rho, mu_min, base)
        bound = intercluster_bound(np.full(iterations, 0.4), eta)
        ratio = gap_sequence(problem, PGFLConfig(rho=rho, taus=(0.4,)), iterations, seed=seed) / bound
        peak = int(np.argmax(ratio)) + 1
        row["ratio_by_rho"][mult] = float(ratio.max())
        row["iterations_by_rho"][mult] = iterations
        row["peak_iteration_by_rho"][mult] = peak
        # A cell holds only if the ratio peaked well inside the horizon (a still-rising ratio proves nothing).
        row["status_by_rho"][mult] = ("violated" if ratio.max() > 1.0 else
                                      "holds" if peak <= 0.9 * iterations else "inconclusive")
        if i == 0:
            curves[mult] = ratio
    holding = [m for m in RHO_GRID if all(row["status_by_rho"][x] == "holds" for x in RHO_GRID if x >= m)]
    row["smallest_rho_over_Lmax_from_which_bound_holds"] = min(holding) if holding else f"none up to {RHO_GRID[-1]}"
    return row, curves


def _paper_like_sweep(ctx: CheckContext):
    """Max_n D_n / B_n over rho for random instances (small at ci, the paper's size at thorough). The horizon of
    each rho is :func:`sweep_horizon` (the ratio peaks at n of the order of rho / mu_min)."""
    if ctx.thorough:
        sizes = dict(servers=10, clients_per_server=15, d=60, clusters=3, lam=0.1, noise_variance=0.0)
        instances, base = 6, 1500
    else:
        sizes = dict(servers=4, clients_per_server=5, d=8, clusters=3, lam=0.1, noise_variance=0.0)
        instances, base = 2, 400
    seeds = ctx.seed_sequence("pgfl.theorem2.sweep").generate_state(instances)
    items = [(i, int(seed), sizes, base) for i, seed in enumerate(seeds)]
    parts = ctx.executor.map(_sweep_instance, items) if ctx.executor is not None else map(_sweep_instance, items)
    table, curves = [], {}
    for row, c in parts:
        table.append(row)
        curves.update(c)
    return table, curves, base


def _noisy_comparison(ctx: CheckContext) -> dict:
    """Theorem II with privacy noise (Algorithm 2): mean D_n / B_n with common vs independent noise draws."""
    runs, iterations = (30, 200) if ctx.profile == "ci" else (100, 400)
    seed = int(ctx.seed_sequence("pgfl.theorem2.noisy").generate_state(1)[0])
    problem = synthetic_regression(np.random.default_rng(seed), servers=4, clients_per_server=5, d=8, clusters=3,
                                   lam=0.1, noise_variance=0.0)
    eta = eta_cluster_distance(cluster_optima(problem))
    bound = intercluster_bound(np.full(iterations, 0.4), eta)
    out = {"runs": runs, "iterations": iterations, "seed": seed, "eta": eta, "phi0": 0.01, "zeta": 0.99, "C": 1.0,
           "max_mean_ratio": {}}
    for mult in (1.0, 10.0):
        cfg = PGFLConfig(rho=mult * problem.max_curvature, taus=(0.4,), algorithm="alg2", phi0=0.01, zeta=0.99, C=1.0)
        crn = gap_sequence(problem, cfg, iterations, seed, runs)
        independent = gap_sequence(problem, cfg, iterations, seed, runs, mixed_seed=seed + 1)
        out["max_mean_ratio"][mult] = {"common_random_numbers": float(np.max(crn / bound)),
                                       "independent_noise": float(np.max(independent / bound))}
    return out


# --- Theorem II with privacy noise: the tau x rho sweep ---------------------------------------------------------

#: Privacy parameters of the noisy column: phi^(0) = 0.001 and zeta = 0.99 are the paper's regression values (spec
#: pgfl.md 2.5 and experiment R-3; seed 003 line 436), C = 1.0 the nominal ridge value of spec 2.7 (ridge has no
#: gradient bound, E10), noise convention I (spec 2.7 default).
PRIVACY_DEFAULTS = MappingProxyType({"phi0": 1e-3, "zeta": 0.99, "C": 1.0})


#: Memory the stored tau = 0 trajectories of one batch of runs may take (sets the runs per batch).
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


def _positive_int(name: str, value, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class SweepScale:
    r"""Sizes of the :math:`\tau \times \rho` sweep of Theorem II (one profile).

    Attributes
    ----------
    servers, clients_per_server, d, clusters : int
        Instance sizes for :func:`reference_impl.pgfl.synthetic_regression`; every other field of the instance is
        its default (the paper's setting, spec 5.1 and 2.7: :math:`\lambda = 1`, observation noise variance 0.1,
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
            _positive_int(name, getattr(self, name))
        _positive_int("clusters", self.clusters, 2)
        _positive_int("min_runs", self.min_runs, 2)
        _positive_int("max_runs", self.max_runs, self.min_runs)
        taus = tuple(float(t) for t in self.taus)
        if not taus or any(not 0.0 <= t <= 1.0 for t in taus):
            raise ValueError(f"taus must be a non-empty sequence in [0, 1], got {self.taus!r}")
        grid = tuple(float(m) for m in self.rho_grid)
        increasing = all(b > a for a, b in zip(grid, grid[1:]))
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
#: d = 60) with tau in {0.1, 0.4, 0.8} and rho up to 100 L_max.
SWEEP_SCALES = MappingProxyType({
    "ci": SweepScale(servers=4, clients_per_server=5, d=8),
    "thorough": SweepScale(servers=10, clients_per_server=15, d=60, rho_grid=RHO_GRID, min_runs=4, max_runs=24),
})


def slowest_cluster_curvature(problem: PGFLProblem) -> float:
    r"""Smallest curvature of the cluster objectives, :math:`\mu_{min}`.

    .. math::
        \mu_{min} = \min_q \lambda_{min}\Bigl(\frac{1}{|\mathcal C_{(q)}|}\sum_{k\in\mathcal C_{(q)}}
        \bigl(\nabla^2 f_k + \tfrac{2\lambda}{|\mathcal C_{s(k)}|} I\bigr)\Bigr).

    The client step (4) is a proximal step of size :math:`1/\rho`, so the :math:`\tau = 0` iteration contracts the
    slowest cluster mode by about :math:`\rho/(\rho + \mu_{min})` per iteration: :math:`\rho/\mu_{min}` iterations
    is its time constant. Ridge only (exact Hessians).
    """
    if problem.loss != "ridge":
        raise ValueError(f"problem.loss must be 'ridge' (exact Hessians), got {problem.loss!r}")
    hessians = problem.hessians + problem.ridge_weights[:, None, None] * np.eye(problem.d)
    smallest = []
    for q in range(problem.n_clusters):
        members = problem.client_cluster == q
        if not members.any():
            raise ValueError(f"cluster {q} has no client: its curvature is undefined")
        smallest.append(np.linalg.eigvalsh(hessians[members].mean(axis=0))[0])
    return float(min(smallest))


def sweep_horizon(rho: float, mu_min: float, base: int, factor: float = 1.0) -> int:
    r""":math:`N = \max(\text{base}, \lceil f\,\rho/\mu_{min}\rceil)` iterations.

    :math:`\max_n D_n/B_n` peaks at :math:`n \approx (0.35\text{--}0.6)\,\rho/\mu_{min}` on the paper-size instances
    (found by fedcheck; spec Review note R-a: the peak moves to :math:`n \propto \rho`), so ``factor = 1`` covers the
    peak about twice over. A sweep cell whose ratio still rises at the horizon is reported as inconclusive, never as
    holding.
    """
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite real in (0, inf), got {rho!r}")
    if not (math.isfinite(mu_min) and mu_min > 0):
        raise ValueError(f"mu_min must be a finite real in (0, inf), got {mu_min!r}")
    _positive_int("base", base)
    if not (math.isfinite(factor) and factor > 0):
        raise ValueError(f"factor must be a finite real in (0, inf), got {factor!r}")
    return max(int(base), int(math.ceil(factor * rho / mu_min)))


def recorded_iterations(iterations: int, dense: int) -> np.ndarray:
    """The iterations (1-based, increasing) at which the sweep records the models.

    All of ``1..dense``, then about ``dense`` more evenly spaced up to ``iterations`` (always included). Past
    ``dense`` iterations the ratio moves on the scale of ``rho / mu_min`` iterations, much longer than the spacing.
    """
    _positive_int("iterations", iterations)
    _positive_int("dense", dense)
    if iterations <= 2 * dense:
        return np.arange(1, iterations + 1)
    tail = np.rint(np.linspace(dense, iterations, dense + 1)).astype(np.int64)
    return np.unique(np.concatenate([np.arange(1, dense + 1), tail]))


class _Recorder:
    """``run_pgfl`` observer: calls ``sink(slot, state)`` at the recorded iterations and keeps nothing itself."""

    _NOTHING = np.empty(0)

    def __init__(self, iterations: int, recorded: np.ndarray, sink):
        self._slot = np.full(iterations, -1, dtype=np.int64)
        self._slot[np.asarray(recorded) - 1] = np.arange(len(recorded))
        self._n = 0
        self._sink = sink

    def __call__(self, state) -> np.ndarray:
        slot = self._slot[self._n]
        self._n += 1
        if slot >= 0:
            self._sink(int(slot), state)
        return self._NOTHING


def _run_recorded(problem, config, iterations, recorded, seed, runs, sink) -> None:
    """One ``run_pgfl`` from ``default_rng(seed)``: equal seeds give equal scheduling and noise draws (CRN)."""
    run_pgfl(problem, config, iterations, np.random.default_rng(seed), runs=runs,
             observe=_Recorder(iterations, recorded, sink))


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

    def with_tau(config, tau):
        return dataclasses.replace(config, taus=(float(tau),))

    def store(into):
        def sink(slot, state):
            into[slot] = state.w_servers
        return sink

    # noise-free column (exact): g^{xi=0} at the recorded iterations, one vector per tau
    reference = np.empty((G, 1, S, Q, d))
    _run_recorded(problem, with_tau(quiet, 0.0), iterations, recorded, int(seeds[0]), 1, store(reference))
    exact = {}
    for tau in scale.taus:
        gap = np.empty((G, S, Q, d))

        def sink(slot, state, gap=gap):
            gap[slot] = reference[slot, 0] - state.w_servers[0]
        _run_recorded(problem, with_tau(quiet, tau), iterations, recorded, int(seeds[0]), 1, sink)
        exact[tau] = gap
    exact_sq = {tau: np.sum(g**2, axis=-1) for tau, g in exact.items()}               # (G, S, Q)

    # privacy column: batches of runs, each batch from its own seed, CRN inside a batch; Chan's pooled moments
    count, mean, m2, plain = 0, {}, {}, {}
    for b, batch_seed in zip(batches, seeds[1:]):
        reference = np.empty((G, b, S, Q, d))
        _run_recorded(problem, with_tau(noisy, 0.0), iterations, recorded, int(batch_seed), b, store(reference))
        for tau in scale.taus:
            centred, raw = np.empty((G, b, S, Q)), np.empty((G, b, S, Q))

            def sink(slot, state, tau=tau, centred=centred, raw=raw):
                gap = reference[slot] - state.w_servers
                raw[slot] = np.sum(gap**2, axis=-1)
                centred[slot] = exact_sq[tau][slot] + np.sum((gap - exact[tau][slot]) ** 2, axis=-1)
            _run_recorded(problem, with_tau(noisy, tau), iterations, recorded, int(batch_seed), b, sink)
            batch_mean = centred.mean(axis=1)
            batch_m2 = np.sum((centred - batch_mean[:, None]) ** 2, axis=1)
            if count == 0:
                mean[tau], m2[tau], plain[tau] = batch_mean, batch_m2, raw.sum(axis=1)
            else:
                delta = batch_mean - mean[tau]
                mean[tau] = mean[tau] + delta * b / (count + b)
                m2[tau] = m2[tau] + batch_m2 + delta**2 * count * b / (count + b)
                plain[tau] = plain[tau] + raw.sum(axis=1)
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
                privacy: Mapping[str, float] = PRIVACY_DEFAULTS, alpha: float = SWEEP_ALPHA) -> dict:
    r"""Theorem II on one instance over ``scale.taus`` :math:`\times` ``scale.rho_grid``, with and without privacy
    noise (recipe R2.2-R2.4 of spec pgfl.md, amended by Review note R-a).

    Returns ``{"table": [row per (tau, rho)], "smallest_rho": [{"tau", "noiseless", "privacy_noise"}],
    "curves": {rho_over_Lmax: {tau: {...}}}, "instance": {...}}``; rows have the keys :data:`SWEEP_COLUMNS`
    (see :func:`sweep_penalty`). Penalties run through ``executor.map`` (serial when ``None``); the numbers do not
    depend on the executor. ``alpha`` is split by Bonferroni over the cells.

    References
    ----------
    Theorem II: seed 000_133b71fd0aa99eb4.txt eqs. (27)-(28), lines 258-264 (seed 004_180cd372987d137b.txt
    Theorem 5.2). Privacy noise: Algorithm 2, seed 000 lines 118-151, with Lemma 1 / Theorem III calibration
    :math:`\delta_k^{2(n)} = \zeta^n (2C/(\rho D_k))^2/(2\phi^{(0)})` (spec pgfl.md 2.3, convention I).
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
    items = [(scale, int(instance_seed), m, int(s), alpha_cell, dict(privacy)) for m, s in zip(scale.rho_grid, seeds)]
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
            "curves": {m: part["curves"] for m, part in zip(scale.rho_grid, parts)},
            "instance": {"seed": int(instance_seed), **scale.sizes, "lam": 1.0, "observation_noise_variance": 0.1,
                         "eta": first["eta"], "L_max": first["L_max"], "mu_min": first["mu_min"]},
            "privacy": dict(privacy), "alpha": alpha, "alpha_per_cell": alpha_cell}


def evaluate_noise_decomposition(params: Mapping) -> Evidence:
    r"""With common random numbers, privacy noise adds a data-independent, mean-zero response to the gap.

    For ridge the iteration is affine in (state, noise), so run by run
    :math:`g_r = g^{\xi=0} + e_r`, where :math:`g = \bar w - w`, :math:`g^{\xi=0}` is the noise-free gap and
    :math:`e_r` is the gap of the same runs (same seed) on the instance with :math:`y \equiv 0`; :math:`E e_r = 0`.
    Hence :math:`E\lVert g\rVert^2 = \lVert g^{\xi=0}\rVert^2 + E\lVert e\rVert^2 \ge \lVert g^{\xi=0}\rVert^2`: the
    noise never rescues Theorem II, and :func:`sweep_penalty`'s estimator and lower limit rest on this identity.

    ``params``: the keys of :func:`verify.pgfl.theorem1.build_instance` plus ``rho_factor`` (rho / L_max),
    ``taus`` (the tau schedule), ``phi0``, ``zeta``, ``C``, ``iterations``, ``runs`` and ``run_seed``.
    ``measured`` is :math:`\max|g_r - g^{\xi=0} - e_r|` over the largest model coordinate seen, in units of
    :math:`\gamma_{m}` with :math:`m = 8(d + K + S)\,n` (every rounded operation of :math:`n` iterations,
    without amplification); ``bound`` is 1. ``parameters["max_excess_over_eta"]`` is
    :math:`\max_n (D_n^{\xi=0} - B_n)/\eta`, what the property test pushes up with ``target()``.
    """
    from verify.pgfl.theorem1 import build_instance  # lazy: keeps the module graph acyclic at import

    p = dict(params)
    problem = build_instance(p)
    silent = dataclasses.replace(problem, y=tuple(np.zeros_like(v) for v in problem.y))
    iterations, runs, seed = int(p["iterations"]), int(p["runs"]), int(p["run_seed"])
    quiet = PGFLConfig(rho=float(p["rho_factor"]) * problem.max_curvature, taus=tuple(p["taus"]), algorithm="alg2")
    noisy = dataclasses.replace(quiet, phi0=float(p["phi0"]), zeta=float(p["zeta"]), C=float(p["C"]))

    def gap(instance, config, count):
        kw = dict(runs=count, observe=server_models_observer)
        bar = run_pgfl(instance, dataclasses.replace(config, taus=(0.0,)), iterations, np.random.default_rng(seed),
                       **kw).observations
        mixed = run_pgfl(instance, config, iterations, np.random.default_rng(seed), **kw).observations
        return bar - mixed, max(float(np.max(np.abs(bar))), float(np.max(np.abs(mixed))))

    exact, s0 = gap(problem, quiet, 1)
    total, s1 = gap(problem, noisy, runs)
    response, s2 = gap(silent, noisy, runs)
    error = float(np.max(np.abs(total - exact - response)))
    unit = gamma(8 * (problem.d + problem.K + problem.S) * iterations) * max(s0, s1, s2, 1e-300)
    eta = eta_cluster_distance(cluster_optima(problem))
    bound_n = np.asarray(intercluster_bound([quiet.tau(n) for n in range(1, iterations + 1)], eta))
    d_exact = np.sum(exact[:, 0] ** 2, axis=-1).max(axis=(1, 2))
    d_noisy = np.mean(np.sum(total**2, axis=-1), axis=1).max(axis=(1, 2))
    return Evidence(measured=error / unit, bound=1.0, holds=error <= unit,
                    parameters={**{k: p[k] for k in ("seed", "servers", "clients_per_server", "clusters", "d", "lam",
                                                     "rho_factor", "phi0", "zeta", "C", "iterations", "runs",
                                                     "run_seed")},
                                "tau_1": quiet.tau(1), "eta": eta, "decomposition_error": error,
                                "max_excess_over_eta": float(np.max(d_exact - bound_n)) / max(eta, 1e-300),
                                "noise_free_violated": bool(np.any(d_exact > bound_n)),
                                "noisy_mean_violated": bool(np.any(d_noisy > bound_n))})


def _noise_sweep_figures(sweep: dict, scale: SweepScale) -> tuple[FigureSpec, ...]:
    grid = scale.rho_grid
    series = []
    for tau in scale.taus:
        cells = [r for r in sweep["table"] if r["tau"] == float(tau)]
        series.append(Series(label=f"tau = {tau:g}, privacy noise (phi0 = {sweep['privacy']['phi0']:g}, "
                                   f"zeta = {sweep['privacy']['zeta']:g})", x=grid, group=f"tau{tau:g}",
                             y=[max(r["noisy_max_ratio"], 1e-300) for r in cells]))
        series.append(Series(label=f"tau = {tau:g}, noise-free", x=grid, style="dashed", group=f"tau{tau:g}",
                             y=[max(r["noiseless_max_ratio"], 1e-300) for r in cells]))
    series.append(Series(label="bound (ratio 1)", x=(grid[0], grid[-1]), y=(1.0, 1.0), style="dashed"))
    figures = [FigureSpec(
        name="noise_sweep_max_ratio", xlabel="rho / L_max", ylabel="max_n E[D_n] / B_n", xscale="log", yscale="log",
        title="Theorem II (Algorithm 2, CRN): max_n E[D_n] / B_n against rho", series=tuple(series))]
    at = min((m for m in grid if m >= 1.0), default=grid[-1])
    curves = sweep["curves"][at]
    series = []
    for tau in scale.taus:
        c = curves[float(tau)]
        series.append(Series(label=f"tau = {tau:g}, privacy noise", x=c["n"], y=np.maximum(c["noisy"], 1e-300),
                             group=f"tau{tau:g}"))
        series.append(Series(label=f"tau = {tau:g}, noise-free", x=c["n"], y=np.maximum(c["noiseless"], 1e-300),
                             style="dashed", group=f"tau{tau:g}"))
    longest = max(int(curves[float(t)]["n"][-1]) for t in scale.taus)
    series.append(Series(label="bound (ratio 1)", x=(1, longest), y=(1.0, 1.0), style="dashed"))
    figures.append(FigureSpec(name="noise_sweep_ratio_vs_iteration", xlabel="iteration n", ylabel="E[D_n] / B_n",
                              title=f"Theorem II (Algorithm 2, CRN) at rho = {at:g} L_max: E[D_n] / B_n",
                              xscale="log", yscale="log", series=tuple(series)))
    return tuple(figures)


def check_theorem2(ctx: CheckContext) -> CheckResult:
    """Exact counterexample over a grid of rho and tau, plus the paper-like sweep of rho (tau = 0.4)."""
    evidence = [evaluate_equal_optima(1.0, 3.0, 1.0, rho, tau)
                for rho in (1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3) for tau in (0.1, 0.4, 0.9)]
    table, curves, base = _paper_like_sweep(ctx)
    worst = max(evidence, key=lambda e: e.measured - e.bound)
    longest = max(c.size for c in curves.values())
    figure_ratio = FigureSpec(
        name="ratio_vs_iteration", title="Theorem II: D_n / B_n (tau = 0.4, noise-free), instance 0",
        xlabel="iteration n", ylabel="D_n / B_n", xscale="log", yscale="log",
        series=tuple(Series(label=f"rho = {m:g} L_max", x=np.arange(1, curves[m].size + 1),
                            y=np.maximum(curves[m], 1e-300)) for m in RHO_GRID)
        + (Series(label="bound (ratio 1)", x=(1, longest), y=(1.0, 1.0), style="dashed"),))
    figure_rho = FigureSpec(
        name="max_ratio_vs_rho", title="Theorem II: max_n D_n / B_n against rho (tau = 0.4)",
        xlabel="rho / L_max", ylabel="max_n D_n / B_n", xscale="log", yscale="log",
        series=tuple(Series(label=f"instance {row['instance']}", x=RHO_GRID,
                            y=[row["ratio_by_rho"][m] for m in RHO_GRID], style="points") for row in table)
        + (Series(label="bound (ratio 1)", x=(RHO_GRID[0], RHO_GRID[-1]), y=(1.0, 1.0), style="dashed"),))
    violated = sum(not e.holds for e in evidence)
    if violated == 0:
        raise AssertionError("the equal-optima instance no longer violates Theorem II: check the implementation")
    scale = SWEEP_SCALES[ctx.profile]
    sweep_seeds = ctx.seed_sequence("pgfl.theorem2.noise_sweep").generate_state(2)
    sweep = noise_sweep(scale, int(sweep_seeds[0]), int(sweep_seeds[1]), executor=ctx.executor)
    sweep_summary = "; ".join(f"tau = {r['tau']:g}: {r['noiseless']} / {r['privacy_noise']}"
                              for r in sweep["smallest_rho"])
    return CheckResult(
        claim_id="pgfl.theorem2", verdict=Verdict.REFUTED,
        summary=(f"eta = 0 instance violates B_n at every rho in 1e-2..1e3 and tau in {{0.1, 0.4, 0.9}} "
                 f"({violated}/{len(evidence)}); paper-like sweep: "
                 + "; ".join(f"instance {r['instance']}: bound holds from rho/L_max = "
                             f"{r['smallest_rho_over_Lmax_from_which_bound_holds']}" for r in table)
                 + f"; tau x rho sweep (Algorithm 2), bound holds in expectation from rho/L_max = noise-free / with "
                   f"privacy noise: {sweep_summary}"),
        quantity="D_1 = max_{s,q} ||w_bar - w||^2 against B_1 = tau eta (eta = 0)",
        measured=worst.measured, bound=worst.bound, margin=worst.bound - worst.measured,
        counterexample=dict(worst.parameters), corrected_claim=None, seed=ctx.seed,
        monte_carlo=MonteCarlo(n=min(r["runs"] for r in sweep["table"]), alpha=SWEEP_ALPHA, seed=ctx.seed),
        figures=(figure_ratio, figure_rho) + _noise_sweep_figures(sweep, scale),
        details={"smallest_rho_table": table, "base_iterations": base, "rho_grid_over_Lmax": list(RHO_GRID),
                 "horizon_rule": "max(base, rho / mu_min) iterations per rho (sweep_horizon); a cell with ratio <= 1 "
                                 "holds only if the ratio peaked within 90 % of the horizon, else inconclusive",
                 "with_privacy_noise (Algorithm 2, tau = 0.4; mean over runs; rho as multiple of L_max)":
                     _noisy_comparison(ctx),
                 "noise_sweep": {
                     "table": sweep["table"], "columns": list(SWEEP_COLUMNS),
                     "smallest_rho_over_Lmax_from_which_bound_holds_in_expectation": sweep["smallest_rho"],
                     "instance": sweep["instance"], "privacy": sweep["privacy"], "taus": list(scale.taus),
                     "rho_grid_over_Lmax": list(scale.rho_grid), "alpha": sweep["alpha"],
                     "alpha_per_cell": sweep["alpha_per_cell"],
                     "algorithm": "Algorithm 2 (dual_ref = local_aggregate), full participation; noise-free column "
                                  "= the same algorithm with xi = 0",
                     "coupling": "common random numbers: the tau = 0 run and each tau-run share data, "
                                 "initialisation, scheduling and noise draws, run by run",
                     "estimator": "E||g||^2 = ||g(xi=0)||^2 + E||g - g(xi=0)||^2 (affine iteration, mean-zero noise); "
                                  "Student-t limits, Bonferroni over cells, recorded n, (s, q) and sides; lower limit "
                                  ">= ||g(xi=0)||^2 (Jensen, exact)",
                     "status": "violated: lower limit of max_{s,q} E / B_n > 1 at some n; holds: upper limit <= 1 at "
                               "every recorded n and the ratio peaked inside the horizon; else inconclusive",
                     "horizon_rule": f"max({scale.base_iterations}, ceil({scale.horizon_factor:g} rho / mu_min)) "
                                     f"iterations; every n <= {scale.dense_iterations} recorded, then about "
                                     f"{scale.dense_iterations} more evenly spaced",
                 }})


def evaluate_steady_state(rho: float, tau: float, iterations: int = 3000) -> Evidence:
    """lim_n D_n / eta on the anisotropic instance, from the two runs' exact fixed points.

    Both iterations are affine with spectral radius < 1 (asserted), so the limit of D_n is the squared gap
    of the fixed points; ``iterations`` of simulation must approach that limit (cross-check).
    """
    problem = anisotropic_instance()
    eta = eta_cluster_distance(cluster_optima(problem))
    cfg = PGFLConfig(rho=rho, taus=(tau,))
    mixed, res_mixed, r_mixed = fixed_point(problem, cfg)
    bar, res_bar, r_bar = fixed_point(problem, PGFLConfig(rho=rho))
    if max(r_mixed, r_bar) >= 1.0:
        raise ArithmeticError(f"iteration not contractive (r(T) = {max(r_mixed, r_bar):.4g}): no limit to compare")
    limit = float(np.max(np.sum((bar - mixed) ** 2, axis=-1)))
    simulated = float(gap_sequence(problem, cfg, iterations, seed=0)[-1])
    return Evidence(measured=limit, bound=eta, holds=limit <= eta,
                    parameters={"rho": rho, "tau": tau, "iterations": iterations, "eta": eta, "D_limit": limit,
                                "D_simulated_at_iterations": simulated, "spectral_radius": max(r_mixed, r_bar),
                                "fixed_point_residual": max(res_mixed, res_bar), "instance": "anisotropic_instance()"})


def check_steady_state(ctx: CheckContext) -> CheckResult:
    """The weaker statement lim sup_n D_n <= eta (constant tau, noise-free)."""
    L = anisotropic_instance().max_curvature
    evidence = [evaluate_steady_state(m * L, tau) for m in (0.1, 0.5, 1.0) for tau in (0.1, 0.4)]
    figure = FigureSpec(
        name="limit_over_eta", title="lim D_n / eta on a two-cluster instance with anisotropic Hessians",
        xlabel="rho / L_max", ylabel="lim_n D_n / eta", xscale="log", yscale="log",
        series=tuple(Series(label=f"tau = {tau:g}", x=(0.1, 0.5, 1.0), style="points",
                            y=[e.measured / e.bound for e in evidence if e.parameters["tau"] == tau]) for tau in (0.1, 0.4))
        + (Series(label="Theorem II limit (ratio 1)", x=(0.1, 1.0), y=(1.0, 1.0), style="dashed"),))
    return result_from_evidence("pgfl.theorem2_steady_state", evidence, ctx=ctx,
                                quantity="lim_n D_n against eta", what="lim_n D_n <= eta", figures=[figure])


def evaluate_corollary_identity(seed: int, n: int, tau: float, rho_mult: float, *, noise: bool = False) -> Evidence:
    r"""With tau^(i) = 0 for i < n: w_bar - w = tau (w_hat_q - mean_{r != q} w_hat_r) at iteration n, exactly."""
    problem = synthetic_regression(np.random.default_rng(seed), servers=3, clients_per_server=4, d=3, clusters=3,
                                   lam=0.1)
    taus = tuple([0.0] * (n - 1) + [tau])
    extra = dict(algorithm="alg2", phi0=0.5, zeta=0.99, C=0.1) if noise else {}
    cfg = PGFLConfig(rho=rho_mult * problem.max_curvature, taus=taus, **extra)
    ref = PGFLConfig(**{**cfg.__dict__, "taus": (0.0,)})
    bar = run_pgfl(problem, ref, n, np.random.default_rng(seed)).state
    mixed = run_pgfl(problem, cfg, n, np.random.default_rng(seed)).state
    hat = mixed.w_hat[0]
    Q = problem.n_clusters
    predicted = tau * (hat - (hat.sum(axis=1, keepdims=True) - hat) / (Q - 1))
    gap = bar.w_servers[0] - mixed.w_servers[0]
    scale = max(float(np.max(np.abs(hat))), 1e-300)
    err = float(np.max(np.abs(gap - predicted))) / (gamma(16) * scale)
    d_n = float(np.max(np.sum(gap**2, axis=-1)))
    spread = float(np.max(np.sum((hat[:, :, None, :] - hat[:, None, :, :]) ** 2, axis=-1)))
    within = d_n <= tau**2 * spread * (1 + gamma(16))
    return Evidence(measured=err, bound=1.0, holds=err <= 1.0 and within,
                    parameters={"seed": seed, "n": n, "tau": tau, "rho_mult": rho_mult, "noise": noise, "D_n": d_n,
                                "tau2_spread": tau**2 * spread})


def check_corollary(ctx: CheckContext) -> CheckResult:
    """The Corollary at n = 1 on the equal-optima instance (hypothesis tau^(i) = 0, i < 1, is vacuous)."""
    evidence = [evaluate_equal_optima(1.0, 3.0, 1.0, rho, tau) for rho in (1e-1, 1.0, 1e2) for tau in (0.1, 0.9)]
    worst = max(evidence, key=lambda e: e.measured - e.bound)
    taus = np.linspace(0.05, 0.95, 10)
    figure = FigureSpec(
        name="single_step_gap", title="Corollary at n = 1, eta = 0 (bound tau eta = 0)", xlabel="tau",
        ylabel="D_1", yscale="log",
        series=tuple(Series(label=f"rho = {rho:g}", x=taus, style="points",
                            y=[evaluate_equal_optima(1.0, 3.0, 1.0, rho, float(t)).measured for t in taus])
                     for rho in (0.1, 1.0, 10.0)))
    return CheckResult(
        claim_id="pgfl.corollary", verdict=Verdict.REFUTED if not worst.holds else Verdict.CONFIRMED,
        summary=f"D_1 = {worst.measured:.4g} > tau eta = 0 on the equal-optima instance (every rho, tau tried)",
        quantity="D_1 against tau_1 eta", measured=worst.measured, bound=worst.bound,
        margin=worst.bound - worst.measured, counterexample=None if worst.holds else dict(worst.parameters),
        corrected_claim="pgfl.corollary_identity", seed=ctx.seed, figures=(figure,))


def check_corollary_identity(ctx: CheckContext) -> CheckResult:
    rng = np.random.default_rng(ctx.seed_sequence("pgfl.corollary_identity").generate_state(1)[0])
    count = 6 if ctx.profile == "ci" else 40
    evidence = [evaluate_corollary_identity(int(rng.integers(1 << 30)), int(rng.integers(1, 60)),
                                            float(rng.uniform(0.01, 1.0)), float(rng.uniform(0.1, 2.0)),
                                            noise=bool(i % 2)) for i in range(count)]
    taus = np.linspace(0.05, 1.0, 12)
    pts = [evaluate_corollary_identity(7, 40, float(t), 0.5) for t in taus]
    figure = FigureSpec(
        name="quadratic_in_tau", title="Single inter-cluster step after 39 steps of tau = 0: D_n vs tau",
        xlabel="tau_n", ylabel="D_n", xscale="log", yscale="log",
        series=(Series(label="D_n (simulation)", x=taus, y=[p.parameters["D_n"] for p in pts], style="points"),
                Series(label="tau^2 max_{q,r} ||w_hat_q - w_hat_r||^2", x=taus,
                       y=[p.parameters["tau2_spread"] for p in pts])))
    return result_from_evidence("pgfl.corollary_identity", evidence, ctx=ctx,
                                quantity="max |gap - tau (w_hat_q - mean_r w_hat_r)| / rounding bound",
                                what="w_bar - w = tau (w_hat_q - mean_{r != q} w_hat_r)", figures=[figure])


def evaluate_limit_identity(seed: int, servers: int, tau: float, rho_mult: float, *, problem: PGFLProblem | None = None,
                            fixed_point_fn=fixed_point) -> Evidence:
    r"""lim_n D_n = D_inf := max_{s,q} ||w_bar*_{s,(q)} - w*_{tau,s,(q)}||^2, from the two affine iterations' fixed points.

    Both runs (tau = 0 and constant tau, noise-free, full participation) are affine maps u -> T u + c; when both
    spectral radii are < 1 they converge to the solved fixed points (``fixed_point_fn``, residual recorded). The
    runs go on until max(r)^N <= 1e-13; ``delta_N`` is the measured distance of the two runs' server models from
    their fixed points. Holds iff delta_N is below 1e-8 of the models' scale (the runs reached the solved points)
    and |D_N - D_inf| <= 2 sqrt(D_inf) delta_N + delta_N^2 + 64 eps D_inf (the identity to first order in delta_N).
    """
    if problem is None:   # redrawn (same rng) until every cluster has a client, so eta is defined
        rng = np.random.default_rng(seed)
        for _ in range(50):
            problem = synthetic_regression(rng, servers=servers, clients_per_server=4, d=3, clusters=3, lam=0.1)
            if np.unique(problem.client_cluster).size == 3:
                break
        else:
            raise RuntimeError(f"seed {seed}: no instance with every cluster populated in 50 draws")
    rho = rho_mult * problem.max_curvature
    cfg = PGFLConfig(rho=rho, taus=(tau,))
    mixed_fp, res_m, r_m = fixed_point_fn(problem, cfg)
    bar_fp, res_b, r_b = fixed_point_fn(problem, PGFLConfig(rho=rho))
    radius = max(r_m, r_b)
    if radius >= 1.0:
        raise ValueError(f"rho_mult = {rho_mult}: an iteration is not contractive (r = {radius:.4g}); outside the "
                         "statement's hypotheses")
    needed = int(math.ceil(math.log(1e-13) / math.log(max(radius, 1e-3))))
    n_sim = min(needed, 1500)
    kw = dict(runs=1, observe=None)
    bar = run_pgfl(problem, PGFLConfig(rho=rho), n_sim, np.random.default_rng(seed), **kw).state.w_servers[0]
    mixed = run_pgfl(problem, cfg, n_sim, np.random.default_rng(seed), **kw).state.w_servers[0]
    n_srv = problem.S * problem.n_clusters * problem.d
    shape = bar_fp.shape
    # beyond n_sim (slow contractions): u_n = u* + T^n (u_0 - u*) with the reference's affine map, u_0 = 0; the
    # simulated iterate at n_sim must match that prediction (the map describes the run), then n = needed is reached
    # by repeated squaring of T
    agreement, n = 0.0, n_sim
    if needed > n_sim:
        models = []
        for config, run_models in ((PGFLConfig(rho=rho), bar), (cfg, mixed)):
            T, c = _affine_map(problem, config)
            u_star = np.linalg.solve(np.eye(T.shape[0]) - T, c)
            pred = u_star - np.linalg.matrix_power(T, n_sim) @ u_star
            agreement = max(agreement, float(np.max(np.abs(pred[:n_srv].reshape(shape) - run_models)))
                            / max(float(np.max(np.abs(run_models))), 1e-300))
            models.append((u_star - np.linalg.matrix_power(T, needed) @ u_star)[:n_srv].reshape(shape))
        bar, mixed, n = models[0], models[1], needed
    d_n = float(np.max(np.sum((bar - mixed) ** 2, axis=-1)))
    d_inf = float(np.max(np.sum((bar_fp - mixed_fp) ** 2, axis=-1)))
    delta_n = max(float(np.linalg.norm(bar - bar_fp)), float(np.linalg.norm(mixed - mixed_fp)))
    scale = max(float(np.max(np.abs(bar_fp))), 1e-300)
    allowance = 2.0 * math.sqrt(d_inf) * delta_n + delta_n**2 + gamma(64) * d_inf
    eta = eta_cluster_distance(cluster_optima(problem))
    return Evidence(measured=abs(d_n - d_inf), bound=allowance,
                    holds=bool(delta_n <= 1e-8 * scale and abs(d_n - d_inf) <= allowance
                               and agreement <= gamma(16 * n_sim)),
                    parameters={"seed": seed, "servers": servers, "tau": tau, "rho_mult": rho_mult, "iterations": n,
                                "simulated_iterations": n_sim, "simulation_vs_affine_prediction": agreement,
                                "spectral_radius": radius, "fixed_point_residual": max(res_m, res_b), "D_N": d_n,
                                "D_inf": d_inf, "delta_N": delta_n, "eta": eta, "D_inf_over_eta": d_inf / eta})


def check_limit_identity(ctx: CheckContext, *, fixed_point_fn=fixed_point) -> CheckResult:
    """Random small multi-server regression instances and the anisotropic instance (where D_inf >> eta)."""
    rng = np.random.default_rng(ctx.seed_sequence("pgfl.theorem2_limit_identity").generate_state(1)[0])
    count = 3 if ctx.profile == "ci" else 20
    evidence = [evaluate_limit_identity(int(rng.integers(1 << 30)), int(rng.integers(1, 4)),
                                        float(rng.uniform(0.05, 0.95)), float(rng.uniform(0.5, 2.0)),
                                        fixed_point_fn=fixed_point_fn) for _ in range(count)]
    aniso = anisotropic_instance()
    evidence += [evaluate_limit_identity(0, 1, tau, m, problem=aniso, fixed_point_fn=fixed_point_fn)
                 for m in ((1.0,) if ctx.profile == "ci" else (0.5, 1.0, 2.0)) for tau in (0.1, 0.4)]
    figure = FigureSpec(
        name="limit_over_eta_identity", title="lim D_n (simulation) against D_inf (fixed points), relative to eta",
        xlabel="D_inf / eta (fixed points)", ylabel="D_N / eta (simulation)", xscale="log", yscale="log",
        series=(Series(label="instances", x=[e.parameters["D_inf_over_eta"] for e in evidence],
                       y=[e.parameters["D_N"] / e.parameters["eta"] for e in evidence], style="points"),
                Series(label="identity", x=(1e-4, 1e3), y=(1e-4, 1e3), style="dashed")))
    return result_from_evidence(
        "pgfl.theorem2_limit_identity", evidence, ctx=ctx,
        quantity="|D_N - D_inf| against 2 sqrt(D_inf) delta_N + delta_N^2 (runs converged to the solved fixed points)",
        what="lim_n D_n = ||w_bar* - w*_tau||^2 (fixed points of the two affine iterations)", figures=[figure],
        details={"D_inf_over_eta": [e.parameters["D_inf_over_eta"] for e in evidence]})


def _reproduce_equal_optima(counterexample) -> Evidence:
    p = counterexample
    return evaluate_equal_optima(p["a1"], p["a2"], p["w0"], p["rho"], p["tau"])


def _reproduce_steady_state(counterexample) -> Evidence:
    return evaluate_steady_state(counterexample["rho"], counterexample["tau"], counterexample["iterations"])


_CITE_T2 = (Citation(seed=SEED_A, label="Theorem II", equation="(27)-(28)", lines="258-324"),
            Citation(seed=SEED_THESIS, label="Theorem 5.2", equation="(5.27)-(5.28)"))

CLAIMS = (
    Claim(
        id="pgfl.theorem2", paper="pgfl",
        title="Theorem II: inter-cluster learning moves the models by at most B_n, for sufficiently large rho",
        citations=_CITE_T2,
        statement=("Given a sufficiently large penalty rho, for all iterations n, servers s and clusters q: "
                   "E||w_bar_{s,(q)}^(n) - w_{s,(q)}^(n)||^2 <= sum_{i=1}^n (prod_{j=i+1}^n (1 - tau_j)) tau_i eta, "
                   "with w_bar the tau = 0 run and eta = max_{q,r} ||w*_q - w*_r||^2."),
        hypotheses=("Assumption 1 (convex, smooth f_k)", "rho sufficiently large", "common initialisation w = 0",
                    "expectation over privacy and observation noise"),
        check=check_theorem2, expected=Verdict.REFUTED,
        reason=("Two clusters with equal optima (eta = 0) but different curvatures: D_1 = tau^2 w0^2 "
                "(2a1/(2a1+rho) - 2a2/(2a2+rho))^2 > 0 for every rho > 0 and tau in (0, 1). Proof step (iii) "
                "(seed 000 eqs. (31), (38)) compares transient iterates with a constant built from optima. At the "
                "paper's size the bound fails up to 100 L_max on most instances (details: smallest-rho table). "
                "Privacy noise cannot rescue it: with common random numbers the ridge iteration gives "
                "E D_n >= D_n(xi = 0), and the tau x rho sweep with the paper's phi0 = 0.001, zeta = 0.99 finds "
                "violations in expectation up to the largest rho tried (details: noise_sweep)."),
        severity="false",
        uncorrected_because=("no finite-n bound in terms of eta can hold (eta = 0 with D_1 > 0) and no bound with the "
                             "cluster Hessians has been derived (for large rho the gap follows a rho-independent "
                             "transient limit); what fedcheck checks instead is the first-step identity "
                             "pgfl.corollary_identity and the limit identity pgfl.theorem2_limit_identity"),
        reproduce=_reproduce_equal_optima,
    ),
    Claim(
        id="pgfl.theorem2_steady_state", paper="pgfl",
        title="Weaker reading of Theorem II: the bound holds in the limit n -> infinity",
        citations=_CITE_T2,
        statement=("For constant tau and no noise, lim_n E||w_bar_{s,(q)}^(n) - w_{s,(q)}^(n)||^2 <= eta "
                   "(the limit of B_n)."),
        hypotheses=("constant tau in (0, 1)", "noise-free", "rho in [0.1, 1] L_max", "S = 1"),
        check=check_steady_state, expected=Verdict.REFUTED,
        reason=("With anisotropic cluster Hessians the tau-run's fixed point is pulled toward the Hessian-weighted "
                "pooled optimum (H_1 + H_2)^{-1}(H_1 w_1 + H_2 w_2), which can lie far outside the segment between "
                "the optima: lim D_n / eta up to ~140 on a 2-D instance. Found by fedcheck; not in the spec."),
        severity="false",
        reproduce=_reproduce_steady_state, corrected_by="pgfl.theorem2_limit_identity",
    ),
    Claim(
        id="pgfl.theorem2_limit_identity", paper="pgfl",
        title="Corrected limit of Theorem II: lim D_n is the squared gap of two fixed points, not bounded by eta",
        citations=_CITE_T2,
        statement=("For constant tau in (0, 1), no noise, full participation and rho such that both the tau = 0 and the "
                   "tau iterations are contractive (r < 1), lim_n D_n = D_inf := max_{s,q} ||w_bar*_{s,(q)} - "
                   "w*_{tau,s,(q)}||^2, where w_bar* (= (Pc)) and w*_tau are the fixed points of the two affine "
                   "iterations (one linear solve each). D_inf depends on the cluster Hessians and is not bounded by "
                   "eta (D_inf/eta about 140 on the anisotropic instance)."),
        hypotheses=("ridge f_k (affine iteration)", "constant tau in (0, 1)", "noise-free, full participation",
                    "both iterations contractive (rho in [0.5, 2] L_max on the instances drawn)"),
        check=check_limit_identity, expected=Verdict.CONFIRMED,
        reason=("Each iteration is an affine contraction, so it converges to its fixed point; the runs reach the "
                "solved fixed points to 1e-8 of their scale after max(r)^N <= 1e-13 and D_N equals D_inf within the "
                "first-order allowance 2 sqrt(D_inf) delta_N + delta_N^2, on random multi-server instances and on "
                "the anisotropic instance. This replaces the limit of B_n (eta) by a computable quantity; it is "
                "exact, not a bound in closed form."),
        corrects="pgfl.theorem2_steady_state",
    ),
    Claim(
        id="pgfl.corollary", paper="pgfl",
        title="Corollary: a single step of inter-cluster learning moves the models by at most tau_n eta",
        citations=(Citation(seed=SEED_A, label="Corollary", equation="(40)", lines="326-330"),
                   Citation(seed=SEED_THESIS, label="Corollary to Theorem 5.2", equation="(5.29)")),
        statement=("If tau^(i) = 0 for all i < n and tau^(n) != 0, then "
                   "E||w_bar_{s,(q)}^(n) - w_{s,(q)}^(n)||^2 <= tau^(n) eta."),
        hypotheses=("tau^(i) = 0 for i < n", "tau^(n) in (0, 1)"),
        check=check_corollary, expected=Verdict.REFUTED,
        reason="At n = 1 the hypothesis is vacuous and the equal-optima instance (eta = 0) has D_1 > 0.",
        severity="false",
        reproduce=_reproduce_equal_optima, corrected_by="pgfl.corollary_identity",
    ),
    Claim(
        id="pgfl.corollary_identity", paper="pgfl",
        title="Corrected Corollary: a single step moves the models by exactly tau_n times the cluster spread of w_hat",
        citations=(Citation(seed=SEED_A, label="Corollary", equation="(40)"),
                   Citation(seed=SEED_A, label="inter-cluster step", equation="(10)")),
        statement=("If tau^(i) = 0 for i < n, then w_bar^(n) - w^(n) = tau^(n) (w_hat_q^(n) - (1/(Q-1)) sum_{r != q} "
                   "w_hat_r^(n)) at every server (with or without privacy noise, common random numbers), hence "
                   "D_n <= (tau^(n))^2 max_{q,r} ||w_hat_q^(n) - w_hat_r^(n)||^2."),
        hypotheses=("tau^(i) = 0 for i < n", "both runs share data, initialisation and noise draws"),
        check=check_corollary_identity, expected=Verdict.CONFIRMED,
        reason="Both runs coincide up to step n - 1; step (10) then mixes the common w_hat. Checked to rounding.",
        corrects="pgfl.corollary",
    ),
)
