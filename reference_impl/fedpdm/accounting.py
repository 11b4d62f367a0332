r"""Accounting glue of FedPDM-DP: the client-sampling schedule, the sensitivity (19) table, the noise multiplier
of a run (per-round ε by (18), or a target total on the realised participation count), and the history factors.

References
----------
.. [1] seed 001_322f61f9958f64f9.txt, (18)-(20) (lines 187-211); shared/spec/fedpdm_dp.md 3.5, 4.3, 5.5 and the
   Review notes (realised count :math:`n_i`, history factor without cap).
"""

from __future__ import annotations

import functools

import numpy as np

from reference_impl.fedpdm._validate import check_int, check_real
from reference_impl.fedpdm.config import FedPDMConfig
from reference_impl.fedpdm.problem import FedPDMProblem
from theory.privacy.sensitivity import sensitivity_fedpdm
from theory.privacy.subsampled import noise_multiplier_fedpdm, rdp_poisson_subsampled_gaussian, rdp_to_approx_dp

__all__ = [
    "ORDERS",
    "calibrate_noise_multiplier",
    "history_factor_table",
    "participation_schedule",
    "run_noise_multiplier",
    "sensitivity_table",
]

#: Rényi orders of the in-house accountant used by ``dp_calibration = "target_total_eps"`` (as in
#: verify/fedpdm/theorem2_total.py: 2..64 and a geometric grid up to 16384).
ORDERS = tuple(sorted(set(range(2, 65)) | {int(round(v)) for v in np.geomspace(64, 16384, 33)}))


def sensitivity_table(eta: float, rho: float, Q_max: int, G: float) -> np.ndarray:
    """``table[Q] = s`` of eq. (19) for Q = 0..Q_max (entry 0 unused, 0), via :func:`sensitivity_fedpdm`."""
    return np.array([0.0] + [sensitivity_fedpdm(eta, rho, Q, G) for Q in range(1, Q_max + 1)])


def participation_schedule(N: int, K: int, rounds: int, rng: np.random.Generator, *, runs: int = 1,
                           first_round_all: bool = True) -> np.ndarray:
    """Boolean ``(runs, rounds, N)``: uniform K-subsets without replacement per round; round 0 all clients."""
    keys = rng.random((runs, rounds, N))
    ranks = np.argsort(np.argsort(keys, axis=-1), axis=-1)
    mask = ranks < K
    if first_round_all:
        mask[:, 0, :] = True
    return mask


@functools.lru_cache(maxsize=256)
def calibrate_noise_multiplier(epsilon_total: float, delta: float, q: float, participations: int) -> float:
    r"""Smallest :math:`z` (to relative 1e-9, rounded up) with Poisson-RDP total <= ``epsilon_total`` after
    ``participations`` compositions at rate ``q`` (in-house accountant, standard conversion; spec 4.3(i)).
    Memoised (a pure function of its four scalars; runs that share a schedule share the bisection)."""
    check_real("epsilon_total", epsilon_total, 0.0, lower_open=True)
    check_int("participations", participations, 1)

    def total(z):
        return rdp_to_approx_dp(participations * rdp_poisson_subsampled_gaussian(q, z, ORDERS), ORDERS, delta)[0]

    lo, hi = 1e-2, 1.0
    while total(hi) > epsilon_total:
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            raise ValueError(f"epsilon_total = {epsilon_total!r} needs a noise multiplier above 1e6")
    for _ in range(200):
        if hi - lo <= 1e-9 * hi:
            break
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if total(mid) > epsilon_total else (lo, mid)
    return hi



def history_factor_table(participation: np.ndarray, etas, Q: int, rho: float, local_start: str) -> np.ndarray:
    r"""``(R, T, N)``: the history factor :math:`\kappa_n` of each client's participation at each round (1 elsewhere).

    The schedule is data independent and drawn before the run, so the factors are computed once, per client, from
    its own participation rounds' :math:`\eta^t` and the fixed ``Q`` (a setup loop over clients, not per round).
    With warm start and :math:`(1-\eta\rho)^Q \le -1/3` the factors grow geometrically (computed, not capped); a factor
    beyond the double range raises ValueError.
    """
    from theory.privacy.history import history_factors_fedpdm

    etas = np.asarray(etas, dtype=np.float64)
    out = np.ones(participation.shape)
    for r, i in zip(*np.nonzero(participation.any(axis=1))):
        rounds = np.flatnonzero(participation[r, :, i])
        k = history_factors_fedpdm(etas[rounds], [int(Q)] * rounds.size, rho, local_start=local_start)
        if not np.all(np.isfinite(k)):
            raise ValueError(f"sensitivity_model = 'history': the history factor overflows for this schedule (client {i}, "
                             f"local_start = {local_start!r}; warm start with (1 - eta rho)^Q <= -1/3 grows "
                             f"geometrically, spec Review notes)")
        out[r, rounds, i] = k
    return out


def run_noise_multiplier(problem: FedPDMProblem, config: FedPDMConfig, participation: np.ndarray) -> float:
    """The noise multiplier :math:`z` of a run: 0 without DP noise; (18) for ``per_round_eps``; else
    :func:`calibrate_noise_multiplier` on the realised maximum participation count of ``participation``."""
    if config.noise != "dp":
        return 0.0
    if config.dp_calibration == "per_round_eps":
        return noise_multiplier_fedpdm(config.epsilon, config.delta)
    n_max = int(participation.sum(axis=1).max())
    return calibrate_noise_multiplier(config.epsilon_total, config.delta, config.q(problem), n_max)
