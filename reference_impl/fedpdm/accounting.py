r"""Accounting glue of FedPDM-DP: the client-sampling schedule, the sensitivity (19) table, the noise multiplier
of a run (per-round ε by (18), or a target total on the realised participation count), the history factors, and the
privacy totals of a finished run (:func:`account_run`) under a named model.

Privacy models (``FedPDMConfig.privacy_model``):

* ``history_gaussian`` (default; a bound for Algorithm 1 as run): given the released history (the global models),
  client :math:`i`'s :math:`n`-th upload is a Gaussian mechanism whose mean moves between neighbours by at most
  :math:`\kappa_n s_n` (the history factor of :mod:`theory.privacy.history` times (19), the exact worst case of the
  per-step model of Theorem 1), with the noise :math:`\sigma_n` the run used. Conditioned on the data-independent
  batch choices this is an adaptive composition of Gaussian mechanisms, exactly
  :math:`\mu_i = \sqrt{\sum_n(\kappa_n s_n/\sigma_n)^2}`-GDP, and mixing over the batch choices keeps the bound
  (joint convexity). No amplification by data subsampling: the client keeps :math:`(x_i, \lambda_i)` between rounds,
  so a record in one round's batch moves every later upload, which voids the subsampling argument (fedcheck claims
  ``fedpdm.theorem2_carryover`` and ``fedpdm.theorem2_history_subsampled``). Needs a number of local steps fixed in
  advance (``nu = 0`` or ``Q_max = 1``).
* ``paper``: Theorem 2's moments accountant, the Poisson-subsampled Gaussian at :math:`q = Q_{\max}b/|D_i|` composed
  over the client's realised count (in-house RDP, standard conversion, as ``target_total_eps`` calibrates); its
  status says it is not a bound for the run.

References
----------
.. [1] Li, Huang, Wang, Chi, Quek, "Privacy-Preserving Federated Primal-Dual Learning for Non-Convex Problems with
   Non-Smooth Regularization", (18)-(20), Theorems 1-2; docs/papers/fedpdm.md (realised count :math:`n_i`, history
   factor without cap, the state carried across rounds).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from reference_impl.fedpdm._validate import check_choice, check_int, check_real, readonly_array
from reference_impl.fedpdm.config import FedPDMConfig
from reference_impl.fedpdm.problem import FedPDMProblem
from theory.privacy.conversions import (
    approx_dp_to_zcdp_exact_gaussian,
    gaussian_delta_exact,
    zcdp_to_approx_dp_exact_gaussian,
)
from theory.privacy.sensitivity import sensitivity_fedpdm
from theory.privacy.subsampled import noise_multiplier_fedpdm, rdp_poisson_subsampled_gaussian, rdp_to_approx_dp

__all__ = [
    "ORDERS",
    "PRIVACY_MODELS",
    "FedPDMPrivacy",
    "account_run",
    "calibrate_noise_multiplier",
    "calibrate_noise_multiplier_bound",
    "history_factor_table",
    "history_gaussian_mu",
    "participation_schedule",
    "run_noise_multiplier",
    "sensitivity_table",
]

#: The accounting models of :func:`account_run` (``FedPDMConfig.privacy_model``).
PRIVACY_MODELS = ("history_gaussian", "paper")

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
    ``participations`` compositions at rate ``q`` (in-house accountant, standard
    conversion; docs/papers/fedpdm.md#theorem-2). Memoised (a pure function of its four scalars; runs that share a
    schedule share the bisection)."""
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



def _history_factors(participation: np.ndarray, etas, Q: int, rho: float, local_start: str) -> np.ndarray:
    """:func:`history_factor_table` with ``inf`` where a client's factor leaves the double range (no error)."""
    from theory.privacy.history import history_factors_fedpdm

    etas = np.asarray(etas, dtype=np.float64)
    out = np.ones(participation.shape)
    for r, i in zip(*np.nonzero(participation.any(axis=1)), strict=True):
        rounds = np.flatnonzero(participation[r, :, i])
        out[r, rounds, i] = history_factors_fedpdm(etas[rounds], [int(Q)] * rounds.size, rho, local_start=local_start)
    return out


