r"""The design of PGFL's regression experiments R-1 (docs/papers/pgfl.md#exp-r1) ... R-7 (docs/papers/pgfl.md#exp-r6)
(thesis Section 5.4.1) for :mod:`verify.harness`.

Replicate :math:`i` draws a fresh instance of docs/papers/pgfl.md#choice-regression-data setting (server graph,
clusters, data,
:func:`reference_impl.pgfl.synthetic_regression`) and one algorithm seed that every arm uses, so the arms see the
same data, the same scheduling draws and the same standard-normal privacy noise (common random numbers;
:func:`reference_impl.pgfl.run_pgfl` draws them whatever the configuration). Replicate :math:`i`'s seeds depend
only on the root seed and :math:`i`, so later stages extend earlier ones.

A grid point fixes the choices the paper does not report: ``rho/L_max`` (:math:`\rho` as a multiple of the
replicate's own largest client curvature :math:`L_{max}`), ``lambda`` (the ridge weight) and ``C`` (a multiplier of
the nominal per-sample gradient bound of the privacy noise). GFL is PGFL with :math:`Q = 1`
(V5, docs/papers/pgfl.md#variants) and ClusterFL PGFL without server links (V3, docs/papers/pgfl.md#variants); both are
measured against each client's own cluster model (docs/papers/pgfl.md#choice-baselines). The ``ci`` scale (S = 4, d =
30, C = d/60) keeps the paper size's noise-to-signal ratio: :math:`L_{max}`, hence
:math:`\rho`, grows about linearly in d, so :math:`\Delta_k = 2C/(\rho D_k)` stays comparable only if
:math:`C \propto d`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from reference_impl.pgfl import PGFLConfig, PGFLProblem, run_pgfl_arms, synthetic_regression
from theory._validate import positive_int
from verify.harness import Design, replicate_seed

__all__ = ["DESIGN", "SCALES", "Arm", "Scale", "arm_key", "as_single_cluster", "client_nmsd_observer",
           "simulate_regression", "with_server_graph"]

#: Shared seed key: every claim sees the same replicates (as the paper's figures do).
EXPERIMENT_KEY = "pgfl.experiments.regression"


def with_server_graph(problem: PGFLProblem, adjacency) -> PGFLProblem:
    """The same clients, clusters and data on another server graph (all-False adjacency: ClusterFL,
    V3 (docs/papers/pgfl.md#variants))."""
    adjacency = np.asarray(adjacency, dtype=bool)
    if adjacency.shape != problem.adjacency.shape:
        raise ValueError(f"adjacency must have shape {problem.adjacency.shape} (S = {problem.S} servers), "
                         f"got {adjacency.shape}")
    return dataclasses.replace(problem, adjacency=adjacency)


def as_single_cluster(problem: PGFLProblem) -> PGFLProblem:
    """GFL (V5, docs/papers/pgfl.md#variants): one global model, Q = 1, every client in cluster 0; step (10) is skipped
    by the algorithm.

    ``true_models`` is dropped (it would need shape (1, d)); measure the NMSD against each client's own
    data-generating model with :func:`client_nmsd_observer`.
    """
    return dataclasses.replace(problem, n_clusters=1, client_cluster=np.zeros(problem.K, dtype=np.int64),
                               true_models=None)


def client_nmsd_observer(truth: np.ndarray):
    r"""NMSD (seed 004 eq. (5.35)) per run: the mean over clients of
    :math:`\lVert w_k - w^\circ_{(q(k))}\rVert^2/\lVert w^\circ_{(q(k))}\rVert^2`, shape (runs,).

    ``truth`` is (K, d), each client's own data-generating model, so the metric does not depend on the
    architecture's cluster labels (GFL is measured against the clients' cluster
    models, docs/papers/pgfl.md#choice-baselines).
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


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scale:
    """Instance size and Monte-Carlo size of one profile.

    Attributes
    ----------
    servers, clients_per_server, d : int
        S, |C_s| and the model dimension of docs/papers/pgfl.md#choice-regression-data setting.
    scheduled : int
        Clients each server samples per iteration under scheduling (V4, docs/papers/pgfl.md#choice-scheduling).
    iterations : int
        Horizon N of the learning curves (300 in the paper's Figs 5.1).
    sweep_iteration : int
        Iteration at which the sweeps (R-4, docs/papers/pgfl.md#exp-r4, R-6 (docs/papers/pgfl.md#exp-r6),
        R-7 (docs/papers/pgfl.md#exp-r6)) read the NMSD (200 in the paper).
    early_iteration : int
        Iteration that stands for "initial convergence rate".
    limit_iterations : int
        Horizon of the noise-free, full-participation runs that stand for the steady state
        (R-5, docs/papers/pgfl.md#exp-r5).
    C : float
        Nominal per-sample gradient bound C_k of the privacy noise (docs/papers/pgfl.md#choices: 1 at the paper's size).
    """

    servers: int
    clients_per_server: int
    d: int
    scheduled: int
    iterations: int
    sweep_iteration: int
    early_iteration: int
    limit_iterations: int
    C: float

    def __post_init__(self) -> None:
        for name in ("servers", "clients_per_server", "d", "scheduled", "iterations", "sweep_iteration",
                     "early_iteration", "limit_iterations"):
            positive_int(name, getattr(self, name))
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
                early_iteration=10, limit_iterations=200, C=30 / 60),
    "thorough": Scale(servers=10, clients_per_server=15, d=60, scheduled=3, iterations=300, sweep_iteration=200,
                      early_iteration=10, limit_iterations=300, C=1.0),
}

_ARCHITECTURES = ("pgfl", "gfl", "clusterfl")
_HORIZONS = ("iterations", "sweep", "limit")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Arm:
    """One curve of a figure: an architecture, its tau schedule and the setting it runs in.

    Attributes
    ----------
    label : str
        Name in figures and reports (not part of the simulation's identity).
    architecture : {"pgfl", "gfl", "clusterfl"}
        PGFL; GFL = Q = 1 (V5, docs/papers/pgfl.md#variants); ClusterFL = PGFL without server links
        (V3, docs/papers/pgfl.md#variants).
    tau, tau_decay : float
        tau^(n) = tau * tau_decay^n (V2 (docs/papers/pgfl.md#variants) when tau_decay < 1; constant when 1). GFL ignores
        tau.
    scheduling : bool
        The scale's ``scheduled`` clients per server per iteration (V4, docs/papers/pgfl.md#choice-scheduling), else
        full participation.
    phi0, zeta : float
        Privacy (Algorithm 2 noise): initial zCDP parameter (None = no noise) and variance decay.
    gamma : float
        Cluster models w_q = (1 + gamma_q) w_0, gamma_q ~ U(-gamma, gamma).
    C_factor : float
        Multiplies the scale's C (a sensitivity study; 1 = docs/papers/pgfl.md default).
    horizon : {"iterations", "sweep", "limit"}
        How long the arm runs: the scale's learning-curve horizon, its sweep read-out, or the horizon of the
        noise-free full-participation runs that stand for a steady state.
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
    horizon: str = "iterations"

    def __post_init__(self) -> None:
        if self.horizon not in _HORIZONS:
            raise ValueError(f"horizon must be one of {_HORIZONS}, got {self.horizon!r}")
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

    def iterations(self, scale: Scale) -> int:
        return {"iterations": scale.iterations, "sweep": scale.sweep_iteration, "limit": scale.limit_iterations}[
            self.horizon]

    def config(self, rho: float, scale: Scale, C_factor: float = 1.0) -> PGFLConfig:
        iterations = self.iterations(scale)
        if self.tau_decay == 1.0:
            taus = PGFLConfig.constant_tau(self.tau)
        else:
            taus = PGFLConfig.geometric_tau(self.tau, self.tau_decay, iterations)
        return PGFLConfig(rho=rho, taus=taus, algorithm="alg2", phi0=self.phi0, zeta=self.zeta,
                          C=scale.C * self.C_factor * C_factor, scheduled=scale.scheduled if self.scheduling else None)

    def problem(self, base: PGFLProblem) -> PGFLProblem:
        if self.architecture == "gfl":
            return as_single_cluster(base)
        if self.architecture == "clusterfl":
            return with_server_graph(base, np.zeros_like(base.adjacency))
        return base


def _replicate_seeds(root_seed: int, replicate: int) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
    """(data seed, algorithm seed) of replicate ``replicate``: streams 0 and 1 of
    :func:`verify.harness.replicate_seed`."""
    data, algorithm = (replicate_seed(EXPERIMENT_KEY, root_seed, replicate, stream=s) for s in (0, 1))
    return data, algorithm


def simulate_regression(arms, point, scale: Scale, root_seed: int, replicates) -> list[np.ndarray]:
    """NMSD curves (len(replicates), arm horizon) of every arm at grid point ``point`` (a design's ``simulate``).

    The arms of one replicate that share a problem (architecture and gamma) run in lockstep
    (:func:`reference_impl.pgfl.run_pgfl_arms`: one draw of the scheduling keys and noise per iteration, one
    factorisation): each arm's curve is the one its own run from the replicate's algorithm seed gives, bit for bit.
    """
    choices = dict(point)
    rho_factor, lam, c_factor = choices.get("rho/L_max", 0.25), choices.get("lambda", 1.0), choices.get("C", 1.0)
    groups: dict[tuple, list[int]] = {}
    for index, arm in enumerate(arms):
        groups.setdefault((arm.gamma, arm.architecture), []).append(index)
    out = [[] for _ in arms]
    for replicate in replicates:
        data_seed, algorithm_seed = _replicate_seeds(root_seed, replicate)
        instances = {gamma: synthetic_regression(np.random.default_rng(data_seed), gamma=gamma, lam=lam,
                                                 **scale.sizes)
                     for gamma in dict.fromkeys(arm.gamma for arm in arms)}
        # rho from the replicate's largest curvature, which gamma does not change (it moves no draw of X)
        rho = rho_factor * instances[arms[0].gamma].max_curvature
        for (gamma, _), members in groups.items():
            base = instances[gamma]
            curves = run_pgfl_arms(arms[members[0]].problem(base),
                                   [arms[i].config(rho, scale, c_factor) for i in members],
                                   [arms[i].iterations(scale) for i in members], np.random.default_rng(algorithm_seed),
                                   observe=client_nmsd_observer(base.true_models[base.client_cluster]))
            for i, curve in zip(members, curves, strict=True):
                out[i].append(curve)
    return [np.stack(curves) for curves in out]


def arm_key(arm: Arm, point: tuple, scale: Scale, root_seed: int) -> tuple:
    """What an arm's curves at ``point`` depend on (the design's ``arm_key``): the choices with their defaults filled
    in, and C only for a private arm, so the plain and private grids' equal points share a stored arm."""
    choices = dict(point)
    c_factor = choices.get("C", 1.0) if arm.phi0 is not None else None
    return (choices.get("rho/L_max", 0.25), choices.get("lambda", 1.0), c_factor, arm.key)


def _readout(name: str, scale: Scale, curves: np.ndarray) -> np.ndarray:
    """NMSD in dB at the iteration that plays the role ``name`` (early, mid, horizon, sweep, limit)."""
    n = scale.iteration(name)
    if curves.shape[1] < n:
        raise ValueError(f"read-out {name!r} needs {n} iterations, the arm ran {curves.shape[1]}")
    return 10.0 * np.log10(curves[:, n - 1])


#: Replicates per profile: 12 then 24 at ci, 20 then 40 at the paper's size.
DESIGN = Design(namespace=EXPERIMENT_KEY, simulate=simulate_regression, readout=_readout, scales=SCALES,
                stages={"ci": (12, 24), "thorough": (20, 40)}, chunk={"ci": 6, "thorough": 4}, arm_key=arm_key)
