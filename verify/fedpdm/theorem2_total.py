r"""FedPDM-DP Theorem 2: the total privacy loss :math:`c_0 q^2 \varepsilon\sqrt{pT/(1-q)}` against privacy accountants.

The seed gives no value for :math:`c_0` ("a constant dependent upon :math:`\delta`"), so the check
tests the **scaling** in :math:`q` (docs/papers/fedpdm.md#theorem-2): for each per-round :math:`\varepsilon` (noise
multiplier
:math:`z = \sqrt{2\ln(1.25/\delta)}/\varepsilon`, eq. (18)), :math:`\delta` and number of
participations :math:`n = pT`, an accountant gives the total :math:`\bar\varepsilon(q)` of :math:`n`
subsampled Gaussian mechanisms, and the fitted constant

.. math:: c_0^{(k)}(q) = \frac{\bar\varepsilon(q)}{q^k\,\varepsilon\sqrt{n/(1-q)}}

must not depend on :math:`q` if the formula with exponent :math:`k` is right.
Criterion (docs/papers/fedpdm.md#theorem-2): its spread :math:`\max_q c_0/\min_q c_0` over :math:`q \in [0.02, 0.3]` is
at most ``SPREAD_BOUND`` = 1.5.

Accountants (all with :math:`n` self-compositions):

* ``rdp`` — fedcheck's Rényi-DP accountant for the Poisson-subsampled Gaussian
  (:func:`theory.privacy.subsampled.rdp_poisson_subsampled_gaussian`, integer orders up to 16384)
  with the standard conversion: the moments accountant the seed's proof cites. Cross-checked order by
  order against ``dp-accounting``'s ``RdpAccountant`` with ``PoissonSampledDpEvent``.
* ``pld`` — ``dp-accounting``'s privacy-loss-distribution of the Poisson-subsampled Gaussian,
  optimistic and pessimistic discretisations: a bracket of the exact :math:`\bar\varepsilon`.
  Spreads are taken conservatively (the smallest possible spread for a refutation, the largest for a
  confirmation).
* ``rdp_wor`` — ``dp-accounting``'s ``SampledWithoutReplacementDpEvent`` (Wang, Balle &
  Kasiviswanathan 2019, Thm. 27) under replace-one adjacency with :math:`|\mathcal D_i| = 600` (the
  seed's sampling and adjacency), standard conversion. Recorded in the details.

Finding: the fitted :math:`c_0` is flat for :math:`k = 1` and varies by a factor 13-18 for :math:`k = 2`; the
paper's :math:`q^2` understates the loss as :math:`q \to 0`. Both claims here are about the **accountant's model**
(independent subsampled rounds), i.e. about the formula (20); whether that model bounds the privacy loss of
Algorithm 1 as run (the client keeps its state across rounds) is decided in :mod:`verify.fedpdm.theorem2_carryover`
(it does not). See docs/papers/fedpdm.md.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import dp_accounting
import numpy as np
from dp_accounting import rdp as dpa_rdp
from dp_accounting.pld import privacy_loss_distribution as dpa_pld

from theory.privacy.quiet import quiet_dp_accounting
from theory.privacy.subsampled import (
    abadi_constant_c0,
    noise_multiplier_fedpdm,
    rdp_poisson_subsampled_gaussian,
    rdp_to_approx_dp,
    total_epsilon_fedpdm_linear,
    total_epsilon_fedpdm_printed,
)
from verify.evidence import HARD_POINT, SIDES, report_counterexample, result_from_evidence, sample_evidence
from verify.fedpdm._common import SEED
from verify.records import CheckContext, CheckResult, Citation, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import gamma

__all__ = [
    "CLAIMS",
    "COUNTEREXAMPLE",
    "ORDERS",
    "Q_GRID",
    "SPREAD_BOUND",
    "check_linear_scaling",
    "check_printed_scaling",
    "cross_check_rdp",
    "epsilon_total",
    "evaluate_scaling",
    "fitted_c0",
]

#: Integer Rényi orders: 2..64 and a geometric grid up to 16384 (small q moves the optimum to large
#: orders; a cap at 256 biases the total upward, docs/papers/fedpdm.md#theorem-2).
ORDERS = tuple(sorted(set(range(2, 65)) | {int(round(x)) for x in np.geomspace(64, 16384, 33)}))
#: Orders used for the cross-check against dp-accounting (its cost grows with the order).
CROSS_ORDERS = tuple(o for o in ORDERS if o <= 2048)
Q_GRID = (0.02, 0.05, 0.1, 0.2, 0.3)
#: docs/papers/fedpdm.md's criterion for "c_0 is a constant": spread over the q grid below
#: 1.5 (docs/papers/fedpdm.md#theorem-2, must-pass).
SPREAD_BOUND = 1.5
#: PLD value discretisation relative to the total (the RDP estimate): brackets about 1-2 % wide. A fixed
#: interval (dp-accounting's 1e-4) is too coarse for totals near 1e-3 (per-round eps = 0.1, q = 0.02).
PLD_RELATIVE_DISCRETIZATION = 1e-3
#: Largest noise multiplier handed to dp-accounting: its without-replacement RDP fails (math domain, overflow) from
#: about 1e10 on and its PLD overflows near 1e300; at 1e6 every RDP value here is below 1e-10 (probed).
MAX_DPA_NOISE_MULTIPLIER = 1e6
#: Smallest delta asked of dp-accounting's PLD: it truncates about 1e-15 of tail mass and answers inf below that.
MIN_PLD_DELTA = 1e-12
#: The experiment: |D_i| = 600 records per client, p T = 0.05 * 300 = 15 participations, delta = 1e-5.
DATASET_SIZE = 600
COUNTEREXAMPLE = {"accountant": "rdp", "epsilon": 0.5, "delta": 1e-5, "n": 15, "k": 2, "q_grid": list(Q_GRID)}
_PROFILE = {"ci": {"epsilons": (0.5, 1.0), "deltas": (1e-5,), "ns": (15,), "pld_q": (0.02, 0.1, 0.3),
                   "wor_q": (0.02, 0.3), "wor_eps": (0.5,), "cross_q": (0.02, 0.3), "batches": 2, "per_batch": 3},
            "thorough": {"epsilons": (0.1, 0.25, 0.5, 1.0), "deltas": (1e-3, 1e-5, 1e-8), "ns": (15, 50, 300),
                         "pld_q": Q_GRID, "wor_q": Q_GRID, "wor_eps": (0.1, 0.25, 0.5, 1.0), "cross_q": Q_GRID,
                         "batches": 16, "per_batch": 8}}


@functools.lru_cache(maxsize=4096)
def epsilon_total(accountant: str, epsilon: float, delta: float, n: int, q: float) -> tuple[float, float]:
    r"""Total :math:`\bar\varepsilon` of ``n`` subsampled Gaussian rounds as a bracket ``(lower, upper)``.

    ``accountant``: ``rdp`` (in-house, standard conversion; lower = upper), ``pld`` (dp-accounting PLD,
    optimistic/pessimistic, value discretisation ``PLD_RELATIVE_DISCRETIZATION`` times the RDP total) or
    ``rdp_wor`` (dp-accounting, sampling without replacement of ``round(q * 600)`` of 600 records,
    replace-one). Noise multiplier :math:`z = \sqrt{2\ln(1.25/\delta)}/\varepsilon` (eq. (18)).
    Pure function of its arguments, cached (the two checks share the accountant calls).
    """
    if accountant not in ("rdp", "pld", "rdp_wor"):
        raise ValueError(f"accountant must be rdp, pld or rdp_wor, got {accountant!r}")
    z = noise_multiplier_fedpdm(epsilon, delta)  # ValueError naming epsilon when z leaves the double range
    if accountant != "rdp" and z > MAX_DPA_NOISE_MULTIPLIER:
        raise ValueError(f"epsilon = {epsilon!r} gives the noise multiplier z = {z:.3g}, above "
                         f"{MAX_DPA_NOISE_MULTIPLIER:g}, where dp-accounting's {accountant} accountant overflows; the "
                         f"in-house 'rdp' accountant evaluates it (epsilon must be >= "
                         f"{z * epsilon / MAX_DPA_NOISE_MULTIPLIER:.3g} for {accountant!r})")
    if accountant == "pld" and delta < MIN_PLD_DELTA:
        raise ValueError(f"delta must be >= {MIN_PLD_DELTA:g} for the PLD accountant (dp-accounting truncates its "
                         f"tails near 1e-15, below which it answers inf), got {delta!r}")
    if accountant == "rdp":
        value, _ = rdp_to_approx_dp(n * rdp_poisson_subsampled_gaussian(q, z, ORDERS), ORDERS, delta)
        return value, value
    if accountant == "rdp_wor":
        acc = dpa_rdp.RdpAccountant(orders=list(CROSS_ORDERS),
                                    neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
        event = dp_accounting.SampledWithoutReplacementDpEvent(
            DATASET_SIZE, int(round(q * DATASET_SIZE)), dp_accounting.GaussianDpEvent(z))
        with quiet_dp_accounting():
            acc.compose(event, n)
        value, _ = rdp_to_approx_dp(np.asarray(acc.rdp), CROSS_ORDERS, delta)
        return value, value
    if accountant == "pld":
        interval = PLD_RELATIVE_DISCRETIZATION * epsilon_total("rdp", epsilon, delta, n, q)[1]
        with quiet_dp_accounting():
            values = [dpa_pld.from_gaussian_mechanism(z, pessimistic_estimate=pessimistic,
                                                      value_discretization_interval=interval,
                                                      sampling_prob=q, use_connect_dots=pessimistic)
                      .self_compose(n).get_epsilon_for_delta(delta) for pessimistic in (False, True)]
        return float(values[0]), float(values[1])
    raise AssertionError("unreachable")  # pragma: no cover


def fitted_c0(total: float, epsilon: float, q: float, n: int, k: int, *, formula=None) -> float:
    r""":math:`c_0` that makes the formula with exponent ``k`` equal ``total`` (:math:`p T = n`, i.e.
    :math:`p = 1, T = n`).

    ``formula(epsilon, q, p, T, c0)`` defaults to eq. (20) as printed (``k = 2``) or its linear reading (``k = 1``).
    """
    if formula is None:
        formula = {1: total_epsilon_fedpdm_linear, 2: total_epsilon_fedpdm_printed}[k]
    return total / formula(epsilon, q, 1.0, n, 1.0)


def evaluate_scaling(accountant: str, epsilon: float, delta: float, n: int, k: int, q_grid=Q_GRID, *,
                     formula=None, conservative: str = "low") -> Evidence:
    r"""Spread of the fitted :math:`c_0^{(k)}` over ``q_grid`` for one accountant; holds when at most ``SPREAD_BOUND``.

    For a bracketing accountant, ``conservative="low"`` takes the smallest spread the bracket allows
    (for a refutation), ``"high"`` the largest (for a confirmation).
    """
    brackets = [epsilon_total(accountant, float(epsilon), float(delta), int(n), float(q)) for q in q_grid]
    lo = np.array([fitted_c0(b[0], epsilon, q, n, k, formula=formula) for b, q in zip(brackets, q_grid, strict=True)])
    hi = np.array([fitted_c0(b[1], epsilon, q, n, k, formula=formula) for b, q in zip(brackets, q_grid, strict=True)])
    if conservative == "low":  # the true c0(q) lie in [lo, hi]: their spread is at least this
        spread = max(1.0, float(np.max(lo) / np.min(hi)))
    elif conservative == "high":  # ... and at most this
        spread = float(np.max(hi) / np.min(lo))
    else:
        raise ValueError(f"conservative must be 'low' or 'high', got {conservative!r}")
    return Evidence(measured=spread, bound=SPREAD_BOUND, holds=spread <= SPREAD_BOUND,
                    parameters={"accountant": accountant, "epsilon": float(epsilon), "delta": float(delta),
                                "n": int(n), "k": int(k), "q_grid": [float(q) for q in q_grid],
                                "epsilon_total": [b[1] for b in brackets], "fitted_c0": hi.tolist(),
                                "fitted_c0_lower": lo.tolist()})


def cross_check_rdp(epsilon: float, delta: float, n: int, q: float) -> Evidence:
    r"""In-house Poisson RDP vs dp-accounting's, order by order on ``CROSS_ORDERS``, and after conversion.

    Allowance per order: the in-house sum's rounding, :math:`\gamma_8 M_\alpha + \gamma_{\alpha+2}` in
    :math:`\ln A_\alpha` with :math:`M_\alpha` the largest log-term magnitude, doubled for the other
    implementation, times :math:`n/(\alpha-1)`. ``measured`` = largest gap / allowance (<= 1).
    """
    z = noise_multiplier_fedpdm(epsilon, delta)
    orders = np.array(CROSS_ORDERS)
    ours = n * rdp_poisson_subsampled_gaussian(q, z, orders)
    acc = dpa_rdp.RdpAccountant(orders=list(CROSS_ORDERS))
    with quiet_dp_accounting():
        acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), n)
    theirs = np.asarray(acc.rdp)
    log_terms = (np.array([math.lgamma(a + 1.0) for a in orders]) + orders * abs(math.log(q))
                 + orders * abs(math.log1p(-q)) + orders * orders / (2.0 * z * z) + 1.0)
    allowance = 2.0 * n * (gamma(8) * log_terms + np.array([gamma(int(a) + 2) for a in orders])) / (orders - 1.0)
    ratio = float(np.max(np.abs(ours - theirs) / allowance))
    eps_ours, _ = rdp_to_approx_dp(ours, orders, delta)
    eps_theirs, _ = rdp_to_approx_dp(theirs, orders, delta)
    return Evidence(measured=ratio, bound=1.0, holds=ratio <= 1.0,
                    parameters={"cross_check": "in-house RDP vs dp-accounting RDP", "epsilon": epsilon,
                                "delta": delta, "n": n, "q": q, "epsilon_total_ours": eps_ours,
                                "epsilon_total_dp_accounting": eps_theirs})


def _spec_table() -> dict:
    """docs/papers/fedpdm.md#theorem-2 table (Poisson RDP, standard conversion, n = 15, delta = 1e-5) and the other
    accountants."""
    rows = {}
    for eps in (0.5, 1.0):
        for q in Q_GRID:
            total = epsilon_total("rdp", eps, 1e-5, 15, q)[0]
            rows[f"eps={eps:g}, q={q:g}"] = {"c0_k1": fitted_c0(total, eps, q, 15, 1),
                                             "c0_k2": fitted_c0(total, eps, q, 15, 2)}
    return rows


def _log_log_slope(epsilon: float, delta: float, n: int) -> float:
    r"""Least-squares slope of :math:`\ln\bar\varepsilon` against :math:`\ln(q/\sqrt{1-q})` (1 for k = 1, 2 for
    k = 2)."""
    x = np.log([q / math.sqrt(1.0 - q) for q in Q_GRID])
    y = np.log([epsilon_total("rdp", epsilon, delta, n, q)[0] for q in Q_GRID])
    return float(np.polyfit(x, y, 1)[0])


_RATE_REASON = ("the exponent of q in (20) (q^2 printed, q corrected): decided by the flatness in q of the "
                "constant fitted to each exponent over q in [0.02, 0.3] (spread <= 1.5), with the log-log slope of the "
                "accountant's total in q/sqrt(1-q) and the range of its local slopes recorded; the totals are "
                "deterministic (an accountant), so the slope's interval is that range, not a sampling interval")


#: The declared hardest point of the corrected statement: the smallest number of participations it covers (the
#: asymptotic form degrades as n falls; spreads up to 3x at n = 1, 5).
HARD_N = 15
_BOUND_NOTE = ("the corrected statement bounds the spread max_q c0 / min_q c0 of the fitted k = 1 constant by 1.5: a "
               "one-sided inequality, so the tightness is the largest spread / 1.5 over the (eps, delta, n, "
               "accountant) points (PLD: the upper end of its bracket); the RDP cross-check points (gap / rounding "
               "allowance) are not bound points. The exponent of q itself is a rate: its log-log slope and local "
               "slopes are in the details")


def _as_spread_bound_point(e: Evidence) -> Evidence:
    """Mark a spread point at n = HARD_N as a declared hardest point (the smallest n the corrected statement covers)."""
    if int(e.parameters["n"]) != HARD_N:
        return e
    return dataclasses.replace(e, parameters={**e.parameters, HARD_POINT: f"n = pT = {HARD_N} (the smallest n "
                                                                          "covered)"})


def _local_slopes(epsilon: float, delta: float, n: int) -> list[float]:
    """Slopes of ln eps_total against ln(q/sqrt(1-q)) between consecutive q of the grid (the fitted slope's range)."""
    x = np.log([q / math.sqrt(1.0 - q) for q in Q_GRID])
    y = np.log([epsilon_total("rdp", epsilon, delta, n, q)[0] for q in Q_GRID])
    return (np.diff(y) / np.diff(x)).tolist()


def _c0_figure() -> FigureSpec:
    qs = np.geomspace(0.02, 0.3, 9)
    series = []
    for eps in (0.5, 1.0):
        totals = [epsilon_total("rdp", eps, 1e-5, 15, float(q))[0] for q in qs]
        for k, style in ((1, "line"), (2, "dashed")):
            series.append(Series(label=f"fitted c0, k = {k}, per-round eps = {eps:g} (Poisson RDP)", x=qs,
                                 y=[fitted_c0(t, eps, float(q), 15, k) for t, q in zip(totals, qs, strict=True)],
                                 style=style,
                                 group=str(eps)))
    pld_q = (0.02, 0.1, 0.3)
    series.append(Series(label="fitted c0, k = 1, eps = 0.5 (PLD, pessimistic)", x=pld_q, style="points",
                         y=[fitted_c0(epsilon_total("pld", 0.5, 1e-5, 15, q)[1], 0.5, q, 15, 1) for q in pld_q]))
    series.append(Series(label="Abadi constant sqrt(2 ln(1/delta)/ln(1.25/delta))", x=(0.02, 0.3),
                         y=(abadi_constant_c0(1e-5),) * 2, style="dashed"))
    return FigureSpec(name="theorem2_fitted_c0_vs_q",
                      title="FedPDM-DP (20): fitted c0 vs q (n = pT = 15, delta = 1e-5)",
                      xlabel="data fraction q", ylabel="fitted c0", series=tuple(series), xscale="log", yscale="log")


def _grid(ctx: CheckContext):
    p = _PROFILE[ctx.profile]
    return [(e, d, n) for e in p["epsilons"] for d in p["deltas"] for n in p["ns"]]


def reproduce_printed(counterexample) -> Evidence:
    """Re-evaluate the spread of the fitted c0 at a recorded counterexample."""
    cx = dict(counterexample)
    return evaluate_scaling(cx["accountant"], cx["epsilon"], cx["delta"], cx["n"], cx["k"], tuple(cx["q_grid"]))


def check_printed_scaling(ctx: CheckContext, *, formula=total_epsilon_fedpdm_printed) -> CheckResult:
    """Spread of the fitted c0 for eq. (20) as printed (k = 2): Poisson RDP on the full q grid, PLD and WOR on a few
    q."""
    claim_id = "fedpdm.theorem2"
    p = _PROFILE[ctx.profile]
    evidence = [evaluate_scaling("rdp", e, d, n, 2, formula=formula) for e, d, n in _grid(ctx)]
    evidence += [evaluate_scaling("pld", e, 1e-5, 15, 2, p["pld_q"], formula=formula) for e in p["epsilons"]]
    evidence += [evaluate_scaling("rdp_wor", e, 1e-5, 15, 2, p["wor_q"], formula=formula) for e in p["wor_eps"]]
    chosen = evaluate_scaling(COUNTEREXAMPLE["accountant"], COUNTEREXAMPLE["epsilon"], COUNTEREXAMPLE["delta"],
                              COUNTEREXAMPLE["n"], 2, formula=formula)
    details = {"spec_4_3_table": _spec_table(),
               "log_log_slope_eps_total_vs_q_over_sqrt_1_minus_q": {f"eps={e:g}": _log_log_slope(e, 1e-5, 15)
                                                                    for e in (0.5, 1.0)},
               "abadi_c0": abadi_constant_c0(1e-5), "spread_bound": SPREAD_BOUND,
               "note": ("c0 unspecified, so only the q-scaling is testable; the k = 2 constant grows like 1/q as "
                        "q -> 0, so no fixed c0 works and (20) understates the loss for small q")}
    result = result_from_evidence(
        claim_id, evidence, ctx=ctx, quantity="max_q c0 / min_q c0 of the fitted constant, k = 2 (q in [0.02, 0.3])",
        what="c0 = eps_total / (q^2 eps sqrt(pT/(1-q))) is constant in q", figures=[_c0_figure()],
        corrected_claim="fedpdm.theorem2_corrected", form="rate", form_reason=_RATE_REASON,
        details={**details, "local_slopes_eps0.5_delta1e-5_n15": _local_slopes(0.5, 1e-5, 15)})
    return report_counterexample(result, chosen, "per-round eps = 0.5, delta = 1e-5, pT = 15 (Poisson RDP)")


def _regime_batch(rng: np.random.Generator, count: int, formula) -> list[Evidence]:
    out = []
    for _ in range(count):
        eps = float(rng.uniform(0.1, 1.0))
        delta = float(10.0 ** rng.uniform(-8.0, -3.0))
        n = int(round(10.0 ** rng.uniform(math.log10(15), 3.0)))
        out.append(evaluate_scaling("rdp", eps, delta, n, 1, formula=formula, conservative="high"))
    return out


def check_linear_scaling(ctx: CheckContext, *, formula=total_epsilon_fedpdm_linear) -> CheckResult:
    """Spread of the fitted c0 for the linear reading (k = 1): Poisson RDP (grid and random), PLD, and the RDP
    cross-check."""
    claim_id = "fedpdm.theorem2_corrected"
    p = _PROFILE[ctx.profile]
    evidence = [evaluate_scaling("rdp", e, d, n, 1, formula=formula, conservative="high") for e, d, n in _grid(ctx)]
    evidence += sample_evidence(ctx, claim_id, _regime_batch, p["batches"], (p["per_batch"], formula))
    evidence += [evaluate_scaling("pld", e, 1e-5, 15, 1, p["pld_q"], formula=formula, conservative="high")
                 for e in p["epsilons"]]
    evidence = [_as_spread_bound_point(e) for e in evidence]
    cross = [cross_check_rdp(0.5, 1e-5, 15, q) for q in p["cross_q"]]
    evidence += [dataclasses.replace(e, parameters={**e.parameters, SIDES: None}) for e in cross]
    wor = [evaluate_scaling("rdp_wor", e, 1e-5, 15, 1, p["wor_q"], formula=formula) for e in p["wor_eps"]]
    details = {
        "spec_4_3_table": _spec_table(),
        "abadi_c0": abadi_constant_c0(1e-5),
        "max_fitted_c0_poisson_rdp": max(max(e.parameters["fitted_c0"]) for e in evidence
                                         if e.parameters.get("accountant") == "rdp"),
        "pld_fitted_c0_k1": {f"eps={e.parameters['epsilon']:g}": e.parameters["fitted_c0"] for e in evidence
                             if e.parameters.get("accountant") == "pld"},
        "cross_check_max_gap_over_allowance": max(e.measured for e in cross),
        "without_replacement_replace_one": {
            f"eps={e.parameters['epsilon']:g}": {"q": e.parameters["q_grid"], "fitted_c0_k1": e.parameters["fitted_c0"],
                                                 "spread": e.measured} for e in wor},
        "without_replacement_note": ("WBK 2019 Thm 27 bound (dp-accounting), replace-one, standard conversion: "
                                     "about 1.6-2.0x the Poisson value and flat for eps >= 0.5, but not at eps = 0.1 "
                                     "(spread about 3.2 at n = 15: the general bound's high-order terms), where the "
                                     "Poisson PLD shows the exact loss is still linear in q; recorded, not asserted"),
        "improved_conversion_c0_k1_eps0.5": [
            _improved_conversion_total(0.5, 1e-5, 15, q) / total_epsilon_fedpdm_linear(0.5, q, 1.0, 15, 1.0)
            for q in (0.02, 0.3)],
    }
    return result_from_evidence(
        claim_id, evidence, ctx=ctx,
        quantity="max_q c0 / min_q c0 of the fitted constant, k = 1 (<= 1.5); RDP cross-check gap / allowance (<= 1)",
        what="c0 = eps_total / (q eps sqrt(pT/(1-q))) is constant in q within 1.5x", figures=[_c0_figure()],
        form="bound",
        details={**details, "form_note": _BOUND_NOTE,
                 "log_log_slope": {f"eps={e:g}": _log_log_slope(e, 1e-5, 15) for e in (0.5, 1.0)},
                 "local_slopes_eps0.5_delta1e-5_n15": _local_slopes(0.5, 1e-5, 15),
                 "local_slopes_eps1_delta1e-5_n15": _local_slopes(1.0, 1e-5, 15)})


@functools.lru_cache(maxsize=64)
def _improved_conversion_total(epsilon: float, delta: float, n: int, q: float) -> float:
    """dp-accounting's own get_epsilon (Balle et al. 2020 conversion), for comparison
    only (docs/papers/fedpdm.md#review-notes)."""
    acc = dpa_rdp.RdpAccountant(orders=list(CROSS_ORDERS))
    with quiet_dp_accounting():
        acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(
            noise_multiplier_fedpdm(epsilon, delta))), n)
        return float(acc.get_epsilon(delta))