def history_factor_table(participation: np.ndarray, etas, Q: int, rho: float, local_start: str) -> np.ndarray:
    r"""``(R, T, N)``: the history factor :math:`\kappa_n` of each client's participation at each round (1 elsewhere).

    The schedule is data independent and drawn before the run, so the factors are computed once, per client, from
    its own participation rounds' :math:`\eta^t` and the fixed ``Q`` (a setup loop over clients, not per round).
    With warm start and :math:`(1-\eta\rho)^Q \le -1/3` the factors grow geometrically (computed, not capped); a factor
    beyond the double range raises ValueError.
    """
    out = _history_factors(participation, etas, Q, rho, local_start)
    bad = ~np.isfinite(out)
    if bad.any():
        i = int(np.nonzero(bad)[2][0])
        raise ValueError(f"sensitivity_model = 'history': the history factor overflows for this schedule (client {i}, "
                         f"local_start = {local_start!r}; warm start with (1 - eta rho)^Q <= -1/3 grows "
                         f"geometrically; docs/papers/fedpdm.md)")
    return out


def _noise_unit_table(config: FedPDMConfig, participation: np.ndarray, G: float) -> tuple[np.ndarray, np.ndarray]:
    """``(kappa, s)``: the history factors ``(R, T, N)`` (inf on overflow) and the sensitivities (19) per round ``(T,)``
    at ``Q_max`` with ``G``."""
    etas = [config.eta(t) for t in range(participation.shape[1])]
    kappa = _history_factors(participation, etas, config.Q_max, config.rho, config.local_start)
    s = np.array([sensitivity_fedpdm(e, config.rho, config.Q_max, G) for e in etas])
    return kappa, s


def history_gaussian_mu(etas, Q: int, rho: float, local_start: str, sigmas, G: float) -> float:
    r""":math:`\mu = \sqrt{\sum_n(\kappa_n s_n/\sigma_n)^2}` of one client's participations (``history_gaussian``).

    ``etas``: the step sizes of its participations in order, ``Q`` the fixed local steps, ``sigmas`` the noise std of
    each upload, ``G`` Assumption 3's bound. The client's uploads are :math:`\mu`-GDP, i.e. :math:`(\varepsilon,
    \delta_G(\varepsilon;\mu))`-DP for every :math:`\varepsilon`
    (:func:`theory.privacy.conversions.gaussian_delta_exact`).
    ``inf`` when a history factor or a sensitivity leaves the double range.
    """
    from theory.privacy.carryover import gaussian_composition_mu
    from theory.privacy.history import history_factors_fedpdm

    etas = np.asarray(etas, dtype=np.float64)
    G = check_real("G", G, 0.0, lower_open=True)
    kappa = history_factors_fedpdm(etas, [int(Q)] * etas.size, rho, local_start=local_start)
    s = np.array([sensitivity_fedpdm(float(e), rho, int(Q), G) for e in etas])
    with np.errstate(over="ignore", invalid="ignore"):
        return gaussian_composition_mu(kappa * s, sigmas)


def _gaussian_mu_for(epsilon: float, delta: float) -> float:
    """Largest mu with delta_G(epsilon; mu) <= delta (the exact Gaussian profile's conservative inverse)."""
    return math.sqrt(2.0 * approx_dp_to_zcdp_exact_gaussian(epsilon, delta))


