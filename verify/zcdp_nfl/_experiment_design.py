r"""The design of zCDP-NFL's experiments (thesis Section 3.4) for :mod:`verify.harness`.

Replicate :math:`i` draws one instance of docs/papers/zcdp_nfl.md#experiments setting (connected Erdős-Rényi graph with
mean degree 3, rows in the unit ball, :math:`w^o \sim N(0, I_P)`, :math:`\sigma_v = 0.1`, :math:`\lambda = 1`; the three
objectives on the same data) and one noise seed that every arm uses, so all arms see the same data and the same
standard-normal draws (common random numbers). Squared losses are clipped per sample at :math:`c_1 =
1` (docs/papers/zcdp_nfl.md#experiments default; Assumption 1 fails without it,
erratum E7 (docs/papers/zcdp_nfl.md#erratum-e7)). Noise: S2 with :math:`\tau = 0.99`, :math:`\delta = 10^{-5}`.

Arms (:class:`Arm`): zCDP-NFL with the time-varying step :math:`\eta_0/\sqrt n` (the seed attributes its edge to
it) and the three baselines as reconstructed by docs/papers/zcdp_nfl.md#choice-baselines
(:mod:`reference_impl.zcdp_nfl.baselines`): (ε,δ)DP-NFL at zCDP-NFL's accounted :math:`(\varepsilon, \delta)`;
zCDP-grad-NFL with the constant step matching zCDP-NFL's noise-free NE at :math:`n = 10` (the seed: "tuned to observe
identical initial convergence speeds"); P-ADMM-like with the constant step :math:`\eta_0` (the same first step). A grid
point fixes the choices the seed leaves open: ``rho``, ``eta0`` and, for (ε,δ)DP-NFL, the ``split`` of its budget over
the rounds and the ``composition`` theorem that adds the rounds' budgets up.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from reference_impl.zcdp_nfl import (
    EpsDeltaBudget,
    NFLConfig,
    PrivacySchedule,
    StepSchedule,
    accounted_privacy,
    centralized_optimum,
    matched_gradient_step,
    p_admm_config,
    run_eps_delta_dp_nfl,
    run_p_admm,
    run_zcdp_grad_nfl,
    run_zcdp_nfl,
    shared_noise_ne_curves,
    synthetic_problem,
)
from theory._validate import positive_int
from theory.privacy import zcdp_to_approx_dp_bun_steinke, zcdp_total_geometric
from verify.harness import Design, replicate_seed
from verify.tolerance import CLARABEL_TOL

__all__ = ["ALGORITHMS", "DESIGN", "SCALES", "Arm", "Scale", "arm_epsilon", "replicate_instance", "simulate_nfl"]

#: Shared seed key: every claim sees the same replicates (as the paper's figures do).
EXPERIMENT_KEY = "zcdp_nfl.experiments"
ALGORITHMS = ("zcdp_nfl", "eps_delta_dp_nfl", "zcdp_grad_nfl", "p_admm")
#: Privacy defaults (docs/papers/zcdp_nfl.md#experiments): S2 decay, delta, gradient bound (clipping threshold of the
#: squared losses).
TAU, DELTA, C1 = 0.99, 1e-5, 1.0
#: Defaults of the unreported choices (docs/papers/zcdp_nfl.md#experiments suggested defaults: rho = 1, eta0 = 0.5;
#: dynamic (eps, delta) split, basic composition).
DEFAULT_CHOICES = {"rho": 1.0, "eta0": 0.5, "split": "dynamic", "composition": "basic"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scale:
    """Instance and horizon of one profile: K agents, P features, M samples each, T iterations, the early read-out."""

    K: int
    P: int
    M: int
    T: int
    early: int = 10
    mean_degree: float = 3.0

    def __post_init__(self) -> None:
        for name in ("K", "P", "M", "T", "early"):
            positive_int(name, getattr(self, name))
        if self.early > self.T:
            raise ValueError(f"early must be in [1, T = {self.T}], got {self.early}")

    def iteration(self, at: str) -> int:
        roles = {"early": self.early, "final": self.T}
        if at not in roles:
            raise ValueError(f"at must be one of {tuple(roles)}, got {at!r}")
        return roles[at]


SCALES = {"ci": Scale(K=20, P=8, M=50, T=200), "thorough": Scale(K=50, P=8, M=50, T=200)}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Arm:
    """One curve: an algorithm on an objective at a privacy budget :math:`\\phi^{(1)}` (the label is not identity)."""

    label: str
    algorithm: str
    objective: str
    phi1: float = 1e-3

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {self.algorithm!r}")
        if not (math.isfinite(self.phi1) and self.phi1 > 0):
            raise ValueError(f"phi1 must be a finite real in (0, inf), got {self.phi1!r}")

    @property
    def key(self) -> tuple:
        return (self.algorithm, self.objective, self.phi1)


def _replicate_seeds(root_seed: int, replicate: int) -> tuple[int, int]:
    """(data seed, noise seed) of replicate ``replicate``: streams 0 and 1 of :func:`verify.harness.replicate_seed`."""
    data, noise = (replicate_seed(EXPERIMENT_KEY, root_seed, replicate, stream=s) for s in (0, 1))
    return int(data.generate_state(1)[0]), int(noise.generate_state(1)[0])


@functools.lru_cache(maxsize=512)
def replicate_instance(objective: str, scale: Scale, root_seed: int, replicate: int):
    """(problem, certified w_c) of replicate ``replicate`` (the same data for every objective)."""
    data_seed, _ = _replicate_seeds(root_seed, replicate)
    problem = synthetic_problem(np.random.default_rng(data_seed), K=scale.K, P=scale.P, M=scale.M,
                                mean_degree=scale.mean_degree, objective=objective,
                                clip=None if objective == "lad" else C1)
    return problem, centralized_optimum(problem, tol=CLARABEL_TOL).w_c


def _config(choices: dict, phi1: float) -> NFLConfig:
    return NFLConfig(rho=choices["rho"], step=StepSchedule(kind="inv_sqrt", eta0=choices["eta0"]),
                     privacy=PrivacySchedule(kind="S2", phi1=phi1, tau=TAU, c1=C1, delta=DELTA))


@functools.lru_cache(maxsize=512)
def _matched_mu(objective: str, scale: Scale, root_seed: int, replicate: int, rho: float, eta0: float) -> float:
    problem, w_c = replicate_instance(objective, scale, root_seed, replicate)
    return matched_gradient_step(problem, _config({"rho": rho, "eta0": eta0}, 1e-3), w_c, at=scale.early)


def arm_epsilon(phi1: float, scale: Scale) -> float:
    """The accounted total epsilon of budget ``phi1`` after T rounds (Corollary, Bun-Steinke; S2 budgets do not depend
    on the instance, and every algorithm of an experiment is matched to it)."""
    return float(zcdp_to_approx_dp_bun_steinke(zcdp_total_geometric(phi1, 1.0 / TAU, scale.T), DELTA))


def _run(arm: Arm, choices: dict, scale: Scale, root_seed: int, replicate: int) -> np.ndarray:
    problem, w_c = replicate_instance(arm.objective, scale, root_seed, replicate)
    rng = np.random.default_rng(_replicate_seeds(root_seed, replicate)[1])
    config = _config(choices, arm.phi1)
    if arm.algorithm == "zcdp_nfl":
        run = run_zcdp_nfl(problem, config, scale.T, rng, w_c=w_c)
    elif arm.algorithm == "p_admm":
        run = run_p_admm(problem, config, scale.T, rng, w_c=w_c)
    elif arm.algorithm == "eps_delta_dp_nfl":
        epsilon = accounted_privacy(problem, config, scale.T)[1]
        budget = EpsDeltaBudget(epsilon=epsilon, delta=DELTA, split=choices["split"],
                                composition=choices["composition"], tau=TAU, c1=C1)
        run = run_eps_delta_dp_nfl(problem, config.rho, config.step, budget, scale.T, rng, w_c=w_c)
    else:
        mu = _matched_mu(arm.objective, scale, root_seed, replicate, choices["rho"], choices["eta0"])
        run = run_zcdp_grad_nfl(problem, mu, config.privacy, scale.T, rng, w_c=w_c)
    if run.diverged:
        raise ArithmeticError(f"{arm.label} diverged on replicate {replicate} at {choices}")
    return run.ne[0]


def _run_budgets(arms, choices: dict, scale: Scale, root_seed: int, replicate: int) -> list[np.ndarray]:
    """The NE curves of zCDP-NFL or P-ADMM-like arms of one objective that differ in their budget only, on the
    replicate's one noise stream at once (:func:`reference_impl.zcdp_nfl.shared_noise_ne_curves`: each curve is
    the arm's own run, :func:`_run`, bit for bit)."""
    problem, w_c = replicate_instance(arms[0].objective, scale, root_seed, replicate)
    rng = np.random.default_rng(_replicate_seeds(root_seed, replicate)[1])
    configs = [_config(choices, arm.phi1) for arm in arms]
    if arms[0].algorithm == "p_admm":
        configs = [p_admm_config(config) for config in configs]
    ne, diverged = shared_noise_ne_curves(problem, configs, scale.T, rng, w_c)
    for arm, bad in zip(arms, diverged, strict=True):
        if bad:
            raise ArithmeticError(f"{arm.label} diverged on replicate {replicate} at {choices}")
    return list(ne)


