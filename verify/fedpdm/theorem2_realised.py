r"""FedPDM-DP Theorem 2 per client: the realised participation count :math:`n_i`, not :math:`p_iT` (spec Review notes).

(20) accounts a client's total loss with its **expected** number of participations :math:`p_iT`. The server sees who
uploads, so a per-client guarantee must be accounted with the **realised** count :math:`n_i` (with
:math:`S_0 = [N]`, :math:`E[n_i] = 1 + p(T - 1)`, E9). The schedules are drawn by the reference implementation's
client sampling (:func:`reference_impl.fedpdm.participation_schedule`); totals come from the Poisson-subsampled
Gaussian accountant of :mod:`verify.fedpdm.theorem2_total` (in-house RDP, standard conversion; dp-accounting's PLD as
the near-exact cross-check), with :math:`z = \sqrt{2\ln(1.25/\delta)}/\varepsilon` (18).

* ``fedpdm.theorem2_realised`` (refuted): the accountant's total at :math:`p T` bounds every client's loss. With
  the experiment's :math:`N = 100`, :math:`K = 5`, :math:`T = 300` the busiest client participates about 26 times
  (5-95 %: 24-30), and its total is about 1.3x the total at :math:`pT = 15`.
* ``fedpdm.theorem2_realised_corrected`` (confirmed): accounted with its realised :math:`n_i`, every client with
  :math:`n_i \ge 15` is within the linear form :math:`c_0 q\varepsilon\sqrt{n_i/(1-q)}` with the Abadi constant
  :math:`c_0 = \sqrt{2\ln(1/\delta)/\ln(1.25/\delta)}` (per-round :math:`\varepsilon \le 1`, :math:`q \in [0.02, 0.3]`), and
  the PLD total is below the RDP one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from reference_impl.fedpdm import participation_schedule
from theory.privacy.subsampled import abadi_constant_c0, total_epsilon_fedpdm_linear
from verify.evidence import report_counterexample, result_from_evidence, sample_evidence
from verify.fedpdm import cite
from verify.fedpdm.theorem2_total import epsilon_total
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import gamma

__all__ = ["CLAIMS", "REALISED_COUNTEREXAMPLE", "check_realised", "check_realised_corrected", "evaluate_realised",
           "evaluate_realised_corrected", "max_count_distribution"]

#: The experiment's federation (spec 5.2) with per-round eps = 0.5, q = 0.25 (Q = 5 of 600/30 batches).
REALISED_COUNTEREXAMPLE = {"N": 100, "K": 5, "T": 300, "epsilon": 0.5, "delta": 1e-5, "q": 0.25, "seed": 0}
_PROFILE = {"ci": {"draws": 2, "distribution_runs": 200}, "thorough": {"draws": 16, "distribution_runs": 2000}}


def _counts(params: Mapping[str, Any]) -> np.ndarray:
    p = dict(params)
    mask = participation_schedule(int(p["N"]), int(p["K"]), int(p["T"]), np.random.default_rng(int(p["seed"])))
    return mask[0].sum(axis=0)


def evaluate_realised(params: Mapping[str, Any], *, count: str = "expected") -> Evidence:
    r"""Busiest client's total (accountant at :math:`\max_i n_i`) over the total at :math:`\lceil pT\rceil` (``count =
    "expected"``, the seed's) or at the realised maximum itself (``"realised"``, a control that must hold).
    Holds when the ratio is <= 1."""
    p = dict(params)
    n = _counts(p)
    n_max = int(n.max())
    pT = int(p["K"]) / int(p["N"]) * int(p["T"])
    nominal = math.ceil(pT - 1e-9) if count == "expected" else n_max
    eps, delta, q = float(p["epsilon"]), float(p["delta"]), float(p["q"])
    busiest = epsilon_total("rdp", eps, delta, n_max, q)[0]
    accounted = epsilon_total("rdp", eps, delta, nominal, q)[0]
    ratio = busiest / accounted
    return Evidence(measured=ratio, bound=1.0, holds=ratio <= 1.0 + gamma(64),
                    parameters={**p, "count": count, "pT": pT, "max_n_i": n_max, "min_n_i": int(n.min()),
                                "fraction_above_pT": float(np.mean(n > pT)), "eps_total_busiest": busiest,
                                "eps_total_accounted": accounted})


def evaluate_realised_corrected(params: Mapping[str, Any], *, c0_fn=abadi_constant_c0) -> list[Evidence]:
    r"""Every distinct realised :math:`n_i \ge 15` of a schedule: RDP total <= :math:`c_0 q\varepsilon\sqrt{n_i/(1-q)}`."""
    p = dict(params)
    eps, delta, q = float(p["epsilon"]), float(p["delta"]), float(p["q"])
    c0 = c0_fn(delta)
    out = []
    for n_i in sorted(set(int(v) for v in _counts(p)) ):
        if n_i < 15:
            continue
        total = epsilon_total("rdp", eps, delta, n_i, q)[0]
        bound = total_epsilon_fedpdm_linear(eps, q, 1.0, n_i, c0)
        out.append(Evidence(measured=total, bound=bound, holds=total <= bound,
                            parameters={**p, "n_i": n_i, "c0": c0}))
    return out


def max_count_distribution(N: int, K: int, T: int, runs: int, seed: int = 0) -> dict:
    """Quantiles of the busiest client's realised count over ``runs`` schedules (S_0 = [N])."""
    mask = participation_schedule(N, K, T, np.random.default_rng(seed), runs=runs)
    n_max = mask.sum(axis=1).max(axis=1)
    return {"median": float(np.median(n_max)), "q05": float(np.quantile(n_max, 0.05)),
            "q95": float(np.quantile(n_max, 0.95)), "expected_pT": K / N * T, "expected_with_S0": 1 + K / N * (T - 1),
            "runs": runs}


