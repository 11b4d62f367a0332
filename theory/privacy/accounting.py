r"""Privacy budget of a noise schedule before running anything: per-round zCDP, the total, and
:math:`(\varepsilon, \delta)` by five methods (three conversions of the zCDP total and two
independent accountants from ``dp-accounting``).

Every round is a Gaussian mechanism (noise std :math:`\sigma_n` for a query of :math:`\ell_2`
sensitivity :math:`\Delta`), so the run is exactly a Gaussian mechanism with
:math:`\mu = \sqrt{2\rho_{\text{total}}}` (Dong, Roth & Su 2022); all five methods are valid for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from theory._validate import readonly, real_scalar
from theory.privacy.composition import zcdp_compose
from theory.privacy.conversions import (
    approx_dp_to_zcdp_bun_steinke,
    approx_dp_to_zcdp_cks,
    approx_dp_to_zcdp_exact_gaussian,
    zcdp_to_approx_dp_bun_steinke,
    zcdp_to_approx_dp_cks,
    zcdp_to_approx_dp_exact_gaussian,
)
from theory.privacy.quiet import quiet_dp_accounting

__all__ = [
    "CONVERSIONS",
    "PrivacyAccount",
    "account_rounds",
    "calibrate_variance_first",
    "distinct_rounds",
    "epsilon_pld_accountant",
    "epsilon_rdp_accountant",
    "rho_schedule_constant",
    "rho_schedule_geometric",
    "rho_schedule_variance_decay",
]

#: zCDP -> (epsilon, delta) conversions and their inverses, by CLI method name.
CONVERSIONS = {
    "bun-steinke": (zcdp_to_approx_dp_bun_steinke, approx_dp_to_zcdp_bun_steinke),
    "cks": (zcdp_to_approx_dp_cks, approx_dp_to_zcdp_cks),
    "exact": (zcdp_to_approx_dp_exact_gaussian, approx_dp_to_zcdp_exact_gaussian),
}


def _rounds(rounds) -> int:
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")
    return int(rounds)


def rho_schedule_constant(sensitivity, sigma, rounds) -> np.ndarray:
    r"""Per-round zCDP :math:`\Delta^2/(2\sigma^2)` of ``rounds`` rounds with constant noise std."""
    sensitivity = real_scalar("sensitivity", sensitivity, "[0, inf)")
    sigma = real_scalar("sigma", sigma, "(0, inf)")
    ratio = sensitivity / sigma
    return readonly(np.full(_rounds(rounds), 0.5 * ratio * ratio))


def rho_schedule_variance_decay(sensitivity, variance_first, variance_decay, rounds) -> np.ndarray:
    r"""Per-round zCDP when round :math:`n` uses noise variance :math:`V\zeta^{n-1}` (round 1 uses :math:`V`).

    .. math:: \rho^{(n)} = \frac{\Delta^2}{2 V \zeta^{n-1}}
    """
    sensitivity = real_scalar("sensitivity", sensitivity, "[0, inf)")
    variance_first = real_scalar("variance_first", variance_first, "(0, inf)")
    zeta = real_scalar("variance_decay", variance_decay, "(0, 1]")
    n = np.arange(_rounds(rounds), dtype=np.float64)
    with np.errstate(over="ignore"):
        return readonly(sensitivity**2 / (2.0 * variance_first) * np.exp(-n * math.log(zeta)))


def rho_schedule_geometric(rho_first, rho_growth, rounds) -> np.ndarray:
    r"""Per-round zCDP :math:`\rho^{(n)} = R\,G^{n-1}`."""
    rho_first = real_scalar("rho_first", rho_first, "(0, inf)")
    growth = real_scalar("rho_growth", rho_growth, "(0, inf)")
    n = np.arange(_rounds(rounds), dtype=np.float64)
    with np.errstate(over="ignore"):
        return readonly(rho_first * np.exp(n * math.log(growth)))


def epsilon_rdp_accountant(rhos, delta) -> float:
    r""":math:`\varepsilon` from dp-accounting's RDP accountant, one Gaussian event per round.

    Round :math:`n` is ``GaussianDpEvent(noise_multiplier = 1/sqrt(2 rho_n))`` (sensitivity 1 in the
    accountant's units equals :math:`\Delta` here). The accountant evaluates RDP on a fixed grid of
    orders and converts with its own (CKS-type) rule, so it errs toward a larger :math:`\varepsilon`.
    Rounds with equal :math:`\rho_n` are composed at once (``compose(event, count)``: the RDP times the count), so a
    constant schedule costs one event whatever its length; :func:`distinct_rounds` is the cost's driver.
    """
    import dp_accounting
    from dp_accounting import rdp

    delta = real_scalar("delta", delta, "(0, 1)")
    accountant = rdp.RdpAccountant()
    values, counts = np.unique(np.asarray(rhos, dtype=np.float64), return_counts=True)
    with quiet_dp_accounting():
        for rho, count in zip(values.tolist(), counts.tolist(), strict=True):
            if rho > 0.0:
                accountant.compose(dp_accounting.GaussianDpEvent(1.0 / math.sqrt(2.0 * rho)), int(count))
        return float(accountant.get_epsilon(delta))


def distinct_rounds(rhos) -> int:
    """The number of distinct per-round values of ``rhos``: the events :func:`epsilon_rdp_accountant` composes."""
    return int(np.unique(np.asarray(rhos, dtype=np.float64)).size)


def epsilon_pld_accountant(rhos, delta, *, value_discretization_interval: float = 1e-4) -> float:
    r""":math:`\varepsilon` from dp-accounting's PLD accountant (pessimistic discretisation).

    The rounds are composed as the single Gaussian they are exactly equivalent to, with noise
    multiplier :math:`1/\sqrt{2\sum_n\rho_n}` (composition of Gaussian mechanisms is Gaussian); PLD
    composition of the rounds one by one gives the same privacy profile at N times the cost. ``inf`` for a
    :math:`\delta` below the tail mass dp-accounting truncates (about 1e-15): no finite :math:`\varepsilon` is
    certified there (the conversions of :func:`account_rounds` still answer).
    """
    import dp_accounting
    from dp_accounting import pld

    delta = real_scalar("delta", delta, "(0, 1)")
    total = zcdp_compose(rhos)
    if total == 0.0:
        return 0.0
    accountant = pld.PLDAccountant(value_discretization_interval=value_discretization_interval)
    with quiet_dp_accounting():
        accountant.compose(dp_accounting.GaussianDpEvent(1.0 / math.sqrt(2.0 * total)))
        return float(accountant.get_epsilon(delta))


@dataclass(frozen=True, kw_only=True)
class PrivacyAccount:
    """The budget of one schedule: per-round zCDP, total and epsilon by method at ``delta``."""

    rho_per_round: np.ndarray
    rho_total: float
    delta: float
    epsilon: dict

    def __repr__(self) -> str:  # brief: the number of rounds, never the per-round array
        eps = ", ".join(f"{k}={v:.6g}" for k, v in self.epsilon.items() if isinstance(v, (int, float)))
        return (f"PrivacyAccount(rounds={len(self.rho_per_round)}, rho_total={self.rho_total:.6g}, "
                f"delta={self.delta:g}, epsilon: {eps})")

    def to_json(self, *, per_round: bool = False) -> dict:
        out = {"rho_total": self.rho_total, "delta": self.delta, "epsilon": dict(self.epsilon)}
        if per_round:
            out["rho_per_round"] = [float(r) for r in self.rho_per_round]
        return out


def account_rounds(rho_per_round, delta, *, accountants: bool = True) -> PrivacyAccount:
    r"""Total zCDP and :math:`\varepsilon(\delta)` by Bun–Steinke, CKS, exact Gaussian, RDP and PLD.

    Parameters
    ----------
    rho_per_round : array_like of float
        Per-round zCDP of Gaussian rounds (see the ``rho_schedule_*`` helpers).
    delta : float
        Target :math:`\delta \in (0, 1)`.
    accountants : bool
        Also run the two dp-accounting accountants (PLD costs about a second).

    Examples
    --------
    The conversions are ordered, tightest first:

    >>> acc = account_rounds(rho_schedule_constant(1.0, 2.0, 100), 1e-5, accountants=False)
    >>> e = acc.epsilon
    >>> e["exact_gaussian"] <= e["cks"] <= e["bun_steinke"]
    True
    """
    rhos = np.array(rho_per_round, dtype=np.float64, ndmin=1)
    delta = real_scalar("delta", delta, "(0, 1)")
    total = zcdp_compose(rhos) if np.all(np.isfinite(rhos)) else math.inf
    if not math.isfinite(total):
        raise ValueError(f"rho_per_round must have a finite total, got {total!r} (the schedule overflows)")
    epsilon = {
        "bun_steinke": zcdp_to_approx_dp_bun_steinke(total, delta),
        "cks": zcdp_to_approx_dp_cks(total, delta),
        "exact_gaussian": zcdp_to_approx_dp_exact_gaussian(total, delta),
    }
    if accountants:
        epsilon["rdp_accountant"] = epsilon_rdp_accountant(rhos, delta)
        epsilon["pld_accountant"] = epsilon_pld_accountant(rhos, delta)
    rhos.setflags(write=False)
    return PrivacyAccount(rho_per_round=rhos, rho_total=total, delta=delta, epsilon=epsilon)


def calibrate_variance_first(epsilon, delta, rounds, sensitivity, variance_decay=1.0, method="exact"):
    r"""Smallest first-round noise variance :math:`V` so that rounds :math:`V\zeta^{n-1}` give
    :math:`(\varepsilon, \delta)`.

    .. math::

        \rho_{\text{total}}(V) = \frac{\Delta^2}{2V}\sum_{n=1}^{N}\zeta^{-(n-1)} \le \rho^\star(\varepsilon, \delta)
        \iff V \ge \frac{\Delta^2 \sum_n \zeta^{-(n-1)}}{2\rho^\star},

    with :math:`\rho^\star` the conservative inverse of the chosen conversion. Returns
    ``(V, epsilon_achieved)``; :math:`V` is nudged up by ulps until the forward conversion gives
    ``epsilon_achieved <= epsilon`` (never the other way).
    """
    if method not in CONVERSIONS:
        raise ValueError(f"method must be one of {', '.join(CONVERSIONS)}, got {method!r}")
    forward, inverse = CONVERSIONS[method]
    epsilon = real_scalar("epsilon", epsilon, "(0, inf)")
    delta = real_scalar("delta", delta, "(0, 1)")
    sensitivity = real_scalar("sensitivity", sensitivity, "(0, inf)")
    rounds = _rounds(rounds)
    unit = rho_schedule_variance_decay(1.0, 1.0, variance_decay, rounds)  # Delta = V = 1
    unit_total = zcdp_compose(unit) * 2.0  # sum_n zeta^-(n-1)
    if not math.isfinite(unit_total):
        raise ValueError("variance_decay and rounds make the schedule overflow: zeta^-(N-1) exceeds the double range")
    rho_star = inverse(epsilon, delta)
    variance = sensitivity**2 * unit_total / (2.0 * rho_star)
    for _ in range(64):
        schedule = rho_schedule_variance_decay(sensitivity, variance, variance_decay, rounds)
        achieved = forward(zcdp_compose(schedule), delta)
        if achieved <= epsilon:
            return variance, achieved
        variance = math.nextafter(variance, math.inf)
    raise ArithmeticError(f"could not reach epsilon <= {epsilon} by rounding up the variance")  # pragma: no cover
