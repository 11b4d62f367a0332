r"""NPFL-RL settings: :class:`NPFLConfig` (every choice the seed leaves open is a field, C-npfl-1..9) and the
single-BLAS-thread decorator of the solvers.

References
----------
.. [1] seed 004_180cd372987d137b.txt, thesis Chapter 6, eqs. (6.5)-(6.14), Algorithm 6, lines 1637-1722;
   Publication 7, eqs. (5)-(14), Algorithm 1, lines 3489-3562.
.. [2] docs/papers/npfl_rl.md: the algorithm as fedcheck runs it, errata D1-D4 (docs/papers/npfl_rl.md#erratum-d1 to
       #erratum-d4) and errata D11-D14 (docs/papers/npfl_rl.md#erratum-d11 to #erratum-d14), readings C-npfl-1..9.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

from threadpoolctl import threadpool_limits

from reference_impl.npfl_rl.data import CONVENTIONS

__all__ = ["ALGORITHMS", "DIAGONALS", "DUAL_SIGNS", "POLICIES", "TIMINGS", "NPFLConfig", "one_blas_thread"]

ALGORITHMS = ("npfl", "nfl")
POLICIES = ("fixed", "dpg", "sac")
DUAL_SIGNS = ("corrected", "printed")
DIAGONALS = ("corrected", "printed")
TIMINGS = ("literal", "online")


def one_blas_thread(fn):
    """Run ``fn`` with one BLAS thread: the matrices are small (d x d per client), threads only contend."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return fn(*args, **kwargs)
    return wrapper


def _real(name, value, *, lo=None, lo_open=False, hi=None) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite real, got {value!r}")
    v = float(value)
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise ValueError(f"{name} must be {'>' if lo_open else '>='} {lo}, got {value!r}")
    if hi is not None and v > hi:
        raise ValueError(f"{name} must be <= {hi}, got {value!r}")
    return v


def _choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


@dataclass(frozen=True, kw_only=True)
class NPFLConfig:
    r"""Algorithm settings; every choice the seed leaves open is a field (docs/papers/npfl_rl.md, C-npfl-1..9).

    Attributes
    ----------
    algorithm : {"npfl", "nfl"}
        NPFL(-RL) or the single-model NFL baseline (Ch3 ADMM over all neighbours, :math:`\lambda/K`).
    rho : float
        ADMM penalty :math:`\rho > 0` (3 in the experiments).
    policy : {"fixed", "dpg", "sac"}
        Fixed :math:`\tau` (NPFL(:math:`\tau`)) or an RL controller.
    tau0 : float
        :math:`\tau` of fixed NPFL, or :math:`\tau_k^{(0)} = \tau_k^{(1)}` of the controllers.
    delta : float
        Policy rate :math:`\delta_{DPG}` or :math:`\delta_{SAC}`.
    nu : float
        SAC exploration width :math:`\nu_{SAC}`.
    epochs : int
        :math:`E_{BRL}` inner policy steps per iteration (1 = RL, 3 = BRL).
    projection : bool
        Project :math:`\tau` onto :math:`[0, \tau_{\max}]` after every inner step (option :math:`\Pi`,
        erratum D11 (docs/papers/npfl_rl.md#erratum-d11)). ``False`` is the literal, unprojected mode: breaches of
        well-posedness are counted (K10, docs/papers/npfl_rl.md#k10).
    tau_max : float
        Upper end of :math:`\Pi` (default 1).
    clip_candidates : bool
        Also project the SAC candidate :math:`a = \Pi(t+\alpha)` (the step then uses :math:`a - t`); keeps every
        evaluation well posed (the corrected K10).
    timing : {"literal", "online"}
        :math:`\tau^{(n)}` from the cached map :math:`P^{(n-1)}` (literal,
        erratum D13 (docs/papers/npfl_rl.md#erratum-d13)) or from :math:`P^{(n)}`.
    convention : {"E0", "E1"}
        Empty :math:`N_k^{(r)}`: drop the cluster keeping :math:`1/(Q-1)`
        (E0, docs/papers/npfl_rl.md#choice-empty-cluster) or renormalise
        (E1, docs/papers/npfl_rl.md#choice-empty-cluster).
    dual_sign : {"corrected", "printed"}
        ``"printed"`` is the ERRATUM MODE of (6.6) (:math:`w_l - w_k`, erratum D1 (docs/papers/npfl_rl.md#erratum-d1)):
        it diverges; for regression tests only.
    diagonal : {"corrected", "printed"}
        :math:`\rho|N_k\cap C_{(q)}|` (corrected) or the printed :math:`\rho|N_k|` of (6.11) (ERRATUM MODE,
        erratum D3 (docs/papers/npfl_rl.md#erratum-d3)).
    """

    algorithm: str = "npfl"
    rho: float = 3.0
    policy: str = "fixed"
    tau0: float = 0.05
    delta: float = 0.001
    nu: float = 0.05
    epochs: int = 1
    projection: bool = True
    tau_max: float = 1.0
    clip_candidates: bool = False
    timing: str = "literal"
    convention: str = "E0"
    dual_sign: str = "corrected"
    diagonal: str = "corrected"

    def __post_init__(self) -> None:
        _choice("algorithm", self.algorithm, ALGORITHMS)
        _choice("policy", self.policy, POLICIES)
        _choice("timing", self.timing, TIMINGS)
        _choice("convention", self.convention, CONVENTIONS)
        _choice("dual_sign", self.dual_sign, DUAL_SIGNS)
        _choice("diagonal", self.diagonal, DIAGONALS)
        object.__setattr__(self, "rho", _real("rho", self.rho, lo=0.0, lo_open=True))
        object.__setattr__(self, "tau0", _real("tau0", self.tau0, lo=0.0))
        object.__setattr__(self, "delta", _real("delta", self.delta, lo=0.0))
        object.__setattr__(self, "nu", _real("nu", self.nu, lo=0.0))
        object.__setattr__(self, "tau_max", _real("tau_max", self.tau_max, lo=0.0, lo_open=True))
        if isinstance(self.epochs, bool) or not isinstance(self.epochs, numbers.Integral) or self.epochs < 1:
            raise ValueError(f"epochs must be an integer >= 1, got {self.epochs!r}")
        for flag in ("projection", "clip_candidates"):
            if not isinstance(getattr(self, flag), bool):
                raise ValueError(f"{flag} must be true or false, got {getattr(self, flag)!r}")
        if self.projection and self.tau0 > self.tau_max:
            raise ValueError(f"tau0 must be <= tau_max = {self.tau_max} with projection, got {self.tau0!r}")
        if self.algorithm == "nfl" and self.policy != "fixed":
            raise ValueError(f"policy must be 'fixed' for algorithm 'nfl' (no inter-cluster term), got {self.policy!r}")

    @property
    def label(self) -> str:
        if self.algorithm == "nfl":
            return "NFL"
        if self.policy == "fixed":
            return f"NPFL tau={self.tau0:g}"
        return f"NPFL-{'BRL' if self.epochs > 1 else 'RL'} ({self.policy.upper()})"
