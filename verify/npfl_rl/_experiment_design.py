r"""The design of NPFL-RL's experiments (Figs. 6.1-6.3) for :mod:`verify.harness`.

Replicate :math:`i` draws one I0 (docs/papers/npfl_rl.md#instance-i0) instance (docs/papers/npfl_rl.md#results:
Erdős-Rényi graph with mean degree 6, Q = 3 uniform clusters,
:math:`w_q = (1+\delta_q)w_0`, :math:`D_k \sim U\{D_{lo..hi}\}`, :math:`\lambda = 0.1`) from
``default_rng([root, i, 0])`` and its SAC draws from ``default_rng([root, i, 1])``, as
:func:`reference_impl.npfl_rl.simulate_replicates` does, so every arm sees the same instance and the same draws
(common random numbers) and the CLI reproduces the numbers: :func:`verify.harness.replicate_seed`'s ``"root-list"``
scheme, ``root`` derived from the check's seed and the design's key.

An arm's outcome is an array (replicates, N + 1, :data:`CHANNELS`): the printed Test MSE (6.15) and summaries of
the :math:`\tau_k^{(n)}` trajectories (the clients with the largest, median and smallest :math:`D_k`, as Fig. 6.3
picks clients 22, 3 and 30; the mean :math:`|\tau_k^{(n)} - \tau^{(0)}|`; the mean :math:`|\Delta^2\tau_k^{(n)}|`).
Two ground-truth arms are constant curves: the Test MSE of the whole-cluster ridge solution ((6.1) with
:math:`\tau = 0`) and of the per-component one (K2, docs/papers/npfl_rl.md#k2). A grid point may fix the horizon ``N``,
the ``policy`` whose
:math:`\tau` trajectories C9 (docs/papers/npfl_rl.md#exp-c9) reads, ``delta_kind`` (scalar or elementwise
:math:`\delta_q`), the ridge weight ``lambda`` (:data:`DEFAULT_LAMBDA`), the ``noise`` level (a factor on the
noise-variance range
:data:`DEFAULT_NOISE_RANGE` of :math:`\eta_k`) and the controllers' initial ``tau0``: the paper prints none of them
(docs/papers/npfl_rl.md, "Choices").
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from reference_impl.npfl_rl import PAPER_ARMS, per_component_ridge, run_npfl, test_mse
from reference_impl.npfl_rl.data import synthetic_problem
from theory._validate import positive_int
from verify.harness import Design, Pinned, replicate_seed

__all__ = ["CHANNELS", "DESIGN", "GROUND_TRUTHS", "SCALES", "Arm", "Scale", "cluster_ridge", "replicate_problem",
           "replicate_root", "simulate_npfl"]

#: Shared seed key: every claim sees the same replicates (as the paper's figures do).
EXPERIMENT_KEY = "npfl_rl.experiments"
#: Channels of an arm's outcome (last axis).
CHANNELS = ("test_mse", "tau_large", "tau_median", "tau_small", "tau_spread", "tau_curvature")
#: Arms that are not runs of the algorithm: constant Test-MSE curves of a ground truth.
GROUND_TRUTHS = ("cluster_ridge", "component_ridge")
#: The arm name resolved from the grid's ``policy`` (C9 (docs/papers/npfl_rl.md#exp-c9): Fig. 6.3 shows RL (DPG) and RL
#: (SAC)).
RL_OF_POLICY = "rl_policy"
#: The ridge weight lambda of (6.1) where a grid point does not fix it (the thesis prints none).
DEFAULT_LAMBDA = 0.1
#: The range of the noise variances eta_k ~ U(lo, hi) at ``noise = 1`` (the thesis prints none).
DEFAULT_NOISE_RANGE = (0.005, 0.03)
#: The controllers' initial tau^(0) where a grid point does not fix it.
DEFAULT_TAU0 = 0.05


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scale:
    """Instance size and horizon of one profile: K clients, d features, D_k ~ U{D_lo..D_hi}, N iterations, the early
    read-out (initial speed) and the first iteration of the window the roughness read-outs average over."""

    K: int
    d: int
    D_lo: int
    D_hi: int
    N: int
    early: int

    def __post_init__(self) -> None:
        for name in ("K", "d", "D_lo", "D_hi", "N", "early"):
            positive_int(name, getattr(self, name))
        if self.D_lo > self.D_hi:
            raise ValueError(f"D_lo must be <= D_hi = {self.D_hi}, got {self.D_lo}")
        if not 2 <= self.early < self.N:
            raise ValueError(f"early must be in [2, N = {self.N}), got {self.early}")

    @property
    def generator(self) -> dict:
        """Arguments of :func:`reference_impl.npfl_rl.data.synthetic_problem` (the other
        I0 (docs/papers/npfl_rl.md#instance-i0) values are its defaults)."""
        return {"K": self.K, "d": self.d, "D_range": (self.D_lo, self.D_hi)}


#: ci keeps D_k < d (singular H_k) and the paper's K, Q and degree at half the dimension and 2/3 of the horizon.
SCALES = {"ci": Scale(K=30, d=30, D_lo=3, D_hi=17, N=200, early=20),
          "thorough": Scale(K=30, d=60, D_lo=5, D_hi=35, N=300, early=30)}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Arm:
    """One curve: a :data:`reference_impl.npfl_rl.PAPER_ARMS` name, :data:`RL_OF_POLICY`, or a ground truth."""

    label: str
    name: str

    def __post_init__(self) -> None:
        if self.name not in PAPER_ARMS and self.name not in GROUND_TRUTHS and self.name != RL_OF_POLICY:
            raise ValueError(f"name must be a PAPER_ARMS name, {RL_OF_POLICY!r} or one of {GROUND_TRUTHS}, "
                             f"got {self.name!r}")

    @property
    def key(self) -> str:
        return self.name

    def resolve(self, choices: dict) -> str:
        """The arm actually simulated at a grid point (the RL arm of the point's policy)."""
        return f"rl_{choices.get('policy', 'sac')}" if self.name == RL_OF_POLICY else self.name


def replicate_root(root_seed: int) -> int:
    """The integer root of the replicate seeds (default_rng([root, i, 0]) and [root, i, 1]) of a check seed."""
    return int(replicate_seed(EXPERIMENT_KEY, root_seed).generate_state(1)[0])


@functools.lru_cache(maxsize=256)
def replicate_problem(scale: Scale, root_seed: int, replicate: int, delta_kind: str = "scalar",
                      lam: float = DEFAULT_LAMBDA, noise: float = 1.0):
    """The I0 (docs/papers/npfl_rl.md#instance-i0) instance of replicate ``replicate`` (the same for every arm);
    ``delta_kind`` scalar or elementwise, ``lam`` the ridge weight, ``noise`` a factor on :data:`DEFAULT_NOISE_RANGE`.
    The draws are the same at every ``lam`` and ``noise`` (common random numbers across the grid: the noise variances
    are rescaled uniforms)."""
    rng = np.random.default_rng(replicate_seed(EXPERIMENT_KEY, root_seed, int(replicate), stream=0, scheme="root-list"))
    lo, hi = DEFAULT_NOISE_RANGE
    return synthetic_problem(rng, delta_kind=delta_kind, lam=float(lam), noise_range=(noise * lo, noise * hi),
                             **scale.generator)[0]


def _instance_choices(choices: dict) -> tuple:
    """The grid choices that change the instance: (delta_kind, lambda, noise)."""
    return (choices.get("delta_kind", "scalar"), float(choices.get("lambda", DEFAULT_LAMBDA)),
            float(choices.get("noise", 1.0)))


def _config(name: str, choices: dict):
    """The arm's configuration at a grid point: the controllers start at the point's ``tau0``."""
    config = PAPER_ARMS[name]
    tau0 = float(choices.get("tau0", DEFAULT_TAU0))
    if name.startswith(("rl_", "brl_")) and tau0 != config.tau0:
        config = dataclasses.replace(config, tau0=tau0)
    return config


def cluster_ridge(problem) -> np.ndarray:
    r"""(6.1) with :math:`\tau = 0` for every cluster as one model: :math:`\arg\min_w\sum_{k\in C_{(q)}}
    \frac1{D_k}\|y_k - X_kw\|^2 + \lambda\|w\|^2` (normal equations), per client (K, d)."""
    onehot = np.eye(problem.Q)[problem.labels]  # (K, Q)
    H = np.einsum("kq,kij->qij", onehot, problem.H) + problem.lam * np.eye(problem.d)
    w = np.linalg.solve(H, (onehot.T @ problem.b)[..., None])[..., 0]
    return w[problem.labels]


def _picked(problem) -> np.ndarray:
    """The clients with the largest, median and smallest D_k (stable order: the lowest index among ties)."""
    order = np.argsort(problem.D, kind="stable")
    return np.array([order[-1], order[len(order) // 2], order[0]])


def _channels(problems, tau: np.ndarray, mse: np.ndarray) -> np.ndarray:
    R, n1, _ = tau.shape
    out = np.zeros((R, n1, len(CHANNELS)))
    out[:, :, 0] = mse
    picks = np.stack([_picked(p) for p in problems])  # (R, 3)
    out[:, :, 1:4] = np.take_along_axis(tau, picks[:, None, :], axis=2)
    out[:, :, 4] = np.mean(np.abs(tau - tau[:, :1]), axis=2)
    out[:, 2:, 5] = np.mean(np.abs(np.diff(tau, 2, axis=1)), axis=2)
    return out


def simulate_npfl(arms, point, scale: Scale, root_seed: int, replicates) -> list[np.ndarray]:
    """Outcomes (len(replicates), N + 1, len(CHANNELS)) of every arm at grid point ``point`` (the design's
    ``simulate``); ``N`` is the point's horizon or the scale's. A :class:`verify.harness.Pinned` arm is simulated at its
    own point (the design is a lockstep design).

    An arm asked at several horizons on one instance (N = 300 and N = 1000 of C3, C4) is run once, to the longest:
    the shorter runs are its prefixes, bit for bit (an iteration does not depend on the horizon).
    """
    jobs = [Pinned.unpin(arm, point) for arm in arms]
    runs: dict[tuple, int] = {}  # (resolved arm, instance choices, tau0) -> the longest horizon asked
    for arm, choices in jobs:
        run = _run_of(arm, choices)
        runs[run] = max(runs.get(run, 0), int(choices.get("N", scale.N)))
    done = {}
    for instance in dict.fromkeys(run[1] for run in runs):
        problems = [replicate_problem(scale, root_seed, i, *instance) for i in replicates]
        for run, N in runs.items():
            if run[1] == instance:
                done[run] = _simulate_run(run, N, problems, scale, root_seed, replicates)
    out = []
    for arm, choices in jobs:
        N = int(choices.get("N", scale.N))
        outcome = done[_run_of(arm, choices)][:, :N + 1]
        if not np.all(np.isfinite(outcome)):
            raise ArithmeticError(f"{arm.label} diverged on replicates {list(replicates)} at {choices}")
        out.append(outcome)
    return out


def _run_of(arm: Arm, choices: dict) -> tuple:
    """What an arm's run depends on but its horizon: the resolved arm, the instance's choices and, for a controller,
    tau0."""
    name = arm.resolve(choices)
    tau0 = float(choices.get("tau0", DEFAULT_TAU0)) if name.startswith(("rl_", "brl_")) else None
    return name, _instance_choices(choices), tau0


def _simulate_run(run: tuple, N: int, problems, scale: Scale, root_seed: int, replicates) -> np.ndarray:
    """The outcome (len(replicates), N + 1, len(CHANNELS)) of one :func:`_run_of` record on ``problems``."""
    name, _, tau0 = run
    if name in GROUND_TRUTHS:
        w = [cluster_ridge(p) if name == "cluster_ridge" else per_component_ridge(p, method="normal").w
             for p in problems]
        mse = np.array([test_mse(p, wi) for p, wi in zip(problems, w, strict=True)])
        return _channels(problems, np.zeros((len(problems), N + 1, scale.K)), np.repeat(mse[:, None], N + 1, axis=1))
    rngs = [np.random.default_rng(replicate_seed(EXPERIMENT_KEY, root_seed, int(i), stream=1, scheme="root-list"))
            for i in replicates]
    config = _config(name, {} if tau0 is None else {"tau0": tau0})
    run_ = run_npfl(problems, config, N, rngs)
    return _channels(problems, run_.tau, run_.test_mse)  # a diverged run is NaN from there on (simulate_npfl)


def _arm_key(arm: Arm, point, scale, root_seed):
    """What an arm depends on: the resolved arm, the horizon, the instance's choices and, for a controller, tau0
    (not the policy, once resolved)."""
    choices = dict(point)
    name, instance, tau0 = _run_of(arm, choices)
    return (name, int(choices.get("N", scale.N)), instance, tau0)


def _readout(name: str, scale: Scale, curves: np.ndarray) -> np.ndarray:
    """The scalar per replicate that a statement compares.

    ``early``/``final``: Test MSE (6.15) in dB at n = ``scale.early`` / at the horizon; ``roughness``: the mean
    :math:`|\\Delta^2|` of the dB curve over the second half (zero for a smooth curve of any slope);
    ``tau_curvature``: the same of the :math:`\\tau_k` trajectories (mean over clients); ``tau_adapt`` /
    ``tau_reach``: mean :math:`|\\tau_k^{(n)} - \\tau^{(0)}|` at the early read-out / the horizon;
    ``{large,median,small}_{early,rise,fall,final}``: that client's
    :math:`\\tau^{(early)} - \\tau^{(0)}`, :math:`\\max_n\\tau^{(n)} - \\tau^{(0)}`,
    :math:`\\tau^{(N)} - \\max_n\\tau^{(n)}` and :math:`\\tau^{(N)}`.
    """
    e = scale.early
    if name in ("early", "final"):
        return 10.0 * np.log10(curves[:, e if name == "early" else -1, 0])
    if name == "roughness":
        db = 10.0 * np.log10(curves[:, (curves.shape[1] - 1) // 2:, 0])  # the second half of the horizon
        return np.mean(np.abs(np.diff(db, 2, axis=1)), axis=1)
    if name == "tau_curvature":
        return np.mean(curves[:, 2:, 5], axis=1)
    if name in ("tau_adapt", "tau_reach"):
        return curves[:, e if name == "tau_adapt" else -1, 4]
    client, _, what = name.partition("_")
    if client not in ("large", "median", "small") or what not in ("early", "rise", "fall", "final"):
        raise ValueError(f"unknown read-out {name!r}")
    tau = curves[:, :, CHANNELS.index(f"tau_{client}")]
    return {"early": tau[:, e] - tau[:, 0], "rise": tau.max(axis=1) - tau[:, 0],
            "fall": tau[:, -1] - tau.max(axis=1), "final": tau[:, -1]}[what]


#: Replicates: 10 then 20 at ci, 20 then 40 at the paper's size (the paper averages 10).
DESIGN = Design(namespace=EXPERIMENT_KEY, simulate=simulate_npfl, readout=_readout, scales=SCALES,
                stages={"ci": (10, 20), "thorough": (20, 40)}, chunk={"ci": 10, "thorough": 10}, arm_key=_arm_key,
                lockstep=True)
