r"""Step-size and privacy (noise) schedules of zCDP-NFL and the parameter record :class:`NFLConfig`.

References
----------
.. [1] seed 004_180cd372987d137b.txt, Publication 2, Lemma I, Theorem I, App. C, lines 2014-2043, 2279.
.. [2] docs/papers/zcdp_nfl.md (step sizes, the noise schedules S1 and S2).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from reference_impl.zcdp_nfl.problem import NFLProblem
from theory._validate import real_scalar

__all__ = ["NOISE_SCHEDULES", "STEP_KINDS", "NFLConfig", "PrivacySchedule", "StepSchedule"]

STEP_KINDS = ("constant", "inv_sqrt", "inv", "inv_square", "growing")
NOISE_SCHEDULES = ("none", "S1", "S2")


@dataclass(frozen=True, kw_only=True)
class StepSchedule:
    r"""Step sizes :math:`\eta^{(n)}`, :math:`n \ge 1` the same for every agent.

    ``constant``: :math:`\eta_0`; ``inv_sqrt``: :math:`\eta_0/\sqrt n`; ``inv``: :math:`\eta_0/n`;
    ``inv_square``: :math:`\eta_0/n^2` (Assumption 3 holds, :math:`\sum\eta < \infty`: the iterates freeze);
    ``growing``: :math:`\eta_0 n^2` (Assumption 4 holds, Assumption 3 fails).
    """

    kind: str = "constant"
    eta0: float = 0.5

    def __post_init__(self) -> None:
        if self.kind not in STEP_KINDS:
            raise ValueError(f"kind must be one of {STEP_KINDS}, got {self.kind!r}")
        object.__setattr__(self, "eta0", real_scalar("eta0", self.eta0, "(0, inf)"))

    @property
    def exponent(self) -> float:
        """:math:`p` in :math:`\\eta^{(n)} = \\eta_0 n^p`."""
        return {"constant": 0.0, "inv_sqrt": -0.5, "inv": -1.0, "inv_square": -2.0, "growing": 2.0}[self.kind]

    def etas(self, T: int) -> np.ndarray:
        """:math:`\\eta^{(1)}, \\dots, \\eta^{(T)}` as an array of shape (T,)."""
        n = np.arange(1, T + 1, dtype=np.float64)
        return self.eta0 * n**self.exponent


@dataclass(frozen=True, kw_only=True)
class PrivacySchedule:
    r"""Noise variances :math:`\sigma_k^2(n)` and the zCDP budgets they give (Theorem I).

    ``none``: no noise. ``S2`` (privacy-first, the Corollary's schedule, the default):
    :math:`\phi_k^{(n)} = \phi^{(1)}\tau^{-(n-1)}`, :math:`\sigma_k^2(n) = \Delta_k(n)^2/(2\phi_k^{(n)})`.
    ``S1`` (variance-first, Theorem II's constant): :math:`\sigma_k^2(n) = \sigma^2(0)\tau^n` and
    :math:`\phi_k^{(n)} = \Delta_k(n)^2/(2\sigma_k^2(n))`. :math:`\Delta_k(n) = 2c_1/(M(2\rho d_k + 1/\eta^{(n)}))`
    (Lemma I). ``c1`` is the per-sample subgradient bound used for the calibration; the privacy
    guarantee holds only if the problem's gradients are bounded by it (:attr:`NFLProblem.gradient_bound`).
    """

    kind: str = "S2"
    phi1: float = 1e-3
    tau: float = 0.99
    sigma2_0: float = 0.0
    c1: float = 1.0
    delta: float = 1e-5

    def __post_init__(self) -> None:
        if self.kind not in NOISE_SCHEDULES:
            raise ValueError(f"kind must be one of {NOISE_SCHEDULES}, got {self.kind!r}")
        object.__setattr__(self, "phi1", real_scalar("phi1", self.phi1, "(0, inf)"))
        object.__setattr__(self, "tau", real_scalar("tau", self.tau, "(0, 1]"))
        object.__setattr__(self, "sigma2_0", real_scalar("sigma2_0", self.sigma2_0, "[0, inf)"))
        if self.kind == "S1" and self.sigma2_0 == 0.0:
            raise ValueError("sigma2_0 must be > 0 for kind 'S1', got 0.0")
        object.__setattr__(self, "c1", real_scalar("c1", self.c1, "(0, inf)"))
        object.__setattr__(self, "delta", real_scalar("delta", self.delta, "(0, 1)"))

    def sensitivities(self, problem: NFLProblem, rho: float, etas: np.ndarray) -> np.ndarray:
        """Lemma I: :math:`\\Delta_k(n)`, shape (T, K)."""
        return 2.0 * self.c1 / (problem.M * (2.0 * rho * problem.degree[None, :] + 1.0 / etas[:, None]))

    def variances(self, problem: NFLProblem, rho: float, etas: np.ndarray) -> np.ndarray:
        """:math:`\\sigma_k^2(n)`, shape (T, K)."""
        T = etas.size
        if self.kind == "none":
            return np.zeros((T, problem.K))
        n = np.arange(1, T + 1, dtype=np.float64)[:, None]
        if self.kind == "S1":
            return np.broadcast_to(self.sigma2_0 * self.tau**n, (T, problem.K)).copy()
        delta = self.sensitivities(problem, rho, etas)
        return delta**2 * self.tau ** (n - 1.0) / (2.0 * self.phi1)

    def budgets(self, problem: NFLProblem, rho: float, etas: np.ndarray) -> np.ndarray:
        r""":math:`\phi_k^{(n)} = \Delta_k(n)^2/(2\sigma_k^2(n))`, shape (T, K) (inf without noise)."""
        var = self.variances(problem, rho, etas)
        with np.errstate(divide="ignore"):
            return np.where(var > 0, self.sensitivities(problem, rho, etas) ** 2 / (2.0 * np.where(var > 0, var, 1.0)),
                            np.inf)


@dataclass(frozen=True, kw_only=True)
class NFLConfig:
    """zCDP-NFL parameters: ADMM penalty, step schedule and privacy schedule."""

    rho: float = 1.0
    step: StepSchedule = field(default_factory=StepSchedule)
    privacy: PrivacySchedule = field(default_factory=lambda: PrivacySchedule(kind="none"))

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", real_scalar("rho", self.rho, "(0, inf)"))
        if not isinstance(self.step, StepSchedule):
            raise TypeError(f"step must be a StepSchedule, got {self.step!r}")
        if not isinstance(self.privacy, PrivacySchedule):
            raise TypeError(f"privacy must be a PrivacySchedule, got {self.privacy!r}")