def calibrate_noise_multiplier_bound(epsilon_total: float, delta: float, unit_mu: float) -> float:
    r"""Smallest :math:`z` with :math:`\delta_G(\bar\varepsilon; A/z) \le \delta` for ``unit_mu`` :math:`= A`.

    :math:`A = \max_i\sqrt{\sum_n \kappa_{i,n}^2}` (noise :math:`z s_n`, ``sensitivity_model = "eq19"``) or
    :math:`\max_i\sqrt{n_i}` (noise :math:`z\kappa_n s_n`), so every client's ``history_gaussian`` total is at most
    ``epsilon_total`` at ``delta``. Closed form :math:`z = A/\mu^\ast` (:math:`\mu^\ast` the exact Gaussian
    profile's conservative inverse), rounded up by ulps until the profile itself admits it.
    """
    check_real("epsilon_total", epsilon_total, 0.0, lower_open=True)
    check_real("delta", delta, 0.0, 1.0, lower_open=True, upper_open=True)
    unit_mu = check_real("unit_mu", unit_mu, 0.0, lower_open=True)
    mu_star = _gaussian_mu_for(epsilon_total, delta)
    if mu_star <= 0.0:
        raise ValueError(f"epsilon_total = {epsilon_total!r} at delta = {delta!r} admits no Gaussian noise (mu* = 0)")
    z = unit_mu / mu_star
    for _ in range(64):
        if gaussian_delta_exact(epsilon_total, unit_mu / z) <= delta:
            return z
        z = math.nextafter(z, math.inf)
    raise ArithmeticError("could not reach the target by rounding z up")  # pragma: no cover


def run_noise_multiplier(problem: FedPDMProblem, config: FedPDMConfig, participation: np.ndarray) -> float:
    """The noise multiplier :math:`z` of a run: 0 without DP noise; (18) for ``per_round_eps``; for
    ``target_total_eps`` :func:`calibrate_noise_multiplier` on the realised maximum participation count of
    ``participation`` (the paper's accountant); for ``target_total_eps_bound`` :func:`calibrate_noise_multiplier_bound`
    (every client's ``history_gaussian`` total, with the certified or configured ``G``)."""
    if config.noise != "dp":
        return 0.0
    if config.dp_calibration == "per_round_eps":
        return noise_multiplier_fedpdm(config.epsilon, config.delta)
    if config.dp_calibration == "target_total_eps":
        n_max = int(participation.sum(axis=1).max())
        return calibrate_noise_multiplier(config.epsilon_total, config.delta, config.q(problem), n_max)
    etas = [config.eta(t) for t in range(participation.shape[1])]
    kappa = _history_factors(participation, etas, config.Q_max, config.rho, config.local_start)
    if config.sensitivity_model == "history":
        unit = math.sqrt(float(participation.sum(axis=1).max()))
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            unit = float(np.sqrt(np.where(participation, kappa * kappa, 0.0).sum(axis=1)).max())
    if not math.isfinite(unit):
        raise ValueError("dp_calibration = 'target_total_eps_bound': a history factor overflows for this schedule "
                         "(warm start with (1 - eta rho)^Q <= -1/3); no finite noise meets the target")
    return calibrate_noise_multiplier_bound(config.epsilon_total, config.delta, unit)


_PAPER_STATUS = ("the paper's accountant (Theorem 2, eq. (20): Poisson-subsampled Gaussian at q composed over the "
                 "realised count): not a bound for Algorithm 1 as run, because each client keeps (x_i, lambda_i) "
                 "across rounds and a record moves every later upload (fedcheck claim fedpdm.theorem2_carryover); "
                 "use privacy_model = 'history_gaussian' for a bound")