_CITE = (Citation(seed=SEED, label="Theorem 2", equation="(20)", lines="199-207"),
         Citation(external="Abadi et al. 2016 (moments accountant)", label="Lemma 3 and Theorem 1"))

CLAIMS = (
    Claim(
        id="fedpdm.theorem2",
        paper="fedpdm",
        title="Theorem 2: total privacy loss c0 q^2 eps sqrt(pT/(1-q))",
        citations=_CITE,
        statement=("With p_i = K/N and q_i = Q b/|D_i|, a client whose uploads are (eps, delta)-DP per round "
                   "(noise (18)) has total privacy loss eps_total = c0 q_i^2 eps sqrt(p_i T/(1 - q_i)) after T "
                   "rounds, c0 > 0 a constant depending on delta only (moments accountant)."),
        hypotheses=("per-round eps <= 1 (moments-accountant regime)", "q in [0.02, 0.3] (q < 1)",
                    "n = pT participations", "noise multiplier z = sqrt(2 ln(1.25/delta))/eps"),
        check=check_printed_scaling,
        expected=Verdict.REFUTED,
        reason=("The constant that fits the q^2 form is not a constant: over q in [0.02, 0.3] it varies by 17.9x "
                "(eps = 0.5) and 18.9x (eps = 1) under the Poisson RDP accountant (docs/papers/fedpdm.md#theorem-2 "
                "table reproduced: 52, 21, 10, 4.7, 2.9), by 12-14x under the exact (PLD) loss and by 19x under the "
                "without-replacement replace-one bound; the log-log slope of eps_total in q/sqrt(1-q) is 0.92-0.94, "
                "not 2. Any fixed c0 understates the loss as q -> 0. The cited FedSPD-DP states O(q eps "
                "sqrt(pT)) (docs/papers/fedpdm.md#erratum-e7)."),
        severity="false",
        reproduce=reproduce_printed,
        corrected_by="fedpdm.theorem2_corrected",
    ),
    Claim(
        id="fedpdm.theorem2_corrected",
        paper="fedpdm",
        title="Theorem 2's formula corrected, in the accountant's model: the moments accountant's total is linear in q",
        citations=_CITE,
        statement=("A statement about the accountant's model of independent rounds (n Poisson-subsampled Gaussian "
                   "mechanisms), not about the privacy loss of Algorithm 1, whose kept client state breaks that model "
                   "(fedpdm.theorem2_carryover): under the moments accountant (Poisson-subsampled Gaussian, RDP, "
                   "add/remove adjacency), for per-round eps in [0.1, 1], delta in [1e-8, 1e-3] and n = pT >= 15 "
                   "participations, "
                   "eps_total = c0 q eps sqrt(n/(1 - q)) with c0 depending on (eps, delta, n) but constant in q "
                   "within a factor 1.5 over q in [0.02, 0.3]. The exact (PLD) loss of the Poisson-subsampled "
                   "Gaussian has the same scaling. Observed, not asserted: c0 = 0.84-1.22 (RDP, standard conversion; "
                   "the Abadi-style sqrt(2 ln(1/delta)/ln(1.25/delta)) is 1.40 at delta = 1e-5), 0.44-0.72 (PLD), "
                   "1.6-2.0 (without-replacement replace-one bound, eps >= 0.5)."),
        hypotheses=("per-round eps in [0.1, 1]", "delta in [1e-8, 1e-3]", "n = pT >= 15", "q in [0.02, 0.3]",
                    "Poisson subsampling (the moments accountant); Q fixed in advance",
                    "the accountant's model: independent rounds (it checks the scaling of eq. (20), not a bound on "
                    "Algorithm 1 as run)"),
        check=check_linear_scaling,
        expected=Verdict.CONFIRMED,
        reason=("The fitted k = 1 constant varies by at most about 1.3x over q under the Poisson RDP accountant "
                "(cross-checked against dp-accounting to rounding) and by at most 1.25x under the exact "
                "(PLD) loss, on the grid and at random (eps, delta, n) in the regime. For n < 15 (e.g. n = 1, 5) "
                "the asymptotic form does not apply (spreads up to 3x)."),
        corrects="fedpdm.theorem2",
    ),
)
