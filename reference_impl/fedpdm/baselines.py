r"""DP baselines FedAvg-DP, FedProx-DP and SCAFFOLD-DP as docs/papers/fedpdm.md#choice-baselines reconstructs them, and
the experiment arms.

These are **reconstructions** (choice (docs/papers/fedpdm.md#choices): the seed names the baselines and gives no
details): local objective
:math:`f_i + \gamma\lVert\cdot\rVert_1` by subgradient, the same client sampling, batches and noise multiplier
as FedPDM-DP, sensitivities by the argument of docs/papers/fedpdm.md#theorem-1. :func:`run_arm` runs one arm (FedPDM-DP
or a baseline) on one replicate seed and returns its loss and accuracy curves.

References
----------
.. [1] seed 001_322f61f9958f64f9.txt, Section V (lines 265, 270); docs/papers/fedpdm.md#choice-baselines.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from reference_impl.fedpdm._validate import check_choice, check_int, check_real
from reference_impl.fedpdm.accounting import participation_schedule, run_noise_multiplier
from reference_impl.fedpdm.algorithm import FedPDMRun, FedPDMState, run_fedpdm
from reference_impl.fedpdm.config import FedPDMConfig
from reference_impl.fedpdm.objective import accuracy, batch_gradient, global_objective
from reference_impl.fedpdm.problem import FedPDMProblem, certified_G

__all__ = ["ARMS", "ArmCurve", "BaselineConfig", "run_arm", "run_baseline"]

#: One experiment arm: FedPDM-DP or a reconstructed baseline (docs/papers/fedpdm.md#choice-baselines).
ARMS = ("fedpdm", "fedavg", "fedprox", "scaffold")


@dataclass(frozen=True, kw_only=True)
class BaselineConfig:
    r"""A reconstructed DP baseline (docs/papers/fedpdm.md#choice-baselines; the seed gives no details).

    Attributes
    ----------
    name : {"fedavg", "fedprox", "scaffold"}
    local_steps : int or None
        :math:`E` local SGD steps (default: the FedPDM config's ``Q_max``).
    eta_cap : float
        The FedPDM :math:`\eta^t` schedule capped at ``eta_cap`` "for stability".
    mu : float
        FedProx proximal weight (docs/papers/fedpdm.md: sweep {0.01, 0.1, 1}).
    """

    name: str
    local_steps: int | None = None
    eta_cap: float = 0.1
    mu: float = 0.1

    def __post_init__(self) -> None:
        check_choice("name", self.name, ("fedavg", "fedprox", "scaffold"))
        if self.local_steps is not None:
            check_int("local_steps", self.local_steps, 1)
        check_real("eta_cap", self.eta_cap, 0.0, lower_open=True)
        check_real("mu", self.mu, 0.0)


def _baseline_sensitivity(baseline: BaselineConfig, eta: float, E: int, G: float) -> float:
    if baseline.name == "fedprox":
        a = abs(1.0 - eta * baseline.mu)
        try:
            geometric = float(E) if a == 1.0 else (1.0 - a**E) / (1.0 - a)
        except OverflowError:
            geometric = math.inf
        if not math.isfinite(2.0 * eta * G * geometric):
            raise ValueError(f"mu: FedProx's local steps scale a record's effect by |1 - eta mu| = {a:.3g} per step "
                             f"(eta = {eta:.3g}); over E = {E} steps its sensitivity overflows the double range (keep "
                             f"eta mu below 2, where the proximal step contracts)")
        return 2.0 * eta * G * geometric
    return 2.0 * eta * G * E  # FedAvg and SCAFFOLD's model delta


def run_baseline(problem: FedPDMProblem, config: FedPDMConfig, baseline: BaselineConfig, rng: np.random.Generator, *,
                 runs: int = 1, observers: dict[str, Callable] | None = None) -> FedPDMRun:
    r"""FedAvg-DP, FedProx-DP or SCAFFOLD-DP (reconstructions of docs/papers/fedpdm.md#choice-baselines), same sampling,
    batches and noise multiplier.

    Local step on :math:`f_i + \gamma\lVert\cdot\rVert_1` by subgradient:
    FedAvg :math:`x \leftarrow x - \eta(g + \gamma\,\mathrm{sign}\,x)`; FedProx adds :math:`\mu(x - x_0)`;
    SCAFFOLD adds :math:`-c_i + c`, with :math:`c_i^+ = c_i - c + (x_0 - x)/(E\eta)`. Uploads with Gaussian noise
    :math:`z\,s`: the local model (FedAvg, FedProx; :math:`s = 2\eta GE`, resp. the FedProx geometric sum),
    :math:`\Delta x` (:math:`s = 2\eta GE`) and :math:`\Delta c_i` (:math:`s = 2G`) for SCAFFOLD (two releases per
    round: its RDP per round is twice FedPDM's at the same z). Server: average (global step 1); SCAFFOLD
    :math:`c \leftarrow c + \frac{|S_t|}{N}\overline{\Delta c}`.
    """
    config.validate_for(problem)
    E = baseline.local_steps or config.Q_max
    if config.batch_rule == "disjoint" and E * config.batch_size > problem.n:
        raise ValueError(f"local_steps * batch_size must be <= |D_i| = {problem.n}, got {E} * {config.batch_size}")
    G = certified_G(problem) if config.G is None else config.G
    participation = participation_schedule(problem.N, config.K, config.rounds, rng, runs=runs,
                                           first_round_all=config.first_round_all)
    z = run_noise_multiplier(problem, config, participation)
    R, N, d, b, n = runs, problem.N, problem.d, config.batch_size, problem.n
    x0 = (np.zeros((R, d)) if config.init == "zeros" else config.init_scale * rng.standard_normal((R, d)))
    c_i, c = np.zeros((R, N, d)), np.zeros((R, d))
    observers = observers or {}
    state = FedPDMState(x=np.repeat(x0[:, None], N, axis=1), lam=np.zeros((R, N, d)), x0=x0)
    obs = {name: [np.asarray(fn(state), dtype=np.float64)] for name, fn in observers.items()}
    sigma_all = np.zeros((R, config.rounds, N))
    rows = np.arange(R)[:, None]
    for t in range(config.rounds):
        sampled = participation[:, t]
        k = int(sampled[0].sum())
        clients = np.nonzero(sampled)[1].reshape(R, k)
        eta = min(config.eta(t), baseline.eta_cap)
        base = np.broadcast_to(np.arange(n), (R, k, n))
        if config.batch_rule == "disjoint":
            batches = rng.permuted(base, axis=-1)[..., : E * b].reshape(R, k, E, b)
        else:
            batches = np.stack([rng.permuted(base, axis=-1)[..., :b] for _ in range(E)], axis=2)
        cl = clients[..., None]
        x = np.repeat(x0[:, None, :], k, axis=1)
        ci = c_i[rows, clients]
        for r in range(E):
            idx = batches[:, :, r, :]
            g = (batch_gradient(problem, x, problem.features[cl, idx], problem.labels[cl, idx])
                 + problem.gamma * np.sign(x))
            if baseline.name == "fedprox":
                g = g + baseline.mu * (x - x0[:, None, :])
            elif baseline.name == "scaffold":
                g = g - ci + c[:, None, :]
            x = x - eta * g
        s = _baseline_sensitivity(baseline, eta, E, G)
        sig = z * s if config.noise == "dp" else (config.sigma if config.noise == "fixed" else 0.0)
        sigma_all[rows, t, clients] = sig
        noise = (lambda shape, sig=sig: sig * rng.standard_normal(shape)) if sig > 0 else np.zeros
        if baseline.name == "scaffold":
            ci_new = ci - c[:, None, :] + (x0[:, None, :] - x) / (E * eta)
            dx = (x - x0[:, None, :]) + noise(x.shape)
            sig_c = z * 2.0 * G if config.noise == "dp" else sig
            dc = (ci_new - ci) + (sig_c * rng.standard_normal(x.shape) if sig_c > 0 else 0.0)
            c_i[rows, clients] = ci_new
            x0 = x0 + dx.mean(axis=1)
            c = c + (k / N) * dc.mean(axis=1)
        else:
            x0 = (x + noise(x.shape)).mean(axis=1)
        state = FedPDMState(x=state.x, lam=state.lam, x0=x0)
        for name, fn in observers.items():
            obs[name].append(np.asarray(fn(state), dtype=np.float64))
    return FedPDMRun(state=state, observations={k_: np.array(v) for k_, v in obs.items()}, participation=participation,
                     Q=np.where(participation, E, 0), sigma=sigma_all, z=z, G=G, phi2=np.full(R, np.nan),
                     etas=np.array([min(config.eta(t), baseline.eta_cap) for t in range(config.rounds)]))


@dataclass(frozen=True, kw_only=True)
class ArmCurve:
    """One arm on one replicate: training loss :math:`F(x_0^t)` (24) and test accuracy for t = 0..T."""

    arm: str
    loss: np.ndarray
    accuracy: np.ndarray
    z: float


def run_arm(arm: str, problem: FedPDMProblem, config: FedPDMConfig, seed: int, *,
            baseline: BaselineConfig | None = None) -> ArmCurve:
    """Run one experiment arm (``fedpdm`` or a baseline name) on one replicate seed; the building block
    of docs/papers/fedpdm.md#experiments comparisons (common client sampling given the seed). Returns the loss and
    accuracy curves."""
    check_choice("arm", arm, ARMS)
    rng = np.random.default_rng(seed)
    observers = {"loss": lambda s: global_objective(problem, s.x0), "accuracy": lambda s: accuracy(problem, s.x0)}
    if arm == "fedpdm":
        run = run_fedpdm(problem, config, rng, observers=observers)
    else:
        base = baseline if baseline is not None else BaselineConfig(name=arm)
        if base.name != arm:
            raise ValueError(f"baseline.name must equal arm = {arm!r}, got {base.name!r}")
        run = run_baseline(problem, config, base, rng, observers=observers)
    return ArmCurve(arm=arm, loss=run.observations["loss"][:, 0], accuracy=run.observations["accuracy"][:, 0], z=run.z)