@dataclass(frozen=True, kw_only=True)
class FedPDMPrivacy:
    r"""Privacy totals of a FedPDM-DP run under one accounting model, per run and client.

    Attributes
    ----------
    model : str
        One of :data:`PRIVACY_MODELS`.
    is_bound : bool
        True when the totals bound the privacy loss of Algorithm 1 as run (``history_gaussian`` with a fixed number
        of local steps, DP noise and finite history factors); ``status`` says why not otherwise.
    status : str
        What the totals are and, when they are not a bound, why.
    delta : float
        The :math:`\delta` of ``epsilon``.
    q : float
        Data fraction per round :math:`Q_{\max}b/|D_i|` (used by the ``paper`` model only).
    participations : (R, N) int array
        Realised participation counts :math:`n_i`.
    epsilon : (R, N) array
        :math:`\varepsilon` at ``delta`` per client (0 for a client that never took part; ``inf`` when unbounded).
    mu : (R, N) array or None
        GDP :math:`\mu_i` (``history_gaussian``): :math:`\delta(\varepsilon) = \delta_G(\varepsilon;\mu_i)` exactly.
    rdp : (R, N, len(ORDERS)) array or None
        The RDP curve of each client (``paper``), at :data:`ORDERS`.
    """

    model: str
    is_bound: bool
    status: str
    delta: float
    q: float
    participations: np.ndarray
    epsilon: np.ndarray
    mu: np.ndarray | None = None
    rdp: np.ndarray | None = None

    def __post_init__(self) -> None:
        check_choice("model", self.model, PRIVACY_MODELS)
        for name in ("participations", "epsilon", "mu", "rdp"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, readonly_array(value, np.int64 if name == "participations" else
                                                              np.float64))

    def epsilon_max(self, run: int = 0) -> float:
        """The largest per-client :math:`\varepsilon` of ``run`` (the uniform guarantee)."""
        return float(self.epsilon[run].max())

    def worst_client(self, run: int = 0) -> int:
        """The client of ``run`` with the largest :math:`\varepsilon` (ties: the lowest index)."""
        return int(np.argmax(self.epsilon[run]))

    def delta_at(self, epsilon, run: int = 0) -> np.ndarray:
        r""":math:`\delta(\varepsilon)` of every client of ``run``: exact for ``history_gaussian``
        (:math:`\delta_G(\varepsilon;\mu_i)`), the standard RDP conversion :math:`\min_\alpha e^{(\alpha-1)
        (\mathrm{RDP}(\alpha) - \varepsilon)}` for ``paper``."""
        epsilon = check_real("epsilon", epsilon, 0.0)
        if self.mu is not None:
            return np.array([1.0 if not math.isfinite(m) else gaussian_delta_exact(epsilon, float(m))
                             for m in self.mu[run]])
        alphas = np.asarray(ORDERS, dtype=np.float64)
        with np.errstate(over="ignore"):
            return np.minimum(np.exp(((alphas - 1.0) * (self.rdp[run] - epsilon)).min(axis=-1)), 1.0)

    def to_json(self, run: int = 0) -> dict:
        """Strict-JSON form for ``run`` (non-finite values as null)."""
        def finite(v):
            return float(v) if math.isfinite(v) else None

        out = {"model": self.model, "is_bound": self.is_bound, "status": self.status, "delta": self.delta, "q": self.q,
               "participations": [int(c) for c in self.participations[run]],
               "epsilon_per_client": [finite(e) for e in self.epsilon[run]],
               "epsilon_max": finite(self.epsilon_max(run)), "worst_client": self.worst_client(run)}
        if self.mu is not None:
            out["mu_per_client"] = [finite(m) for m in self.mu[run]]
        return out


def _epsilon_of_mu(mu: np.ndarray, delta: float) -> np.ndarray:
    out = np.empty(mu.shape)
    values, inverse = np.unique(mu, return_inverse=True)
    eps = [0.0 if m == 0.0 else math.inf if not math.isfinite(m) else
           zcdp_to_approx_dp_exact_gaussian(0.5 * m * m, delta) for m in values]
    out.ravel()[:] = np.asarray(eps)[inverse.ravel()]
    return out