def simulate_nfl(arms, point, scale: Scale, root_seed: int, replicates) -> list[np.ndarray]:
    """NE curves (len(replicates), T + 1) of every arm at grid point ``point`` (the design's ``simulate``).

    zCDP-NFL (or P-ADMM-like) arms of one objective at several budgets (the trade-off claims) run together on the
    replicate's noise stream (:func:`_run_budgets`); every other arm runs alone (:func:`_run`)."""
    choices = {**DEFAULT_CHOICES, **dict(point)}
    groups: dict[tuple, list[int]] = {}
    for index, arm in enumerate(arms):
        key = (arm.algorithm, arm.objective) if arm.algorithm in ("zcdp_nfl", "p_admm") else ("alone", index)
        groups.setdefault(key, []).append(index)
    out: list[list] = [[] for _ in arms]
    for i in replicates:
        for members in groups.values():
            if len(members) == 1:
                out[members[0]].append(_run(arms[members[0]], choices, scale, root_seed, i))
                continue
            for index, curve in zip(members, _run_budgets([arms[j] for j in members], choices, scale, root_seed, i),
                                    strict=True):
                out[index].append(curve)
    return [np.stack(rows) for rows in out]


def _arm_key(arm: Arm, point, scale, root_seed):
    """What an arm depends on: rho and eta0 always, the split and composition only for (eps, delta)DP-NFL."""
    choices = {**DEFAULT_CHOICES, **dict(point)}
    used = ("rho", "eta0", "split", "composition") if arm.algorithm == "eps_delta_dp_nfl" else ("rho", "eta0")
    return (arm.key, tuple((k, choices[k]) for k in used))


def _readout(name: str, scale: Scale, curves: np.ndarray) -> np.ndarray:
    """NE in dB at the iteration that plays the role ``name`` (early: n = 10; final: n = T = 200)."""
    return 10.0 * np.log10(curves[:, scale.iteration(name)])


#: Replicates: 10 then 20 at ci, 20 then 40 at the paper's size.
DESIGN = Design(namespace=EXPERIMENT_KEY, simulate=simulate_nfl, readout=_readout, scales=SCALES,
                stages={"ci": (10, 20), "thorough": (20, 40)}, chunk={"ci": 10, "thorough": 10}, arm_key=_arm_key)
