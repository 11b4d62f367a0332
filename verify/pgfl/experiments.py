r"""PGFL regression experiments R-1 ... R-7 (shared/spec/pgfl.md section 5.1): the paper's orderings.

The paper (seed 004_180cd372987d137b.txt lines 1495-1545; seed 003_944125634f6cc0f2.txt lines
418-450; seed 000_133b71fd0aa99eb4.txt lines 410-443) reports no curve data, only qualitative
statements about its learning curves. Each statement is one claim here, decided by a Monte-Carlo
comparison of NMSD (seed 004 eq. (5.35), in dB) between *arms* (architecture + tau schedule + setting):

* replicate :math:`i` draws a fresh instance of the spec 5.1 setting (server graph, clusters, data,
  :func:`reference_impl.pgfl.synthetic_regression`) and one algorithm seed used by every arm, so the
  arms see the same data, the same scheduling draws and the same standard-normal privacy noise
  (common random numbers; :func:`reference_impl.pgfl.run_pgfl` draws them whatever the configuration);
* "A below B at iteration n" holds when the one-sided upper confidence limit (Student t,
  :func:`verify.tolerance.mean_upper_confidence_limit`) of the mean paired difference
  :math:`\delta_i = 10\log_{10}\mathrm{NMSD}_{A,i}(n) - 10\log_{10}\mathrm{NMSD}_{B,i}(n)` is below 0;
  "nearly identical" is two such one-sided tests against :math:`\pm` :data:`NEAR_IDENTICAL_DB`;
  a monotone trend needs its end points ordered and no consecutive pair significantly reversed.
  A claim's comparisons share :data:`ALPHA` by Bonferroni; the result records MonteCarlo(n, alpha, seed).

Choices the seeds leave open (spec 2.7 defaults):
Algorithm 2 with the literal dual reference in every arm (the privacy-free settings are its
:math:`\xi = 0` case, as the paper writes :math:`\xi^{(n)} = 0`), :math:`\lambda = 1`,
:math:`\rho = 0.25\,L_{max}` (:math:`L_{max}` over all clients of all replicates, so each replicate has
:math:`\rho/L_{max}` in [0.25, 0.31]), :math:`\sigma_v^2 = 0.1`, :math:`x \sim N(0, I_d)`,
:math:`w_0 \sim N(0, I_d)`, clients assigned to clusters uniformly, noise convention I, cached
aggregation under scheduling, and :math:`C = 1` at the paper's size. GFL is PGFL with :math:`Q = 1`
(V5), ClusterFL is PGFL without server links (V3, :math:`\tau = 0.4`); both are measured against each
client's own cluster model (spec section 7). The paper's tuning of the baselines to "the same initial
convergence rate" is not reproduced. A *steady state* is read at the end of the paper's horizon
(300 iterations), except in R-5, whose curves still cross there: its steady state is the common limit
of the scheduled private runs, the noise-free full-participation run (cached aggregation gives the
scheduled iteration the same fixed point, and the noise variance tends to 0).

Findings (paper's size, 20 replicates; see each claim's reason): GFL beats PGFL in R-1 by 0.6 dB with
the paper's cluster similarity (PGFL wins with the R-5 dissimilarity); scheduling slows GFL, it does
not help it; after 300 iterations privacy still costs 2.5 dB (not "nearly identical"; depends on the
unreported C and rho); the R-4 curve is flat from tau = 0.4 to 0.9 (no degradation). The other
orderings are reproduced.

Sizes: the ``thorough`` profile runs the paper's size (S = 10, 15 clients per server, d = 60, 3 of 15
scheduled, 300 iterations, sweeps read at 200) with 20 replicates. The ``ci`` profile runs a reduced
replica (S = 4, 15 clients per server, 3 of 15 scheduled, d = 30, 150 iterations, sweeps at 100, noise-free
limits at 200, 8 replicates; 24 for the heavy-tailed R-5 steady-state comparison) with :math:`C = d/60`,
which keeps the noise-to-signal ratio of the paper's size:
:math:`L_{max}` (hence :math:`\rho`) grows about linearly in :math:`d`, so the per-coordinate noise
:math:`\Delta_k = 2C/(\rho D_k)` stays comparable to the per-coordinate scale of :math:`w_0` only if
:math:`C \propto d`. Smaller replicas (d = 10-20, or 5-10 clients per server) reverse some orderings
(the R-5 steady state, R-1's tau = 0.4 at the horizon), because PGFL's fixed-point error relative to
the cluster spread depends on the clients per (server, cluster) group and on d.

Replicates go through the check context's executor (``fedcheck report --workers N``). Simulations are
memoised per (scale, root seed, arm), so claims sharing an arm (the R-3 curve of tau = 0.4 is also a
point of the R-4, R-6 and R-7 sweeps, as in the paper) simulate it once.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from reference_impl.pgfl import PGFLConfig, PGFLProblem, run_pgfl, synthetic_regression
from theory.privacy import zcdp_total_variance_decay
from verify.evidence import result_from_evidence
from verify.records import CheckContext, CheckResult, Citation, Claim, Evidence, FigureSpec, MonteCarlo, Series, Verdict
from verify.tolerance import RECORDED_ALPHA as ALPHA, bonferroni, mean_upper_confidence_limit

__all__ = [
    "ALPHA",
    "CLAIMS",
    "NEAR_IDENTICAL_DB",
    "SCALES",
    "Arm",
    "Comparison",
    "Scale",
    "as_single_cluster",
    "check_r1_clusterfl",
    "check_r1_gfl",
    "check_r1_gfl_competitive",
    "check_r1_tau",
    "check_r2_gfl",
    "check_r2_gfl_slower",
    "check_r2_scheduling",
    "check_r3_privacy_cost",
    "check_r3_privacy_slows",
    "check_r4_large_tau",
    "check_r4_large_tau_flat",
    "check_r4_tau_sweep",
    "check_r5_decaying_tau",
    "check_r5_fixed_tau",
    "check_r6_phi0",
    "check_r7_zeta",
    "client_nmsd_observer",
    "comparison_parameters",
    "evaluate_comparison",
    "nmsd_curves",
    "with_server_graph",
]

SEED_A = "000_133b71fd0aa99eb4.txt"
SEED_J = "003_944125634f6cc0f2.txt"
SEED_THESIS = "004_180cd372987d137b.txt"

#: Operational reading of "nearly identical" / "near-identical" (R-3, R-5): mean paired NMSD
#: difference within 1 dB (a factor 1.26). The paper gives no number; the measured confidence limits
#: are reported so that another margin can be applied by the reader.
NEAR_IDENTICAL_DB = 1.0
#: rho = RHO_OVER_LMAX * L_max (spec 2.7 default for regression).
RHO_OVER_LMAX = 0.25
#: Shared seed key: every claim of this module sees the same replicates (as the paper's figures do).
EXPERIMENT_KEY = "pgfl.experiments.regression"
#: The paper's parameters (seed 004 lines 1497-1544): tau, its decay (V2), phi0, zeta, the two spreads of
#: the cluster models.
PAPER_TAU = 0.4
PAPER_TAU_DECAY = 0.98
PAPER_PHI0 = 1e-3
PAPER_ZETA = 0.99
PAPER_GAMMA = 0.15
LOW_SIMILARITY_GAMMA = 0.5
#: Stated total zCDP of the privacy experiments (seed 004 line 1521); see pgfl.theorem4.reported_total.
REPORTED_PHI_FINAL = 0.095
#: Sweep grids (spec 5.1 defaults: tau 0:0.1:0.9, phi0 log-spaced 1e-4..1e-1, zeta 0.9..0.999). The ci
#: tau grid keeps the points the comparisons use.
TAU_GRID = {"ci": (0.0, 0.2, 0.3, 0.4, 0.9), "thorough": tuple(round(0.1 * i, 1) for i in range(10))}
PHI0_GRID = (1e-4, 1e-3, 1e-2, 1e-1)
ZETA_GRID = (0.9, 0.95, 0.99, 0.999)


# ------------------------------------------------------------------------------------------------
# Architectures (spec 2.6 V3, V5 and section 7) built from the fields of a PGFL problem.


def with_server_graph(problem: PGFLProblem, adjacency) -> PGFLProblem:
    """The same clients, clusters and data on another server graph (all-False adjacency: ClusterFL, V3)."""
    adjacency = np.asarray(adjacency, dtype=bool)
    if adjacency.shape != problem.adjacency.shape:
        raise ValueError(f"adjacency must have shape {problem.adjacency.shape} (S = {problem.S} servers), "
                         f"got {adjacency.shape}")
    return dataclasses.replace(problem, adjacency=adjacency)


def as_single_cluster(problem: PGFLProblem) -> PGFLProblem:
    """GFL (V5): one global model, Q = 1, every client in cluster 0; step (10) is skipped by the algorithm.

    ``true_models`` is dropped (it would need shape (1, d)); measure the NMSD against each client's own
    data-generating model with :func:`client_nmsd_observer`.
    """
    return dataclasses.replace(problem, n_clusters=1, client_cluster=np.zeros(problem.K, dtype=np.int64),
                               true_models=None)


def client_nmsd_observer(truth: np.ndarray):
    r"""NMSD (seed 004 eq. (5.35)) per run: the mean over clients of
    :math:`\lVert w_k - w^\circ_{(q(k))}\rVert^2/\lVert w^\circ_{(q(k))}\rVert^2`, shape (runs,).

    ``truth`` is (K, d), each client's own data-generating model, so the metric does not depend on the
    architecture's cluster labels (GFL is measured against the clients' cluster models, spec section 7).
    """
    truth = np.asarray(truth, dtype=np.float64)
    if truth.ndim != 2 or truth.shape[0] < 1:
        raise ValueError(f"truth must be a (K, d) array with K >= 1, got shape {truth.shape}")
    norms = np.sum(truth**2, axis=1)
    if np.any(norms <= 0) or not np.all(np.isfinite(norms)):
        raise ValueError("every client's data-generating model must be finite and non-zero (the NMSD divides "
                         "by its norm)")

    def observe(state) -> np.ndarray:
        return np.mean(np.sum((state.w_clients - truth) ** 2, axis=2) / norms, axis=1)

    return observe


# ------------------------------------------------------------------------------------------------
# Sizes, arms and the cached simulation.


def _positive_int(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scale:
    """Instance size and Monte-Carlo size of one profile.

    Attributes
    ----------
    servers, clients_per_server, d : int
        S, |C_s| and the model dimension of the spec 5.1 setting.
    scheduled : int
        Clients each server samples per iteration under scheduling (V4).
    iterations : int
        Horizon N of the learning curves (300 in the paper's Figs 5.1).
    sweep_iteration : int
        Iteration at which the sweeps (R-4, R-6, R-7) read the NMSD (200 in the paper).
    early_iteration : int
        Iteration that stands for "initial convergence rate".
    limit_iterations : int
        Horizon of the noise-free, full-participation runs that stand for the steady state (R-5).
    replicates : int
        Monte-Carlo replicates (fresh instance + fresh algorithm seed each).
    heavy_replicates : int
        Replicates of the comparisons whose paired differences are heavy-tailed (R-5's steady state: the
        per-replicate difference follows the drawn spread of the gamma_q, and about a third of the
        instances go the other way).
    C : float
        Nominal per-sample gradient bound C_k of the privacy noise (spec 2.7: 1 at the paper's size).
    """

    servers: int
    clients_per_server: int
    d: int
    scheduled: int
    iterations: int
    sweep_iteration: int
    early_iteration: int
    limit_iterations: int
    replicates: int
    heavy_replicates: int
    C: float

    def __post_init__(self) -> None:
        for name in ("servers", "clients_per_server", "d", "scheduled", "iterations", "sweep_iteration",
                     "early_iteration", "limit_iterations"):
            _positive_int(name, getattr(self, name))
        _positive_int("replicates", self.replicates, 2)
        _positive_int("heavy_replicates", self.heavy_replicates, self.replicates)
        if self.scheduled > self.clients_per_server:
            raise ValueError(f"scheduled must be in [1, clients_per_server = {self.clients_per_server}], "
                             f"got {self.scheduled}")
        for name in ("sweep_iteration", "early_iteration"):
            if getattr(self, name) > self.iterations:
                raise ValueError(f"{name} must be in [1, iterations = {self.iterations}], got {getattr(self, name)}")
        if not (math.isfinite(self.C) and self.C > 0):
            raise ValueError(f"C must be a finite real in (0, inf), got {self.C!r}")

    @property
    def sizes(self) -> dict:
        return {"servers": self.servers, "clients_per_server": self.clients_per_server, "d": self.d}

    def iteration(self, at: str) -> int:
        """The iteration that plays a role: early, mid (N/2), horizon (N), sweep, limit."""
        roles = {"early": self.early_iteration, "mid": self.iterations // 2, "horizon": self.iterations,
                 "sweep": self.sweep_iteration, "limit": self.limit_iterations}
        if at not in roles:
            raise ValueError(f"at must be one of {tuple(roles)}, got {at!r}")
        return roles[at]


SCALES = {
    "ci": Scale(servers=4, clients_per_server=15, d=30, scheduled=3, iterations=150, sweep_iteration=100,
                early_iteration=10, limit_iterations=200, replicates=8, heavy_replicates=24, C=30 / 60),
    "thorough": Scale(servers=10, clients_per_server=15, d=60, scheduled=3, iterations=300, sweep_iteration=200,
                      early_iteration=10, limit_iterations=300, replicates=20, heavy_replicates=20, C=1.0),
}

_ARCHITECTURES = ("pgfl", "gfl", "clusterfl")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Arm:
    """One curve of a figure: an architecture, its tau schedule and the setting it runs in.

    Attributes
    ----------
    label : str
        Name in figures and reports (not part of the simulation's identity).
    architecture : {"pgfl", "gfl", "clusterfl"}
        PGFL; GFL = Q = 1 (V5); ClusterFL = PGFL without server links (V3).
    tau, tau_decay : float
        tau^(n) = tau * tau_decay^n (V2 when tau_decay < 1; constant when 1). GFL ignores tau.
    scheduling : bool
        The scale's ``scheduled`` clients per server per iteration (V4), else full participation.
    phi0, zeta : float
        Privacy (Algorithm 2 noise): initial zCDP parameter (None = no noise) and variance decay.
    gamma : float
        Cluster models w_q = (1 + gamma_q) w_0, gamma_q ~ U(-gamma, gamma).
    C_factor : float
        Multiplies the scale's C (a sensitivity study; 1 = spec default).
    """

    label: str
    architecture: str = "pgfl"
    tau: float = 0.4
    tau_decay: float = 1.0
    scheduling: bool = False
    phi0: float | None = None
    zeta: float = 0.99
    gamma: float = 0.15
    C_factor: float = 1.0

    def __post_init__(self) -> None:
        if self.architecture not in _ARCHITECTURES:
            raise ValueError(f"architecture must be one of {_ARCHITECTURES}, got {self.architecture!r}")
        if not 0.0 <= self.tau <= 1.0:
            raise ValueError(f"tau must be in [0, 1], got {self.tau!r}")
        if not 0.0 <= self.tau_decay <= 1.0:
            raise ValueError(f"tau_decay must be in [0, 1], got {self.tau_decay!r}")
        if self.phi0 is not None and not (math.isfinite(self.phi0) and self.phi0 > 0):
            raise ValueError(f"phi0 must be None or a finite real in (0, inf), got {self.phi0!r}")
        if not 0.0 < self.zeta <= 1.0:
            raise ValueError(f"zeta must be in (0, 1], got {self.zeta!r}")
        if not (math.isfinite(self.gamma) and 0.0 <= self.gamma < 1.0):
            raise ValueError(f"gamma must be in [0, 1) (cluster models must stay non-zero), got {self.gamma!r}")
        if not (math.isfinite(self.C_factor) and self.C_factor > 0):
            raise ValueError(f"C_factor must be a finite real in (0, inf), got {self.C_factor!r}")
        # Settings that cannot change the simulation are normalised, so that equal runs share a cache entry.
        if self.architecture == "gfl" or self.tau == 0.0:
            object.__setattr__(self, "tau", 0.0)
            object.__setattr__(self, "tau_decay", 1.0)
        if self.phi0 is None:
            object.__setattr__(self, "zeta", 1.0)
            object.__setattr__(self, "C_factor", 1.0)

    @property
    def key(self) -> tuple:
        """Everything that determines the simulation (all fields but the label)."""
        return tuple(getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "label")

    def with_label(self, label: str) -> Arm:
        return dataclasses.replace(self, label=label)

    def config(self, rho: float, scale: Scale, iterations: int) -> PGFLConfig:
        if self.tau_decay == 1.0:
            taus = PGFLConfig.constant_tau(self.tau)
        else:
            taus = PGFLConfig.geometric_tau(self.tau, self.tau_decay, iterations)
        return PGFLConfig(rho=rho, taus=taus, algorithm="alg2", phi0=self.phi0, zeta=self.zeta,
                          C=scale.C * self.C_factor, scheduled=scale.scheduled if self.scheduling else None)

    def problem(self, base: PGFLProblem) -> PGFLProblem:
        if self.architecture == "gfl":
            return as_single_cluster(base)
        if self.architecture == "clusterfl":
            return with_server_graph(base, np.zeros_like(base.adjacency))
        return base


def _instance(scale: Scale, seed: np.random.SeedSequence, gamma: float) -> PGFLProblem:
    """Replicate's instance. The data stream does not depend on gamma (gamma_q = gamma (2u_q - 1) with the
    same u_q), so instances with another gamma differ only in the spread of the cluster models."""
    return synthetic_regression(np.random.default_rng(seed), gamma=gamma, **scale.sizes)


def _seeds(root_seed: int, scale: Scale) -> list[tuple[np.random.SeedSequence, np.random.SeedSequence]]:
    """(data seed, algorithm seed) of every replicate; every arm uses them (common random numbers)."""
    ss = CheckContext(seed=root_seed).seed_sequence(EXPERIMENT_KEY)
    return [tuple(child.spawn(2)) for child in ss.spawn(scale.replicates)]


@functools.lru_cache(maxsize=16)
def _rho(scale: Scale, root_seed: int) -> tuple[float, float, float]:
    """rho = 0.25 L_max with L_max over all clients of all replicates; also the min and max of the
    replicates' own L_max (rho / L_max of each replicate lies between rho/max and rho/min)."""
    lmax = [_instance(scale, data, PAPER_GAMMA).max_curvature for data, _ in _seeds(root_seed, scale)]
    return RHO_OVER_LMAX * max(lmax), min(lmax), max(lmax)


def _simulate_replicate(task) -> list[tuple[np.ndarray, dict]]:
    """Worker: every requested arm on one replicate; its NMSD curve (iterations,) and, for private arms,
    each client's total zCDP (Theorem IV over the client's releases, global noise index) at checkpoints."""
    scale, data_seed, algorithm_seed, arms, iterations, rho, checkpoints = task
    out = []
    instances: dict[float, PGFLProblem] = {}
    for arm in arms:
        if arm.gamma not in instances:
            instances[arm.gamma] = _instance(scale, data_seed, arm.gamma)
        base = instances[arm.gamma]
        run = run_pgfl(arm.problem(base), arm.config(rho, scale, iterations), iterations,
                       np.random.default_rng(algorithm_seed),
                       observe=client_nmsd_observer(base.true_models[base.client_cluster]))
        privacy = {}
        if arm.phi0 is not None:
            # Theorem III: release n is phi0 zeta^-n zCDP (convention I); Theorem IV sums a client's releases.
            per_iteration = arm.phi0 * arm.zeta ** -np.arange(1.0, iterations + 1)
            cumulative = np.cumsum(per_iteration[:, None] * run.releases[:, 0, :], axis=0)
            privacy = {n: cumulative[n - 1].copy() for n in checkpoints if n <= iterations}
        out.append((run.observations[:, 0].copy(), privacy))
    return out


_CACHE: dict[tuple, tuple[int, np.ndarray, dict]] = {}


def nmsd_curves(ctx: CheckContext, arms: Sequence[Arm], iterations: int, *, scale: Scale | None = None,
                use_cache: bool = True) -> dict[str, tuple[np.ndarray, dict]]:
    """NMSD learning curves, shape (replicates, iterations), and privacy totals of every arm, by label.

    Replicates are independent (fresh instance and algorithm seed) and shared by every arm (common random
    numbers); they go through ``ctx.executor``. Results are memoised per (scale, root seed,
    arm): the first ``n`` iterations of a longer run are the run of ``n`` iterations (same draws).
    """
    scale = SCALES[ctx.profile] if scale is None else scale
    _positive_int("iterations", iterations)
    labels = [a.label for a in arms]
    if len(set(labels)) != len(labels):
        raise ValueError(f"arm labels must be unique, got {labels}")
    rho = _rho(scale, ctx.seed)[0]
    result, missing = {}, []
    for arm in arms:
        hit = _CACHE.get((scale, ctx.seed, arm.key)) if use_cache else None
        if hit is not None and hit[0] >= iterations:
            result[arm.label] = (hit[1][:, :iterations], hit[2])
        elif arm.key not in [m.key for m in missing]:
            missing.append(arm)
    if missing:
        checkpoints = (scale.sweep_iteration, scale.iterations, iterations)
        tasks = [(scale, data, algorithm, tuple(missing), iterations, rho, checkpoints)
                 for data, algorithm in _seeds(ctx.seed, scale)]
        done = ctx.executor.map(_simulate_replicate, tasks)
        for index, arm in enumerate(missing):
            curves = np.stack([replicate[index][0] for replicate in done])
            privacy = {n: np.stack([replicate[index][1][n] for replicate in done]) for n in done[0][index][1]}
            if use_cache:
                _CACHE[(scale, ctx.seed, arm.key)] = (iterations, curves, privacy)
            for a in arms:
                if a.key == arm.key:
                    result[a.label] = (curves, privacy)
    return result


# ------------------------------------------------------------------------------------------------
# Paired comparisons with one-sided confidence limits.

_KINDS = ("less", "not_greater")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Comparison:
    r"""One ordering of the paper as a one-sided test on the paired difference
    :math:`\delta_i = \mathrm{dB}_a(n) - \mathrm{dB}_b(n)` over replicates.

    ``kind = "less"``: holds when :math:`UCL_{\alpha}(\bar\delta) <` ``bound_db`` (a is significantly
    below b + bound). ``kind = "not_greater"``: holds when :math:`LCL_{\alpha}(\bar\delta) \le`
    ``bound_db`` (a is not significantly above b + bound; used for "no reversal" in monotone trends).
    ``heavy`` comparisons use the scale's ``heavy_replicates``.
    """

    a: Arm
    b: Arm
    at: str
    kind: str = "less"
    bound_db: float = 0.0
    heavy: bool = False

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {self.kind!r}")
        SCALES["ci"].iteration(self.at)  # validates the role
        if not math.isfinite(self.bound_db):
            raise ValueError(f"bound_db must be finite, got {self.bound_db!r}")
        if self.a.label == self.b.label:
            raise ValueError(f"the compared arms need distinct labels, got {self.a.label!r} twice")

    @property
    def text(self) -> str:
        rel = "<" if self.kind == "less" else "not significantly >"
        bound = f" + {self.bound_db:g} dB" if self.bound_db else ""
        return f"NMSD[{self.a.label}] {rel} NMSD[{self.b.label}]{bound} at the {self.at} iteration"


def _db(x: np.ndarray) -> np.ndarray:
    return 10.0 * np.log10(x)


def _confidence_limits(diffs: np.ndarray, alpha: float) -> tuple[float, float]:
    """(LCL, UCL) of the mean at one-sided level alpha each (Student t; exact 0 width for equal arms)."""
    return -mean_upper_confidence_limit(-diffs, alpha), mean_upper_confidence_limit(diffs, alpha)


def _scale_dict(scale: Scale) -> dict:
    return dataclasses.asdict(scale)


def _arm_dict(arm: Arm) -> dict:
    return dataclasses.asdict(arm)


def comparison_parameters(claim_id: str, comparison: Comparison, scale: Scale, seed: int, alpha: float) -> dict:
    """The compact, self-contained record of one comparison (a counterexample when it fails)."""
    return {"claim": claim_id, "scale": _scale_dict(scale), "seed": int(seed), "alpha": float(alpha),
            "a": _arm_dict(comparison.a), "b": _arm_dict(comparison.b), "at": comparison.at,
            "kind": comparison.kind, "bound_db": comparison.bound_db, "heavy": comparison.heavy}


def evaluate_comparison(parameters: Mapping[str, Any], *, use_cache: bool = True, executor=None) -> Evidence:
    """Simulate both arms of a comparison record and decide it (the ``reproduce`` of every claim here).

    ``measured`` is the UCL (``less``) or LCL (``not_greater``) of the mean paired dB difference, ``bound``
    the comparison's bound; the record is returned with the mean and both limits added.
    """
    p = dict(parameters)
    scale = Scale(**p["scale"])
    comparison = Comparison(a=Arm(**p["a"]), b=Arm(**p["b"]), at=p["at"], kind=p["kind"],
                            bound_db=float(p["bound_db"]), heavy=bool(p.get("heavy", False)))
    if comparison.heavy:
        scale = dataclasses.replace(scale, replicates=scale.heavy_replicates)
    iteration = scale.iteration(comparison.at)
    ctx = CheckContext(profile="ci", seed=int(p["seed"]), executor=executor)
    curves = nmsd_curves(ctx, [comparison.a, comparison.b], iteration, scale=scale, use_cache=use_cache)
    n = iteration - 1
    diffs = _db(curves[comparison.a.label][0][:, n]) - _db(curves[comparison.b.label][0][:, n])
    lcl, ucl = _confidence_limits(diffs, float(p["alpha"]))
    measured = ucl if comparison.kind == "less" else lcl
    holds = measured < comparison.bound_db if comparison.kind == "less" else measured <= comparison.bound_db
    record = {**p, "iteration": iteration, "mean_db": float(diffs.mean()), "lcl_db": lcl, "ucl_db": ucl,
              "replicates": int(diffs.size)}
    return Evidence(measured=float(measured), bound=comparison.bound_db, holds=bool(holds), parameters=record)


def _describe(e: Evidence) -> str:
    p = e.parameters
    return (f"{p['a']['label']} - {p['b']['label']} at n = {p['iteration']}: {p['mean_db']:+.2f} dB "
            f"[{p['lcl_db']:+.2f}, {p['ucl_db']:+.2f}]")


def _decide(ctx: CheckContext, claim_id: str, comparisons: Sequence[Comparison], *, what: str,
            figures: Sequence[FigureSpec], details: Mapping[str, Any] | None = None) -> CheckResult:
    """Evaluate a claim's comparisons (Bonferroni-split ALPHA) and summarise them in one CheckResult.

    At the paper's size a refutation is re-evaluated at the reduced (ci) size; when it is refuted there
    too, that cheaper record becomes the counterexample (the paper-size record stays in ``details``).
    """
    scale = SCALES[ctx.profile]
    alpha = bonferroni(ALPHA, len(comparisons))
    evidence = [evaluate_comparison(comparison_parameters(claim_id, c, scale, ctx.seed, alpha), executor=ctx.executor)
                for c in comparisons]
    extra = {"comparisons": [_describe(e) + (" holds" if e.holds else " FAILS") for e in evidence],
             "per_comparison_alpha": alpha, "rho_over_lmax_of_replicates": _rho_range(scale, ctx.seed),
             "scale": _scale_dict(scale), **(details or {})}
    result = result_from_evidence(claim_id, evidence, ctx=ctx, quantity="confidence limit of the mean paired "
                                  "NMSD difference (dB) against its bound", what=what, figures=figures,
                                  monte_carlo=MonteCarlo(n=scale.replicates, alpha=ALPHA, seed=ctx.seed), details=extra)
    verdict = "holds" if result.verdict is Verdict.CONFIRMED else "does not hold"
    summary = f"{what}: {verdict} ({scale.replicates} replicates); " + "; ".join(_describe(e) for e in evidence)
    result = dataclasses.replace(result, summary=summary)
    if result.verdict is Verdict.REFUTED and ctx.profile != "ci":
        small = SCALES["ci"]
        cheap = evaluate_comparison({**result.counterexample, "scale": _scale_dict(small)}, executor=ctx.executor)
        if not cheap.holds:
            result = dataclasses.replace(result, counterexample=dict(cheap.parameters), details={
                **result.details, "paper_size_counterexample": dict(result.counterexample)})
    return result


def _rho_range(scale: Scale, seed: int) -> list[float]:
    rho, low, high = _rho(scale, seed)
    return [rho / high, rho / low]


# ------------------------------------------------------------------------------------------------
# The paper's settings and arms.

_R1 = {"scheduling": False, "phi0": None}
_R2 = {"scheduling": True, "phi0": None}
_R3 = {"scheduling": True, "phi0": PAPER_PHI0, "zeta": PAPER_ZETA}


def _pgfl(setting: Mapping[str, Any], tau: float, tag: str = "", **extra) -> Arm:
    name = "PGFL tau=0 (V1)" if tau == 0.0 and not extra.get("tau_decay") else f"PGFL tau={tau:g}"
    return Arm(label=f"{name}{tag}", tau=tau, **{**setting, **extra})


def _baseline(architecture: str, setting: Mapping[str, Any], tag: str = "", **extra) -> Arm:
    name = {"gfl": "GFL (Q = 1)", "clusterfl": "ClusterFL (no server links)", "pgfl": "PGFL tau=0.4 as baseline"}
    return Arm(label=f"{name[architecture]}{tag}", architecture=architecture, tau=PAPER_TAU, **{**setting, **extra})


def _mean_db(curves: np.ndarray) -> np.ndarray:
    return _db(curves).mean(axis=0)


def _curve_figure(name: str, title: str, curves: Mapping[str, tuple], arms: Sequence[Arm]) -> FigureSpec:
    series = []
    for arm in arms:
        y = _mean_db(curves[arm.label][0])
        series.append(Series(label=arm.label, x=np.arange(1, y.size + 1), y=y))
    return FigureSpec(name=name, title=title, xlabel="iteration n", ylabel="NMSD (dB), mean over replicates",
                      series=tuple(series))


def _sweep_figure(name: str, title: str, xlabel: str, values: Sequence[float], arms: Sequence[Arm],
                  curves: Mapping[str, tuple], iteration: int, reference: Arm, xscale: str = "linear") -> FigureSpec:
    """Mean NMSD at ``iteration`` against the swept value, with the 95% limits of the paired difference to
    ``reference`` drawn around the reference's mean (the precision the comparisons work with)."""
    base = _db(curves[reference.label][0][:, iteration - 1])
    levels = [_db(curves[a.label][0][:, iteration - 1]) for a in arms]
    limits = [_confidence_limits(v - base, 0.025) for v in levels]
    return FigureSpec(
        name=name, title=title, xlabel=xlabel, ylabel=f"NMSD after {iteration} iterations (dB)", xscale=xscale,
        series=(Series(label="mean over replicates", x=values, y=[v.mean() for v in levels], group="m"),
                Series(label=f"paired 95% limits vs {reference.label} (lower)", x=values,
                       y=[base.mean() + lo for lo, _ in limits], style="dashed", group="m"),
                Series(label=f"paired 95% limits vs {reference.label} (upper)", x=values,
                       y=[base.mean() + hi for _, hi in limits], style="dashed", group="m")))


def _mean_diff(curves: Mapping[str, tuple], a: Arm, b: Arm, n: int) -> float:
    return float(np.mean(_db(curves[a.label][0][:, n - 1]) - _db(curves[b.label][0][:, n - 1])))


# ------------------------------------------------------------------------------------------------
# no privacy, no scheduling (seed 004 line 1511; seed 003 lines 430-432; seed 000 line 423).


def check_r1_tau(ctx: CheckContext, *, tau: float = PAPER_TAU) -> CheckResult:
    """tau = 0.4 improves the initial rate (n = early) and the NMSD at the horizon over tau = 0."""
    scale = SCALES[ctx.profile]
    t0, t = _pgfl(_R1, 0.0), _pgfl(_R1, tau, " (treatment)" if tau == 0.0 else "")
    curves = nmsd_curves(ctx, [t0, t], scale.iterations)
    figure = _curve_figure("learning_curves", "R-1: PGFL without privacy or scheduling", curves, [t0, t])
    return _decide(ctx, "pgfl.experiment_r1_tau",
                   [Comparison(a=t, b=t0, at="early"),
                    Comparison(a=t, b=t0, at="horizon")],
                   what=f"R-1: tau = {tau:g} below tau = 0 early and at the horizon", figures=[figure])


def _r1_gfl_arms(gamma: float) -> tuple[Arm, Arm, Arm]:
    return _pgfl(_R1, 0.0, gamma=gamma), _pgfl(_R1, PAPER_TAU, gamma=gamma), _baseline("gfl", _R1, gamma=gamma)


def check_r1_gfl(ctx: CheckContext, *, gamma: float = PAPER_GAMMA) -> CheckResult:
    """Both PGFL curves of Fig. 5.1(a) (tau = 0.4 and 0) below GFL at the horizon ("superiority of PGFL over GFL").

    Details: the same differences with the R-5 spread of cluster models (gamma = 0.5).
    """
    scale = SCALES[ctx.profile]
    t0, t4, gfl = _r1_gfl_arms(gamma)
    curves = nmsd_curves(ctx, [t0, t4, gfl], scale.iterations)
    figure = _curve_figure("learning_curves", f"R-1: PGFL and GFL (gamma ~ U(-{gamma:g}, {gamma:g}))", curves,
                           [t0, t4, gfl])
    dissimilar = _r1_gfl_arms(LOW_SIMILARITY_GAMMA)
    other = nmsd_curves(ctx, dissimilar, scale.iterations)
    return _decide(ctx, "pgfl.experiment_r1_gfl", [Comparison(a=arm, b=gfl, at="horizon") for arm in (t4, t0)],
                   what=f"R-1 (gamma = {gamma:g}): PGFL (tau = 0.4 and 0) below GFL at the horizon", figures=[figure],
                   details={"gamma": gamma, f"pgfl_minus_gfl_db_at_gamma_{LOW_SIMILARITY_GAMMA:g}": {
                       arm.label: _mean_diff(other, arm, dissimilar[2], scale.iterations) for arm in dissimilar[:2]}})


def check_r1_gfl_competitive(ctx: CheckContext, *, gamma: float = PAPER_GAMMA) -> CheckResult:
    """GFL is not worse than the better PGFL curve (tau = 0.4) by NEAR_IDENTICAL_DB or more at the horizon."""
    scale = SCALES[ctx.profile]
    t0, t4, gfl = _r1_gfl_arms(gamma)
    curves = nmsd_curves(ctx, [t0, t4, gfl], scale.iterations)
    figure = _curve_figure("learning_curves", f"R-1: PGFL and GFL (gamma ~ U(-{gamma:g}, {gamma:g}))", curves,
                           [t0, t4, gfl])
    m = NEAR_IDENTICAL_DB
    return _decide(ctx, "pgfl.experiment_r1_gfl_competitive", [Comparison(a=gfl, b=t4, at="horizon", bound_db=m)],
                   what=f"R-1 (gamma = {gamma:g}): GFL below PGFL (tau = 0.4) + {m:g} dB at the horizon",
                   figures=[figure], details={"gamma": gamma, "margin_db": m})


def check_r1_clusterfl(ctx: CheckContext, *, architecture: str = "clusterfl") -> CheckResult:
    """ClusterFL (PGFL without server links) above every other arm at the horizon ("notably poor")."""
    scale = SCALES[ctx.profile]
    t0, t4, gfl = _pgfl(_R1, 0.0), _pgfl(_R1, PAPER_TAU), _baseline("gfl", _R1)
    cfl = _baseline(architecture, _R1)
    curves = nmsd_curves(ctx, [t0, t4, gfl, cfl], scale.iterations)
    figure = _curve_figure("learning_curves", "R-1: PGFL, GFL and ClusterFL", curves, [t0, t4, gfl, cfl])
    return _decide(ctx, "pgfl.experiment_r1_clusterfl",
                   [Comparison(a=other, b=cfl, at="horizon") for other in (t4, t0, gfl)],
                   what="R-1: ClusterFL above PGFL (tau = 0.4 and 0) and GFL at the horizon", figures=[figure])


# ------------------------------------------------------------------------------------------------
# client scheduling (seed 004 lines 1513-1517; seed 003 line 434; seed 000 line 425).


def check_r2_scheduling(ctx: CheckContext, *, scheduling: bool = True) -> CheckResult:
    """PGFL (tau = 0.4 and 0) is above its R-1 curve early and at the horizon when clients are scheduled."""
    scale = SCALES[ctx.profile]
    sched = {**_R2, "scheduling": scheduling}
    arms = [(_pgfl(_R1, tau, " R-1"), _pgfl(sched, tau, " R-2 (scheduled)")) for tau in (PAPER_TAU, 0.0)]
    curves = nmsd_curves(ctx, [a for pair in arms for a in pair], scale.iterations)
    figure = _curve_figure("learning_curves", "R-2: PGFL with and without client scheduling", curves,
                           [a for pair in arms for a in pair])
    n = scale.iterations
    gap = {f"n = {m}": _mean_diff(curves, arms[0][1], arms[0][0], m) for m in (n // 3, 2 * n // 3, n)}
    return _decide(ctx, "pgfl.experiment_r2_scheduling",
                   [Comparison(a=full, b=sched_arm, at=at) for full, sched_arm in arms for at in ("early", "horizon")],
                   what="R-2: scheduled PGFL above full participation early and at the horizon", figures=[figure],
                   details={"scheduled_minus_full_db_tau_0.4 (shrinking gap: same fixed point)": gap})


def check_r2_gfl(ctx: CheckContext, *, scheduling: bool = True) -> CheckResult:
    """GFL is below its R-1 curve at the horizon when clients are scheduled ("GFL performs better")."""
    scale = SCALES[ctx.profile]
    full, sched = _baseline("gfl", _R1, " R-1"), _baseline("gfl", {**_R2, "scheduling": scheduling}, " R-2 (scheduled)")
    curves = nmsd_curves(ctx, [full, sched], scale.iterations)
    figure = _curve_figure("learning_curves", "R-2: GFL with and without client scheduling", curves, [full, sched])
    n = scale.iterations
    return _decide(ctx, "pgfl.experiment_r2_gfl", [Comparison(a=sched, b=full, at="horizon")],
                   what="R-2: scheduled GFL below full-participation GFL at the horizon", figures=[figure],
                   details={"scheduled_minus_full_db": {f"n = {m}": _mean_diff(curves, sched, full, m)
                                                         for m in (n // 3, 2 * n // 3, n)}})


# ------------------------------------------------------------------------------------------------
# scheduling and privacy (seed 004 lines 1521-1526; seed 003 lines 436-442).


def _privacy_details(curves: Mapping[str, tuple], arm: Arm, n: int) -> dict:
    if arm.phi0 is None:
        return {"phi0": None}
    totals = curves[arm.label][1].get(n)
    out = {"phi0": arm.phi0, "zeta": arm.zeta, "iterations": n,
           "theorem_iv_total_full_participation": zcdp_total_variance_decay(arm.phi0, arm.zeta, n,
                                                                            first_release_decayed=True),
           "reported_phi_final": REPORTED_PHI_FINAL}
    if totals is not None and arm.scheduling:
        out["scheduled_per_client_total_min_mean_max (global noise index)"] = [
            float(totals.min()), float(totals.mean()), float(totals.max())]
    return out


def check_r3_privacy_slows(ctx: CheckContext, *, phi0: float | None = PAPER_PHI0) -> CheckResult:
    """Privacy noise puts PGFL (tau = 0.4 and 0) above its R-2 curve early and mid-way."""
    scale = SCALES[ctx.profile]
    private = {**_R3, "phi0": phi0}
    arms = [(_pgfl(_R2, tau, " R-2"), _pgfl(private, tau, " R-3 (private)")) for tau in (PAPER_TAU, 0.0)]
    curves = nmsd_curves(ctx, [a for pair in arms for a in pair], scale.iterations)
    figure = _curve_figure("learning_curves", "R-3: scheduled PGFL with and without privacy", curves,
                           [a for pair in arms for a in pair])
    return _decide(ctx, "pgfl.experiment_r3_privacy_slows",
                   [Comparison(a=plain, b=noisy, at=at) for plain, noisy in arms for at in ("early", "mid")],
                   what="R-3: private PGFL above non-private early and mid-way", figures=[figure],
                   details={"privacy": _privacy_details(curves, arms[0][1], scale.iterations), "C": scale.C})


def check_r3_privacy_cost(ctx: CheckContext, *, phi0: float | None = PAPER_PHI0) -> CheckResult:
    """|NMSD_R3(N) - NMSD_R2(N)| < NEAR_IDENTICAL_DB for PGFL tau = 0.4 (two one-sided tests)."""
    scale = SCALES[ctx.profile]
    plain, noisy = _pgfl(_R2, PAPER_TAU, " R-2"), _pgfl({**_R3, "phi0": phi0}, PAPER_TAU, " R-3 (private)")
    t0_plain, t0_noisy = _pgfl(_R2, 0.0, " R-2"), _pgfl({**_R3, "phi0": phi0}, 0.0, " R-3 (private)")
    curves = nmsd_curves(ctx, [plain, noisy, t0_plain, t0_noisy], scale.iterations)
    figure = _curve_figure("learning_curves", "R-3: privacy cost after the horizon", curves,
                           [plain, noisy, t0_plain, t0_noisy])
    n, m = scale.iterations, NEAR_IDENTICAL_DB
    return _decide(ctx, "pgfl.experiment_r3_privacy_cost",
                   [Comparison(a=noisy, b=plain, at="horizon", bound_db=m),
                    Comparison(a=plain, b=noisy, at="horizon", bound_db=m)],
                   what=f"R-3: private and non-private PGFL within {m:g} dB at the horizon", figures=[figure],
                   details={"privacy": _privacy_details(curves, noisy, n), "C": scale.C, "margin_db": m,
                            "tau0_private_minus_plain_db": _mean_diff(curves, t0_noisy, t0_plain, n)})


# ------------------------------------------------------------------------------------------------
# NMSD after 200 iterations vs tau (seed 004 line 1528; seed 003 lines 444-446; seed 000 line 439).


def _tau_sweep(ctx: CheckContext, extra: Sequence[float] = ()) -> tuple[dict, dict[float, Arm], FigureSpec]:
    """The R-3 setting at every tau of the profile's grid (and ``extra``), read at the sweep iteration."""
    scale = SCALES[ctx.profile]
    grid = tuple(sorted(set(TAU_GRID[ctx.profile]) | set(extra) | {PAPER_TAU}))
    arms = {t: Arm(label=f"tau={t:g}", tau=t, **_R3) for t in grid}
    curves = nmsd_curves(ctx, list(arms.values()), scale.sweep_iteration)
    figure = _sweep_figure("nmsd_vs_tau", "R-4: PGFL with scheduling and privacy, fixed tau", "tau", grid,
                           list(arms.values()), curves, scale.sweep_iteration, reference=arms[PAPER_TAU])
    return curves, arms, figure


def check_r4_tau_sweep(ctx: CheckContext, *, taus: Sequence[float] = (0.2, 0.3, 0.4)) -> CheckResult:
    """Every grid tau in (0.1, 0.5) gives a lower NMSD after the sweep horizon than tau = 0."""
    scale = SCALES[ctx.profile]
    curves, arms, figure = _tau_sweep(ctx, taus)
    reference = _pgfl(_R3, 0.0)
    curves = {**curves, **nmsd_curves(ctx, [reference], scale.sweep_iteration)}
    mean = {t: float(_mean_db(curves[a.label][0][:, :scale.sweep_iteration])[-1]) for t, a in arms.items()}
    return _decide(ctx, "pgfl.experiment_r4_tau_sweep", [Comparison(a=arms[t], b=reference, at="sweep") for t in taus],
                   what=f"R-4: tau in {tuple(taus)} below tau = 0 after {scale.sweep_iteration} iterations",
                   figures=[figure], details={"mean_db_by_tau": mean, "argmin_tau_of_the_mean": min(mean, key=mean.get)})


def check_r4_large_tau(ctx: CheckContext, *, large: float = 0.9, reference: float = PAPER_TAU,
                       setting: Mapping[str, Any] | None = None) -> CheckResult:
    """A too large tau (0.9) degrades the NMSD after the sweep horizon: more than NEAR_IDENTICAL_DB above tau = 0.4
    (a difference the paper would call "nearly identical" is no degradation); R-3 setting unless ``setting``."""
    scale = SCALES[ctx.profile]
    ref, big = _pgfl(setting or _R3, reference), _pgfl(setting or _R3, large, " (large)")
    curves = nmsd_curves(ctx, [ref, big], scale.sweep_iteration)
    if setting is None:
        figure = _tau_sweep(ctx, (large, reference))[2]
    else:
        figure = _sweep_figure("nmsd_vs_tau", f"R-4 in the setting {dict(setting)}", "tau", (reference, large),
                               [ref, big], curves, scale.sweep_iteration, reference=ref)
    m = NEAR_IDENTICAL_DB
    return _decide(ctx, "pgfl.experiment_r4_large_tau",
                   [Comparison(a=ref, b=big, at="sweep", bound_db=-m)],
                   what=(f"R-4: tau = {large:g} more than {m:g} dB above tau = {reference:g} after "
                         f"{scale.sweep_iteration} iterations"),
                   figures=[figure], details={"setting": dict(setting or _R3), "margin_db": m})


# ------------------------------------------------------------------------------------------------
# low cluster similarity, fixed and decaying tau (seed 004 lines 1530-1536; seed 000 line 441).


def _r5_arms(gamma: float, tau_decay: float) -> dict[str, Arm]:
    noisy = {**_R3, "gamma": gamma}
    limit = {**_R1, "gamma": gamma}
    return {"t0": _pgfl(noisy, 0.0), "t4": _pgfl(noisy, PAPER_TAU),
            "dec": Arm(label=f"PGFL tau=0.4*{tau_decay:g}^n", tau=PAPER_TAU, tau_decay=tau_decay, **noisy),
            "t0_lim": _pgfl(limit, 0.0, " noise-free, full"), "t4_lim": _pgfl(limit, PAPER_TAU, " noise-free, full"),
            "dec_lim": Arm(label=f"PGFL tau=0.4*{tau_decay:g}^n noise-free, full", tau=PAPER_TAU, tau_decay=tau_decay,
                           **limit)}


def _r5_figures(curves, noisy: Sequence[Arm], limit: Sequence[Arm], gamma: float) -> list[FigureSpec]:
    return [_curve_figure("learning_curves", f"R-5: gamma ~ U(-{gamma:g}, {gamma:g}), scheduling and privacy", curves,
                          noisy),
            _curve_figure("noise_free_limit", "R-5: the same without noise or scheduling (their common limit)",
                          curves, limit)]


def _convergence(curves: np.ndarray) -> float:
    """Largest change (dB) of a replicate's NMSD over the last 10% of the horizon (limit diagnostic)."""
    n = curves.shape[1]
    return float(np.max(np.abs(_db(curves[:, -1]) - _db(curves[:, n - 1 - n // 10]))))


def check_r5_fixed_tau(ctx: CheckContext, *, gamma: float = LOW_SIMILARITY_GAMMA) -> CheckResult:
    """Low similarity: tau = 0.4 starts faster (scheduled, private, n = early) but its steady state (the
    noise-free full-participation limit) is above tau = 0's."""
    scale = SCALES[ctx.profile]
    a = _r5_arms(gamma, PAPER_TAU_DECAY)
    arms = [a["t0"], a["t4"], a["t0_lim"], a["t4_lim"]]
    heavy = dataclasses.replace(scale, replicates=scale.heavy_replicates)
    curves = {**nmsd_curves(ctx, arms[:2], scale.iterations),
              **nmsd_curves(ctx, arms[2:], scale.limit_iterations, scale=heavy)}
    n = scale.iterations
    figures = _r5_figures(curves, arms[:2], arms[2:], gamma)
    return _decide(ctx, "pgfl.experiment_r5_fixed_tau",
                   [Comparison(a=a["t4"], b=a["t0"], at="early"),
                    Comparison(a=a["t0_lim"], b=a["t4_lim"], at="limit", heavy=True)],
                   what="R-5: tau = 0.4 below tau = 0 early, above it in the limit", figures=figures,
                   details={"gamma": gamma, "replicates_of_the_limit_comparison": heavy.replicates,
                            "tau0.4_minus_tau0_at_horizon_scheduled_private_db": _mean_diff(curves, a["t4"], a["t0"], n),
                            "limit_convergence_db": {x.label: _convergence(curves[x.label][0]) for x in arms[2:]}})


def check_r5_decaying_tau(ctx: CheckContext, *, tau_decay: float = PAPER_TAU_DECAY,
                          gamma: float = LOW_SIMILARITY_GAMMA) -> CheckResult:
    """tau = 0.4 * 0.98^n keeps tau = 0.4's start and reaches tau = 0's steady state.

    The steady state of the decaying schedule *is* tau = 0's fixed point (tau^(n) -> 0 and the tau = 0 iteration
    contracts), approached like 0.98^n; the check asks that after the limit horizon it is not above tau = 0's by
    NEAR_IDENTICAL_DB or more (it is still below it there: the residual mixing helps).
    """
    scale = SCALES[ctx.profile]
    a = _r5_arms(gamma, tau_decay)
    arms = [a["t0"], a["t4"], a["dec"], a["t0_lim"], a["t4_lim"], a["dec_lim"]]
    curves = {**nmsd_curves(ctx, arms[:3], scale.iterations), **nmsd_curves(ctx, arms[3:], scale.limit_iterations)}
    n, m = scale.iterations, NEAR_IDENTICAL_DB
    figures = _r5_figures(curves, arms[:3], arms[3:], gamma)
    return _decide(ctx, "pgfl.experiment_r5_decaying_tau",
                   [Comparison(a=a["dec"], b=a["t0"], at="early"),
                    Comparison(a=a["dec"], b=a["t4"], at="early", bound_db=m),
                    Comparison(a=a["t4"], b=a["dec"], at="early", bound_db=m),
                    Comparison(a=a["dec_lim"], b=a["t0_lim"], at="limit", bound_db=m)],
                   what=(f"R-5: decaying tau below tau = 0 and within {m:g} dB of tau = 0.4 early, less than {m:g} dB "
                         "above tau = 0 in the limit"), figures=figures,
                   details={"gamma": gamma, "tau_decay": tau_decay, "margin_db": m,
                            "decaying_minus_tau0_at_horizon_scheduled_private_db":
                                _mean_diff(curves, a["dec"], a["t0"], n),
                            "decaying_minus_tau0.4_at_horizon_scheduled_private_db":
                                _mean_diff(curves, a["dec"], a["t4"], n),
                            "limit_convergence_db": {x.label: _convergence(curves[x.label][0]) for x in arms[3:]}})


# ------------------------------------------------------------------------------------------------
# privacy-accuracy trade-off (seed 004 line 1544; seed 003 lines 448-450).


def _trend(ctx: CheckContext, claim_id: str, arms: Sequence[Arm], values: Sequence[float], *, name: str, xlabel: str,
           xscale: str, what: str, increasing: bool, reference: Arm, details: Mapping[str, Any]) -> CheckResult:
    """NMSD monotone in the swept parameter: the end points significantly ordered, no consecutive pair
    significantly reversed."""
    scale = SCALES[ctx.profile]
    n = scale.sweep_iteration
    curves = {**nmsd_curves(ctx, arms, n), **nmsd_curves(ctx, [reference], n)}
    low, high = (arms[0], arms[-1]) if increasing else (arms[-1], arms[0])
    comparisons = [Comparison(a=low, b=high, at="sweep")]
    for left, right in zip(arms[:-1], arms[1:]):
        first, second = (left, right) if increasing else (right, left)
        comparisons.append(Comparison(a=first, b=second, at="sweep", kind="not_greater"))
    figure = _sweep_figure(name, what, xlabel, values, arms, curves, n, reference=reference, xscale=xscale)
    totals = {a.label: _privacy_details(curves, a, n) for a in arms}
    return _decide(ctx, claim_id, comparisons, what=what, figures=[figure], details={**details, "privacy": totals})


def _direction(predicted: str) -> bool:
    if predicted not in ("increasing", "decreasing"):
        raise ValueError(f"predicted must be 'increasing' or 'decreasing', got {predicted!r}")
    return predicted == "increasing"


def check_r6_phi0(ctx: CheckContext, *, grid: Sequence[float] = PHI0_GRID, C_factor: float = 1.0,
                  predicted: str = "decreasing") -> CheckResult:
    """NMSD after the sweep horizon decreases as phi0 grows (less privacy)."""
    grid = tuple(sorted(grid))
    arms = [Arm(label=f"phi0={p:g}", tau=PAPER_TAU, C_factor=C_factor, **{**_R3, "phi0": p}) for p in grid]
    return _trend(ctx, "pgfl.experiment_r6_phi0", arms, grid, name="nmsd_vs_phi0", xlabel="phi0 (zeta = 0.99)",
                  xscale="log", what=f"R-6: NMSD {predicted} in phi0", increasing=_direction(predicted),
                  reference=Arm(label=f"phi0={PAPER_PHI0:g} (paper)", tau=PAPER_TAU, C_factor=C_factor, **_R3),
                  details={"C": SCALES[ctx.profile].C * C_factor})


def check_r7_zeta(ctx: CheckContext, *, grid: Sequence[float] = ZETA_GRID, C_factor: float = 1.0,
                  predicted: str = "increasing") -> CheckResult:
    """NMSD after the sweep horizon increases as zeta grows (slower variance decay, more privacy)."""
    grid = tuple(sorted(grid))
    arms = [Arm(label=f"zeta={z:g}", tau=PAPER_TAU, C_factor=C_factor, **{**_R3, "zeta": z}) for z in grid]
    return _trend(ctx, "pgfl.experiment_r7_zeta", arms, grid, name="nmsd_vs_zeta", xlabel="zeta (phi0 = 0.001)",
                  xscale="linear", what=f"R-7: NMSD {predicted} in zeta", increasing=_direction(predicted),
                  reference=Arm(label=f"zeta={PAPER_ZETA:g} (paper)", tau=PAPER_TAU, C_factor=C_factor, **_R3),
                  details={"C": SCALES[ctx.profile].C * C_factor})


# ------------------------------------------------------------------------------------------------
# Corrected statements (what the same runs support instead).


def check_r2_gfl_slower(ctx: CheckContext, *, scheduling: bool = True) -> CheckResult:
    """Scheduled GFL is above full-participation GFL at the horizon (scheduling slows GFL too)."""
    scale = SCALES[ctx.profile]
    full, sched = _baseline("gfl", _R1, " R-1"), _baseline("gfl", {**_R2, "scheduling": scheduling}, " R-2 (scheduled)")
    curves = nmsd_curves(ctx, [full, sched], scale.iterations)
    figure = _curve_figure("learning_curves", "R-2: GFL with and without client scheduling", curves, [full, sched])
    return _decide(ctx, "pgfl.experiment_r2_gfl_slower", [Comparison(a=full, b=sched, at="horizon")],
                   what="R-2: scheduled GFL above full-participation GFL at the horizon", figures=[figure])


def check_r4_large_tau_flat(ctx: CheckContext, *, large: float = 0.9, reference: float = PAPER_TAU,
                            setting: Mapping[str, Any] | None = None) -> CheckResult:
    """NMSD(tau = 0.9) within NEAR_IDENTICAL_DB of NMSD(tau = 0.4) after the sweep horizon (two one-sided tests)."""
    scale = SCALES[ctx.profile]
    ref, big = _pgfl(setting or _R3, reference), _pgfl(setting or _R3, large, " (large)")
    curves = nmsd_curves(ctx, [ref, big], scale.sweep_iteration)
    if setting is None:
        figure = _tau_sweep(ctx, (large, reference))[2]
    else:
        figure = _sweep_figure("nmsd_vs_tau", f"R-4 in the setting {dict(setting)}", "tau", (reference, large),
                               [ref, big], curves, scale.sweep_iteration, reference=ref)
    m = NEAR_IDENTICAL_DB
    return _decide(ctx, "pgfl.experiment_r4_large_tau_flat",
                   [Comparison(a=big, b=ref, at="sweep", bound_db=m), Comparison(a=ref, b=big, at="sweep", bound_db=m)],
                   what=f"R-4: tau = {large:g} within {m:g} dB of tau = {reference:g} after {scale.sweep_iteration} "
                        "iterations", figures=[figure], details={"setting": dict(setting or _R3), "margin_db": m})


# ------------------------------------------------------------------------------------------------
# Registry.

_CITE = {
    "R-1": (Citation(seed=SEED_THESIS, label="Section 5.4.1, Fig. 5.1(a)", lines="1511"),
            Citation(seed=SEED_THESIS, label="Appendix E (journal text), Fig. 1", lines="3282"),
            Citation(seed=SEED_J, label="Section V, Fig. 1", lines="430-432"),
            Citation(seed=SEED_A, label="Section V, Fig. 1 (FedAvg and E = {} baselines)", lines="423")),
    "R-2": (Citation(seed=SEED_THESIS, label="Section 5.4.1, Fig. 5.1(b)", lines="1513-1517"),
            Citation(seed=SEED_THESIS, label="Appendix E (journal text), Fig. 2", lines="3284"),
            Citation(seed=SEED_J, label="Section V, Fig. 2", lines="434"),
            Citation(seed=SEED_A, label="Section V, Fig. 2", lines="425")),
    "R-3": (Citation(seed=SEED_THESIS, label="Section 5.4.1, Fig. 5.1(c)", lines="1521-1526"),
            Citation(seed=SEED_THESIS, label="Appendix E (journal text), Fig. 3", lines="3286-3297"),
            Citation(seed=SEED_J, label="Section V, Fig. 3", lines="436-442")),
    "R-4": (Citation(seed=SEED_THESIS, label="Section 5.4.1, Fig. 5.2", lines="1528"),
            Citation(seed=SEED_THESIS, label="Appendix E (journal text), Fig. 4", lines="3299"),
            Citation(seed=SEED_J, label="Section V, Fig. 4", lines="444-446"),
            Citation(seed=SEED_A, label="Section V, Fig. 4", lines="439")),
    "R-5": (Citation(seed=SEED_THESIS, label="Section 5.4.1, Fig. 5.3", lines="1530-1536"),
            Citation(seed=SEED_THESIS, label="Appendix E (journal text), Fig. 5", lines="3301"),
            Citation(seed=SEED_J, label="Section V, Fig. 5", lines="448"),
            Citation(seed=SEED_A, label="Section V, Fig. 5", lines="441")),
    "R-6": (Citation(seed=SEED_THESIS, label="Section 5.4.1, Fig. 5.4 (text's (a): phi0)", lines="1544"),
            Citation(seed=SEED_THESIS, label="Appendix E (journal text), Fig. 6", lines="3303"),
            Citation(seed=SEED_J, label="Section V, Fig. 6", lines="450"),
            Citation(seed=SEED_A, label="Section V, Fig. 6", lines="443")),
    "R-7": (Citation(seed=SEED_THESIS, label="Section 5.4.1, Fig. 5.4 (text's (b): zeta; captions swapped, E19)",
                     lines="1544"),
            Citation(seed=SEED_THESIS, label="Appendix E (journal text), Fig. 7", lines="3303"),
            Citation(seed=SEED_J, label="Section V, Fig. 7", lines="450")),
}

_COMMON = ("spec 5.1 setting: S = 10 servers (random connected graph, average degree 3), 15 clients each, "
           "D_k ~ U{2..9}, d = 60, Q = 3 clusters assigned uniformly, w_q = (1 + gamma_q) w_0",
           "spec 2.7 defaults for what the paper does not report: lambda = 1, rho = 0.25 L_max, sigma_v^2 = 0.1, "
           "x ~ N(0, I), w_0 ~ N(0, I); Algorithm 2 (literal dual reference) in every arm, xi = 0 without privacy",
           "scheduling: 3 of 15 clients per server per iteration, cached aggregation (spec V4)",
           "privacy: phi0 = 0.001, zeta = 0.99, noise convention I, C = 1 (nominal: ridge has no gradient bound, E10)",
           "Monte Carlo: fresh instance and algorithm seed per replicate, common random numbers across arms; "
           "one-sided Student-t limits, alpha = 0.05 per claim (Bonferroni over its comparisons)")

_SIZES = ("The verdict is the same at the paper's size (thorough, 20 replicates) and at the reduced replica "
          "(ci: S = 4, 15 clients per server, 3 scheduled, d = 30, C = 0.5, 150 iterations, 8 replicates), "
          "and at the reduced replica for root seeds 0-12.")
_LIMITS = ("Brackets: lower and upper one-sided confidence limits of the mean paired difference, each at "
           "alpha = 0.05/k for a claim of k comparisons. ")

CLAIMS = (
    Claim(
        id="pgfl.experiment_r1_tau", paper="pgfl",
        title="R-1: inter-cluster learning (tau = 0.4) speeds up PGFL and lowers its NMSD",
        citations=_CITE["R-1"],
        statement=("Without privacy or scheduling, incorporating inter-cluster learning (tau = 0.4 instead of tau = 0) "
                   "results in improved convergence speed and steady-state accuracy (300 iterations)."),
        hypotheses=_COMMON[:2] + (_COMMON[4], "gamma ~ U(-0.15, 0.15)", "speed read at n = 10, accuracy at n = 300"),
        check=check_r1_tau, expected=Verdict.CONFIRMED,
        reason=(_LIMITS + "tau = 0.4 minus tau = 0 at the paper's size: -0.54 dB [-0.59, -0.50] at n = 10 and "
                "-1.44 dB [-1.89, -0.99] at n = 300 (reduced size: -1.05 and -1.67 dB). " + _SIZES)),
    Claim(
        id="pgfl.experiment_r1_gfl", paper="pgfl",
        title="R-1: PGFL is superior to GFL (single global model)",
        citations=_CITE["R-1"],
        statement=("Without privacy or scheduling, the results illustrate the superiority of the proposed PGFL "
                   "algorithm (tau = 0 and tau = 0.4) over GFL, as cluster-specific learning tasks benefit "
                   "significantly from personalized models tailored to each cluster."),
        hypotheses=_COMMON[:2] + (_COMMON[4], "GFL = PGFL with Q = 1 (spec section 7, V5), NMSD against each "
                                  "client's own cluster model", "gamma ~ U(-0.15, 0.15)",
                                  "both PGFL curves of the figure (tau = 0.4 and 0) against GFL at n = 300"),
        check=check_r1_gfl, expected=Verdict.REFUTED,
        reason=(_LIMITS + "PGFL minus GFL at n = 300, paper's size: +0.62 dB [+0.37, +0.87] (tau = 0.4) and "
                "+2.06 dB [+1.39, +2.73] (tau = 0); reduced size: +0.37 and +2.0 dB: GFL is the best of the three. With "
                "gamma ~ U(-0.15, 0.15) the cluster models differ by less than PGFL's own error at its fixed point "
                "(per-server disagreement and pi-weighting, spec 2.8), so the pooled model wins; the size of that "
                "error depends on lambda, rho and sigma_v, which the paper does not report (spec 2.7 defaults "
                "used). With the R-5 spread (gamma = 0.5) both PGFL curves are below GFL (details: -0.54 dB for "
                "tau = 0.4, -4.7 dB for tau = 0). What the runs "
                "support instead: pgfl.experiment_r1_gfl_competitive."),
        reproduce=evaluate_comparison, corrected_by="pgfl.experiment_r1_gfl_competitive"),
    Claim(
        id="pgfl.experiment_r1_gfl_competitive", paper="pgfl",
        title="R-1 corrected: at the paper's cluster similarity GFL is within 1 dB of the best PGFL, or better",
        citations=_CITE["R-1"],
        statement=("Without privacy or scheduling and with gamma ~ U(-0.15, 0.15), the NMSD of GFL after 300 "
                   "iterations is less than 1 dB above that of PGFL with tau = 0.4 (the better PGFL curve)."),
        hypotheses=_COMMON[:2] + (_COMMON[4], "gamma ~ U(-0.15, 0.15)", "one-sided test with margin "
                                  "NEAR_IDENTICAL_DB = 1 dB", "compared at n = 300"),
        check=check_r1_gfl_competitive, expected=Verdict.CONFIRMED,
        reason=(_LIMITS + "GFL minus PGFL (tau = 0.4) at n = 300: -0.62 dB [-0.82, -0.41] at the paper's size, "
                "-0.37 dB [-0.69, -0.04] at the reduced size: GFL is below PGFL, so well inside the margin. "
                "(The sign of this small difference is not robust across root seeds at the reduced size, hence "
                "the one-sided statement.) " + _SIZES),
        corrects="pgfl.experiment_r1_gfl"),
    Claim(
        id="pgfl.experiment_r1_clusterfl", paper="pgfl",
        title="R-1: ClusterFL (no server links) is notably poor",
        citations=_CITE["R-1"],
        statement=("Without privacy or scheduling, the performance of ClusterFL is notably poor, emphasizing the "
                   "importance of the graph federated architecture when data is scarce."),
        hypotheses=_COMMON[:2] + (_COMMON[4], "ClusterFL = PGFL with E = {} and tau = 0.4 (spec V3, section 7)",
                                  "compared with PGFL (tau = 0.4 and 0) and GFL at n = 300"),
        check=check_r1_clusterfl, expected=Verdict.CONFIRMED,
        reason=("ClusterFL is 7.9-9.9 dB above the other three arms at n = 300 at the paper's size (2.3-4.3 dB at "
                "the reduced size, whose servers hold twice the data relative to d). " + _SIZES)),
    Claim(
        id="pgfl.experiment_r2_scheduling", paper="pgfl",
        title="R-2: client scheduling slows PGFL and raises its NMSD at 300 iterations",
        citations=_CITE["R-2"],
        statement=("With client scheduling (3 of 15 clients per server per iteration), PGFL exhibits slower "
                   "convergence and higher steady-state NMSD than without."),
        hypotheses=_COMMON[:3] + (_COMMON[4], "no privacy", "'steady state' read at the end of the paper's "
                                  "horizon, n = 300; speed at n = 10; tau in {0.4, 0}"),
        check=check_r2_scheduling, expected=Verdict.CONFIRMED,
        reason=("Scheduled minus full participation, paper's size: +3.7 dB (tau = 0.4) and +3.2 dB (tau = 0) at "
                "n = 10, +1.95 and +4.0 dB at n = 300. The higher NMSD at n = 300 is slower convergence, not a "
                "different steady state: with cached aggregation the full-participation fixed point is a fixed "
                "point of every scheduled iteration (tests/verify/test_pgfl_experiments_checks.py shows the curves "
                "meet), and the gap shrinks along the horizon (10.4, 4.8, 1.95 dB at n = 100, 200, 300). "
                + _SIZES)),
    Claim(
        id="pgfl.experiment_r2_gfl", paper="pgfl",
        title="R-2: GFL performs better with client scheduling",
        citations=_CITE["R-2"],
        statement=("GFL performs better with client scheduling than without, due to the imbalance of cluster "
                   "representation in the universal model, which benefits the participating clients on average."),
        hypotheses=_COMMON[:3] + (_COMMON[4], "no privacy", "GFL = PGFL with Q = 1", "compared at n = 300"),
        check=check_r2_gfl, expected=Verdict.REFUTED,
        reason=(_LIMITS + "Scheduled minus full-participation GFL at n = 300: +1.20 dB [+1.04, +1.37] at the "
                "paper's size (+1.82 dB at the reduced size): scheduling slows GFL as it slows PGFL. With cached "
                "aggregation (J line 144: servers keep the last available client estimates) both settings share "
                "one fixed point, so scheduling cannot improve GFL's steady state either; the paper's explanation "
                "(cluster imbalance among the participants) could only act with fresh-only aggregation."),
        reproduce=evaluate_comparison, corrected_by="pgfl.experiment_r2_gfl_slower"),
    Claim(
        id="pgfl.experiment_r2_gfl_slower", paper="pgfl",
        title="R-2 corrected: client scheduling slows GFL too",
        citations=_CITE["R-2"],
        statement="With client scheduling, GFL has a higher NMSD after 300 iterations than without.",
        hypotheses=_COMMON[:3] + (_COMMON[4], "no privacy", "compared at n = 300"),
        check=check_r2_gfl_slower, expected=Verdict.CONFIRMED,
        reason="+1.20 dB at the paper's size, +1.82 dB at the reduced size (see pgfl.experiment_r2_gfl). " + _SIZES,
        corrects="pgfl.experiment_r2_gfl"),
    Claim(
        id="pgfl.experiment_r3_privacy_slows", paper="pgfl",
        title="R-3: the privacy noise slows convergence",
        citations=_CITE["R-3"],
        statement=("With client scheduling, the noise perturbation associated with differential privacy "
                   "(phi0 = 0.001, zeta = 0.99) significantly reduces the convergence speed."),
        hypotheses=_COMMON + ("PGFL with tau in {0.4, 0} (GFL and ClusterFL with privacy are not simulated)",
                              "read at n = 10 and n = 150"),
        check=check_r3_privacy_slows, expected=Verdict.CONFIRMED,
        reason=("Private minus non-private, paper's size: +0.54 dB (tau = 0.4) and +0.70 dB (tau = 0) at n = 10, "
                "+2.9 and +2.5 dB at n = 150. " + _SIZES)),
    Claim(
        id="pgfl.experiment_r3_privacy_cost", paper="pgfl",
        title="R-3: after 300 iterations the private NMSD is nearly identical to the non-private one",
        citations=_CITE["R-3"],
        statement=("With client scheduling and privacy (phi0 = 0.001, zeta = 0.99), the NMSD after 300 iterations is "
                   "nearly identical to the one without privacy (Fig. 5.1(b)), because the noise variance decreases "
                   "throughout the learning process."),
        hypotheses=_COMMON + ("'nearly identical' = within 1 dB (NEAR_IDENTICAL_DB), two one-sided tests",
                              "PGFL with tau = 0.4, compared at n = 300"),
        check=check_r3_privacy_cost, expected=Verdict.REFUTED,
        reason=(_LIMITS + "Private minus non-private at n = 300: +2.51 dB [+2.18, +2.83] at the paper's size "
                "(+1.9 dB with tau = 0; +5.0 dB at the reduced size): at zeta = 0.99 the variance is still 0.049 "
                "of its start after 300 iterations. The gap scales with the noise variance "
                "2 C^2 zeta^n / (phi0 rho^2 D_k^2); C and rho are not reported (C = 1 is the spec's nominal value: "
                "ridge has no gradient bound, E10), so a small enough C would close it: the statement is not "
                "reproducible as stated, only with an unreported noise scale. Privacy accounting of these runs "
                "(details): Theorem IV gives 1.939 with full participation; under scheduling with the global "
                "noise index the per-client totals are 0.18-0.61 (mean 0.39), never the stated 0.095 "
                "(pgfl.theorem4.reported_total, Review note R-b)."),
        reproduce=evaluate_comparison),
    Claim(
        id="pgfl.experiment_r4_tau_sweep", paper="pgfl",
        title="R-4: tau in (0.1, 0.5) gives a lower NMSD than tau = 0",
        citations=_CITE["R-4"],
        statement=("With scheduling and privacy, PGFL achieves a lower NMSD after 200 iterations with "
                   "tau in (0.1, 0.5) than with tau = 0."),
        hypotheses=_COMMON + ("the points of the grid 0:0.1:0.9 inside the open interval: tau = 0.2, 0.3, 0.4",
                              "read at n = 200"),
        check=check_r4_tau_sweep, expected=Verdict.CONFIRMED,
        reason=("tau = 0.2, 0.3, 0.4 minus tau = 0 at n = 200: -2.41, -2.53, -2.59 dB at the paper's size. The mean "
                "curve falls from -9.5 dB (tau = 0) to -11.6 dB (0.1) and is flat within 0.05 dB from 0.4 to 0.9; "
                "its argmin (0.7 at seed 0) is therefore not informative. " + _SIZES)),
    Claim(
        id="pgfl.experiment_r4_large_tau", paper="pgfl",
        title="R-4: a too large tau degrades the NMSD",
        citations=_CITE["R-4"],
        statement=("The inter-cluster learning parameter must be carefully selected, as a value too large for the "
                   "setting leads to performance degradation (NMSD after 200 iterations, scheduling and privacy)."),
        hypotheses=_COMMON + ("'too large' = tau = 0.9, the largest grid point, against tau = 0.4",
                              "'degradation' = more than NEAR_IDENTICAL_DB = 1 dB above tau = 0.4: a smaller "
                              "difference is what the paper calls 'nearly identical' (R-3)", "read at n = 200"),
        check=check_r4_large_tau, expected=Verdict.REFUTED,
        reason=(_LIMITS + "tau = 0.4 minus tau = 0.9 at n = 200: +0.03 dB [+0.01, +0.05] at the paper's size "
                "(tau = 0.9 is marginally better) and -0.02 dB [-0.06, +0.03] at the reduced size; the whole "
                "curve is flat within 0.05 dB from tau = 0.4 to 0.9 (pgfl.experiment_r4_tau_sweep details). Under "
                "the privacy noise, averaging over clusters is worth as much as the bias it adds when "
                "gamma ~ U(-0.15, 0.15). Without the margin the verdict would follow the sign of a few "
                "hundredths of a dB, which varies with the root seed. Without noise and with dissimilar clusters "
                "(gamma = 0.9) tau = 0.9 does degrade (mutation test)."),
        reproduce=evaluate_comparison, corrected_by="pgfl.experiment_r4_large_tau_flat"),
    Claim(
        id="pgfl.experiment_r4_large_tau_flat", paper="pgfl",
        title="R-4 corrected: NMSD(tau = 0.9) is within 1 dB of NMSD(tau = 0.4)",
        citations=_CITE["R-4"],
        statement=("With scheduling and privacy and gamma ~ U(-0.15, 0.15), the NMSD after 200 iterations at "
                   "tau = 0.9 is within 1 dB of the one at tau = 0.4."),
        hypotheses=_COMMON + ("two one-sided tests with margin NEAR_IDENTICAL_DB = 1 dB", "read at n = 200"),
        check=check_r4_large_tau_flat, expected=Verdict.CONFIRMED,
        reason="Both confidence limits lie within 0.1 dB of 0 at both sizes. " + _SIZES,
        corrects="pgfl.experiment_r4_large_tau"),
    Claim(
        id="pgfl.experiment_r5_fixed_tau", paper="pgfl",
        title="R-5: with dissimilar clusters, tau = 0.4 starts faster but has a worse steady state",
        citations=_CITE["R-5"],
        statement=("With gamma ~ U(-0.5, 0.5), scheduling and privacy, inter-cluster learning (tau = 0.4) degrades the "
                   "steady-state NMSD compared with tau = 0, but improves the initial convergence rate."),
        hypotheses=_COMMON + ("gamma ~ U(-0.5, 0.5)", "initial rate read at n = 10 in the paper's setting",
                              "steady state = the common limit of the scheduled private runs: the noise-free, "
                              "full-participation run after 300 iterations (cached aggregation gives the scheduled "
                              "iteration the same fixed point, and the noise variance tends to 0)"),
        check=check_r5_fixed_tau, expected=Verdict.CONFIRMED,
        reason=(_LIMITS + "tau = 0.4 minus tau = 0: -0.27 dB [-0.32, -0.23] at n = 10; steady state +4.1 dB "
                "[+2.4, +5.9] at the paper's size (-0.32 dB and +4.0 dB [+2.4, +5.6] at the reduced size, 24 replicates "
                "for the steady state: its per-replicate difference follows the drawn spread of the gamma_q, and a "
                "third of the instances go the other way). The paper gives no "
                "horizon for this figure; at n = 300 in the scheduled private setting tau = 0.4 is still 0.16 dB "
                "below tau = 0 (the curves cross later), so the degradation shows only in the limit. " + _SIZES)),
    Claim(
        id="pgfl.experiment_r5_decaying_tau", paper="pgfl",
        title="R-5: tau = 0.4 * 0.98^n keeps the fast start and reaches tau = 0's steady state",
        citations=_CITE["R-5"],
        statement=("With gamma ~ U(-0.5, 0.5), scheduling and privacy, PGFL with time-varying tau = 0.4 * 0.98^n has "
                   "the same initial convergence rate as fixed tau = 0.4 and attains near-identical steady-state "
                   "NMSD as fixed tau = 0."),
        hypotheses=_COMMON + ("gamma ~ U(-0.5, 0.5)", "initial rate at n = 10: below tau = 0 and within 1 dB of "
                              "tau = 0.4 (two one-sided tests)", "steady state read as in pgfl.experiment_r5_fixed_tau: "
                              "less than 1 dB above tau = 0's (its exact limit is tau = 0's fixed point, since "
                              "tau^(n) -> 0)"),
        check=check_r5_decaying_tau, expected=Verdict.CONFIRMED,
        reason=("At n = 10 the decaying schedule is 0.26 dB below tau = 0 and 0.01 dB from tau = 0.4; its noise-free "
                "run is 0.46 dB below tau = 0's after 300 iterations (1.07 dB below after 200 at the reduced size) and "
                "still approaching it from below, so 'near-identical' holds in the limit and as non-inferiority at "
                "the horizon, not as a two-sided equivalence. At n = 300 in the scheduled private setting it is the "
                "best of the three: 1.3 dB below tau = 0 and 1.1 dB below tau = 0.4. " + _SIZES)),
    Claim(
        id="pgfl.experiment_r6_phi0", paper="pgfl",
        title="R-6: more privacy (smaller phi0) gives a higher NMSD",
        citations=_CITE["R-6"],
        statement=("For smaller values of phi0 (zeta = 0.99), the NMSD of PGFL after 200 iterations is higher: "
                   "a lower total privacy loss bound leads to a higher noise variance."),
        hypotheses=_COMMON + ("phi0 in {1e-4, 1e-3, 1e-2, 1e-1}, tau = 0.4", "monotone: the end points "
                              "significantly ordered and no consecutive pair significantly reversed", "read at n = 200"),
        check=check_r6_phi0, expected=Verdict.CONFIRMED,
        reason=("NMSD falls by 10.5 dB from phi0 = 1e-4 to 1e-1 at the paper's size, every step downhill (the last, "
                "1e-2 to 1e-1, by 0.39 dB). " + _SIZES)),
    Claim(
        id="pgfl.experiment_r7_zeta", paper="pgfl",
        title="R-7: a variance decay rate closer to 1 gives a higher NMSD",
        citations=_CITE["R-7"],
        statement=("The lower the variance decrease rate zeta (phi0 = 0.001), the lower the NMSD after 200 "
                   "iterations; zeta close to 1 gives better privacy at the cost of accuracy."),
        hypotheses=_COMMON + ("zeta in {0.9, 0.95, 0.99, 0.999}, tau = 0.4", "monotone as in "
                              "pgfl.experiment_r6_phi0", "read at n = 200"),
        check=check_r7_zeta, expected=Verdict.CONFIRMED,
        reason=("NMSD rises by 8.0 dB from zeta = 0.9 to 0.999 at the paper's size; 0.9 and 0.95 are level "
                "(-0.02 dB [-0.06, +0.02]): the noise is already negligible after 200 iterations. The price is "
                "steep: Theorem IV gives a total of 1.4e7 after 200 iterations at zeta = 0.9 (570 at 0.95, 0.65 at "
                "0.99), so the low-zeta end of the trade-off offers no meaningful privacy. " + _SIZES)),
)