def account_run(problem: FedPDMProblem, config: FedPDMConfig, run, *, model: str | None = None,
                delta: float | None = None) -> FedPDMPrivacy:
    r"""Privacy totals of a finished FedPDM-DP run (:func:`reference_impl.fedpdm.run_fedpdm`) under ``model``.

    Parameters
    ----------
    problem, config : the run's problem and configuration.
    run : FedPDMRun
        Its participation mask ``(R, T, N)``, per-upload noise ``sigma`` and ``G`` are used.
    model : str, optional
        One of :data:`PRIVACY_MODELS`; default ``config.privacy_model``.
    delta : float, optional
        Default ``config.delta``.

    Returns
    -------
    FedPDMPrivacy
        ``model``, ``is_bound``, ``status`` and the per-client totals (see the module docstring for the models).
    """
    model = check_choice("model", config.privacy_model if model is None else model, PRIVACY_MODELS)
    delta = check_real("delta", config.delta if delta is None else delta, 0.0, 1.0, lower_open=True, upper_open=True)
    participation = np.asarray(run.participation, dtype=bool)
    counts = participation.sum(axis=1)
    q = config.q(problem)
    sigma = np.asarray(run.sigma, dtype=np.float64)
    kappa, s = _noise_unit_table(config, participation, float(run.G))
    if model == "history_gaussian":
        reasons = []
        if config.noise == "none":
            reasons.append("noise = 'none': the uploads are released without noise")
        if config.nu > 0.0 and config.Q_max > 1:
            reasons.append(f"nu = {config.nu!r} > 0: rule (11) makes the number of local steps data dependent, so no "
                           f"sensitivity bounds the upload (fedcheck claim fedpdm.theorem1)")
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            ratio = np.where(participation, kappa * s[None, :, None] / np.where(sigma > 0, sigma, 1.0), 0.0)
            ratio = np.where(participation & (sigma <= 0), math.inf, ratio)
            mu = np.sqrt((ratio * ratio).sum(axis=1))
        if not np.all(np.isfinite(mu)) and config.noise != "none":
            reasons.append("a history factor or a sensitivity (19) leaves the double range (warm start with "
                           "(1 - eta rho)^Q <= -1/3, or eta rho > 2): the total is unbounded")
        if config.noise == "none" or config.nu > 0.0 and config.Q_max > 1:  # no sensitivity bound at all
            mu = np.where(counts > 0, math.inf, 0.0)
        status = ("bound: every upload is a Gaussian mechanism with the history sensitivity kappa_n s_n of (19) given "
                  "the released history, composed exactly without subsampling amplification (valid for Algorithm 1 "
                  f"as run under Assumption 3 with G = {float(run.G):.6g})" if not reasons else
                  "not a bound: " + "; ".join(reasons))
        return FedPDMPrivacy(model=model, is_bound=not reasons, status=status, delta=delta, q=q,
                             participations=counts, epsilon=_epsilon_of_mu(mu, delta), mu=mu)
    # model == "paper": the subsampled accountant at the noise multiplier each upload was calibrated with
    q_eff = min(q, 1.0)
    unit = s[None, :, None] * (kappa if config.sensitivity_model == "history" else 1.0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        z = np.where(participation, sigma / unit, 0.0)
    orders = np.asarray(ORDERS)
    rdp = np.zeros(counts.shape + (orders.size,))
    valid = participation & np.isfinite(z) & (z > 0)
    for value in np.unique(z[valid]):
        rdp += (valid & (z == value)).sum(axis=1)[..., None] * rdp_poisson_subsampled_gaussian(q_eff, float(value),
                                                                                             orders)
    unbounded = (participation & ~valid).any(axis=1)
    eps = np.zeros(counts.shape)
    for idx in zip(*np.nonzero(counts > 0), strict=True):
        eps[idx] = math.inf if unbounded[idx] else rdp_to_approx_dp(rdp[idx], orders, delta)[0]
    status = _PAPER_STATUS if config.noise != "none" else "noise = 'none': no privacy"
    return FedPDMPrivacy(model=model, is_bound=False, status=status, delta=delta, q=q, participations=counts,
                         epsilon=eps, rdp=rdp)