def reproduce_realised(counterexample) -> Evidence:
    return evaluate_realised({k: v for k, v in dict(counterexample).items() if k in REALISED_COUNTEREXAMPLE})


def _grid():
    return [{**REALISED_COUNTEREXAMPLE, "epsilon": e, "q": q} for e in (0.5, 1.0) for q in (0.05, 0.25)]


def _batch(rng: np.random.Generator, count: str) -> list[Evidence]:
    N = int(rng.choice([20, 50, 100]))
    K = int(rng.integers(1, max(2, N // 10) + 1))
    T = int(rng.choice([100, 300]))
    params = {"N": N, "K": K, "T": T, "epsilon": float(rng.uniform(0.2, 1.0)), "delta": 1e-5,
              "q": float(rng.choice([0.05, 0.1, 0.25])), "seed": int(rng.integers(2**31))}
    return [evaluate_realised(params, count=count)]


def check_realised(ctx: CheckContext) -> CheckResult:
    """The experiment's federation at four (eps, q) and random federations: busiest client vs the pT account."""
    prof = _PROFILE[ctx.profile]
    evidence = [evaluate_realised(p) for p in _grid()]
    evidence += sample_evidence(ctx, "fedpdm.theorem2_realised", _batch, prof["draws"], ("expected",))
    chosen = evaluate_realised(REALISED_COUNTEREXAMPLE)
    dist = max_count_distribution(100, 5, 300, prof["distribution_runs"])
    ns = np.arange(10, 41)
    figure = FigureSpec(name="theorem2_realised_count", title="Per-client total vs participations (eps = 0.5, q = 0.25)",
                        xlabel="participations n", ylabel="eps_total (Poisson RDP)",
                        series=(Series(label="accountant total", x=ns,
                                       y=[epsilon_total("rdp", 0.5, 1e-5, int(n), 0.25)[0] for n in ns]),
                                Series(label="pT = 15 (the seed's count)", x=(15, 15), y=(0.0, 3.0), style="dashed"),
                                Series(label=f"busiest client, median {dist['median']:g}", x=(dist["median"],) * 2,
                                       y=(0.0, 3.0), style="dashed")))
    pld = {f"n={n}": epsilon_total("pld", 0.5, 1e-5, n, 0.25) for n in (15, chosen.parameters["max_n_i"])}
    result = result_from_evidence(
        "fedpdm.theorem2_realised", evidence, ctx=ctx,
        quantity="total of the busiest client (accountant at max_i n_i) / total at pT",
        what="accounting with the expected count pT bounds every client's total", figures=[figure],
        corrected_claim="fedpdm.theorem2_realised_corrected",
        details={"busiest_count_distribution_N100_K5_T300": dist, "pld_bracket_eps0.5_q0.25": pld})
    return report_counterexample(result, chosen, "the experiment's federation N = 100, K = 5, T = 300, seed 0")


def check_realised_corrected(ctx: CheckContext, *, c0_fn=abadi_constant_c0) -> CheckResult:
    """Every client's realised n_i >= 15: RDP total within the linear form with the Abadi c0; PLD below RDP."""
    evidence = [e for p in _grid() for e in evaluate_realised_corrected(p, c0_fn=c0_fn)]
    control = [evaluate_realised(p, count="realised") for p in _grid()]
    pld_vs_rdp = []
    for n in (15, 26):
        pld_hi = epsilon_total("pld", 0.5, 1e-5, n, 0.25)[1]
        rdp = epsilon_total("rdp", 0.5, 1e-5, n, 0.25)[0]
        pld_vs_rdp.append(Evidence(measured=pld_hi, bound=rdp, holds=pld_hi <= rdp,
                                   parameters={"check": "PLD (pessimistic) <= RDP", "n": n}))
    ratios = [e.measured / e.bound for e in evidence]
    ns = np.arange(15, 41)
    series = []
    for eps, q in ((0.5, 0.25), (1.0, 0.05)):
        series.append(Series(label=f"RDP total at n, eps = {eps}, q = {q}", x=ns, group=f"{eps}{q}",
                             y=[epsilon_total("rdp", eps, 1e-5, int(n), q)[0] for n in ns]))
        series.append(Series(label="c0 q eps sqrt(n/(1-q)), Abadi c0", x=ns, group=f"{eps}{q}", style="dashed",
                             y=[total_epsilon_fedpdm_linear(eps, q, 1.0, int(n), c0_fn(1e-5)) for n in ns]))
    figure = FigureSpec(name="theorem2_realised_linear_form", title="Total at the realised count vs the linear (20) with n_i",
                        xlabel="realised participations n_i", ylabel="eps_total (delta = 1e-5)", series=tuple(series))
    return result_from_evidence(
        "fedpdm.theorem2_realised_corrected", evidence + control + pld_vs_rdp, ctx=ctx, figures=[figure],
        quantity="RDP total at the realised n_i / (c0 q eps sqrt(n_i/(1-q)))",
        what="per-client total at the realised count within the linear (20) with n_i",
        details={"max_ratio_to_linear_form": max(ratios), "min_ratio_to_linear_form": min(ratios)})


_CITE = (cite("Theorem 2", "(20)", "199-207"), cite("Algorithm 1 (client sampling, S_0 = [N])", "", "158-166"))

CLAIMS = (
    Claim(
        id="fedpdm.theorem2_realised",
        title="Theorem 2 per client: the total loss after T rounds is that of p_i T participations",
        citations=_CITE,
        statement=("Client i's total privacy loss after T rounds is the composition over its p_i T expected "
                   "participations, eps_total = c0 q eps sqrt(p_i T/(1 - q)): a per-client guarantee."),
        hypotheses=("uniform K-subsets per round, S_0 = [N]", "per-round eps in [0.2, 1], q in [0.05, 0.25]",
                    "Poisson-subsampled Gaussian accountant (RDP, standard conversion)"),
        check=check_realised,
        expected=Verdict.REFUTED,
        reason=("The server sees who uploads, so the guarantee is per realised schedule: with N = 100, K = 5, T = 300 "
                "the busiest client takes part about 26 times (5-95 %: 24-30) instead of 15, and its total is about "
                "1.3x the pT account (eps = 0.5, q = 0.25: the ratio sqrt(26/15) = 1.32 of the Review notes)."),
        severity="false",
        reproduce=reproduce_realised,
        corrected_by="fedpdm.theorem2_realised_corrected",
    ),
    Claim(
        id="fedpdm.theorem2_realised_corrected",
        title="Theorem 2 per client, corrected: account with the realised count n_i (linear in q)",
        citations=_CITE,
        statement=("Client i's total after T rounds is the accountant at its realised count n_i (max_i n_i for a "
                   "uniform guarantee; target_total_eps calibrates on it); for n_i >= 15, per-round eps <= 1 and "
                   "q in [0.05, 0.25] it is at most c0 q eps sqrt(n_i/(1 - q)) with c0 = sqrt(2 ln(1/delta)/ln(1.25/delta))."),
        hypotheses=("n_i >= 15", "per-round eps in {0.5, 1}", "q in {0.05, 0.25}", "delta = 1e-5"),
        check=check_realised_corrected,
        expected=Verdict.CONFIRMED,
        reason=("Every realised count of the experiment's schedules is within the linear form with the Abadi constant "
                "(ratio 0.6-0.85), the realised-count account bounds the busiest client by construction, and the PLD "
                "total lies below the RDP one."),
        corrects="fedpdm.theorem2_realised",
    ),
)
