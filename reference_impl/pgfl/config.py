"""PGFL's algorithm settings and state: :class:`PGFLConfig` (every detail the paper leaves open a validated field), the
state arrays and the run record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from theory.pgfl.problem import PGFLProblem

__all__ = ["PGFLConfig", "PGFLRun", "PGFLState", "SERVER_UPDATES", "initial_state"]


#: Server updates of :class:`PGFLConfig` (docs/papers/pgfl.md#variants: multi-step (8)-(10), and
#: V0 (docs/papers/pgfl.md#single-step) as printed / corrected).
SERVER_UPDATES = ("multi_step", "single_step_printed", "single_step_corrected")


@dataclass(frozen=True, kw_only=True)
class PGFLConfig:
    """Algorithm, schedules and every unspecified detail of docs/papers/pgfl.md#choices, validated.

    Attributes
    ----------
    rho : float
        ADMM penalty rho > 0.
    taus : tuple of float
        tau^(1), tau^(2), ... in [0, 1]; the last value repeats when the run is longer. Use
        :meth:`constant_tau` or :meth:`geometric_tau` (V2 (docs/papers/pgfl.md#variants): tau_0 beta^n) to build it.
    algorithm : {"alg1", "alg2"}
        Algorithm 1 (non-private) or Algorithm 2 (privacy-preserving, noisy uploads).
    dual_ref : {"local_aggregate", "server_model"}
        Algorithm 2's dual update reference (literal reading: ``local_aggregate``).
    phi0 : float or None
        Initial zCDP parameter phi^(0) > 0 (Algorithm 2); ``None`` means no noise.
    zeta : float
        Noise variance decay in (0, 1].
    C : float
        Gradient bound C_k > 0 used for the sensitivity 2C/(rho D_k) (ridge has none: nominal).
    noise_convention : {"I", "II"}
        "I": release n uses zeta^n delta2(0); "II": zeta^(n-1) delta2(0).
    scheduled : int or None
        Clients each server samples per iteration (V4, docs/papers/pgfl.md#choice-scheduling), or ``None`` for full
        participation.
    aggregation : {"cache", "fresh"}
        With scheduling: average the last message of every client that has sent (cache) or only this
        iteration's (fresh).
    server_update : {"multi_step", "single_step_printed", "single_step_corrected"}
        Server update. ``multi_step`` (default): eqs. (8)-(10), Algorithms 1-2. The single-step variant V0
        (docs/papers/pgfl.md#variants; seed 000 eqs. (6)-(7), seed 004 eqs. (5.6)-(5.7)) replaces (9)-(10) by a
        decentralised-ADMM step with server duals psi: ``single_step_printed`` as printed, ``single_step_corrected``
        with the two sign corrections of docs/papers/pgfl.md#variants (``+ w_p`` in the consensus term, psi accumulating
        ``w_s - w_p``); see
        :func:`single_step_server_update`. V0 needs full participation (``scheduled=None``) and every group
        C_{s,(q)} non-empty.
    """

    rho: float
    taus: tuple = (0.0,)
    algorithm: str = "alg1"
    dual_ref: str = "local_aggregate"
    phi0: float | None = None
    zeta: float = 1.0
    C: float = 1.0
    noise_convention: str = "I"
    scheduled: int | None = None
    aggregation: str = "cache"
    server_update: str = "multi_step"

    def __post_init__(self) -> None:
        if not (isinstance(self.rho, (int, float)) and math.isfinite(self.rho) and self.rho > 0):
            raise ValueError(f"rho must be a finite real in (0, inf), got {self.rho!r}")
        taus = tuple(float(t) for t in np.atleast_1d(np.asarray(self.taus, dtype=np.float64)))
        if not taus or any(not (0.0 <= t <= 1.0) for t in taus):
            raise ValueError(f"taus must be a non-empty sequence in [0, 1], got {self.taus!r}")
        object.__setattr__(self, "taus", taus)
        if self.algorithm not in ("alg1", "alg2"):
            raise ValueError(f"algorithm must be 'alg1' or 'alg2', got {self.algorithm!r}")
        if self.dual_ref not in ("local_aggregate", "server_model"):
            raise ValueError(f"dual_ref must be 'local_aggregate' or 'server_model', got {self.dual_ref!r}")
        if self.phi0 is not None:
            if self.algorithm != "alg2":
                raise ValueError("phi0 (privacy noise) requires algorithm='alg2'")
            if not (math.isfinite(self.phi0) and self.phi0 > 0):
                raise ValueError(f"phi0 must be a finite real in (0, inf) or None, got {self.phi0!r}")
        if not (0.0 < self.zeta <= 1.0):
            raise ValueError(f"zeta must be in (0, 1], got {self.zeta!r}")
        if not (math.isfinite(self.C) and self.C > 0):
            raise ValueError(f"C must be a finite real in (0, inf), got {self.C!r}")
        if self.noise_convention not in ("I", "II"):
            raise ValueError(f"noise_convention must be 'I' or 'II', got {self.noise_convention!r}")
        if self.scheduled is not None and (isinstance(self.scheduled, bool) or not isinstance(self.scheduled, int)
                                           or self.scheduled < 1):
            raise ValueError(f"scheduled must be an integer >= 1 or None, got {self.scheduled!r}")
        if self.aggregation not in ("cache", "fresh"):
            raise ValueError(f"aggregation must be 'cache' or 'fresh', got {self.aggregation!r}")
        if self.server_update not in SERVER_UPDATES:
            raise ValueError(f"server_update must be one of {SERVER_UPDATES}, got {self.server_update!r}")
        if self.server_update != "multi_step" and self.scheduled is not None:
            raise ValueError(f"server_update = {self.server_update!r} (V0, docs/papers/pgfl.md#single-step) needs full "
                             f"participation: scheduled must be None, got {self.scheduled!r}")

    @staticmethod
    def constant_tau(tau: float) -> tuple:
        return (float(tau),)

    @staticmethod
    def geometric_tau(tau0: float, beta: float, iterations: int) -> tuple:
        """V2 (docs/papers/pgfl.md#variants): tau^(n) = tau_0 beta^n, n = 1..iterations."""
        return tuple(float(tau0) * float(beta) ** np.arange(1, iterations + 1))

    def tau(self, n: int) -> float:
        """tau^(n) for iteration n >= 1."""
        return self.taus[min(n, len(self.taus)) - 1]

    def noise_variance(self, samples: np.ndarray, n: int) -> np.ndarray:
        """delta_k^{2(n)} per client (zero without privacy): Delta_k^2/(2 phi0) zeta^n (convention I)."""
        if self.phi0 is None:
            return np.zeros(samples.shape)
        sensitivity = 2.0 * self.C / (self.rho * samples)
        power = n if self.noise_convention == "I" else n - 1
        return sensitivity**2 / (2.0 * self.phi0) * self.zeta**power


@dataclass(frozen=True, kw_only=True)
class PGFLState:
    """Iterates of all runs: clients (R, K, d), duals (R, K, d), server models (R, S, Q, d), caches."""

    w_clients: np.ndarray
    phi: np.ndarray
    w_servers: np.ndarray
    w_hat: np.ndarray
    w_tilde_servers: np.ndarray
    msg_w: np.ndarray
    msg_phi: np.ndarray
    sent: np.ndarray
    psi: np.ndarray | None = None   # V0 (docs/papers/pgfl.md#single-step) server duals (R, S, Q, d); None until a
    # single-step update runs


@dataclass(frozen=True, kw_only=True)
class PGFLRun:
    """Result of :func:`run_pgfl`: final state, the observations and the release pattern."""

    state: PGFLState
    observations: np.ndarray | None
    releases: np.ndarray = field(repr=False)  # (iterations, R, K) bool: who uploaded at each iteration


def initial_state(problem: PGFLProblem, runs: int) -> PGFLState:
    R, K, S, Q, d = runs, problem.K, problem.S, problem.n_clusters, problem.d
    z = np.zeros
    return PGFLState(w_clients=z((R, K, d)), phi=z((R, K, d)), w_servers=z((R, S, Q, d)), w_hat=z((R, S, Q, d)),
                     w_tilde_servers=z((R, S, Q, d)), msg_w=z((R, K, d)), msg_phi=z((R, K, d)),
                     sent=np.zeros((R, K), dtype=bool))
