r"""PGFL Theorem IV (total zCDP) and the experiment's reported total :math:`\phi^{final} = 0.095`.

Finding (docs/papers/pgfl.md#erratum-e1, #erratum-r-b): with :math:`\phi^{(0)} = 0.001`,
:math:`\zeta = 0.99` and the stated schedule :math:`\delta^{2(n)} = \zeta\delta^{2(n-1)}`, Theorem IV
gives 1.939 after 300 iterations, not 0.095. Under client scheduling (3 of 15 clients per server
per iteration) the per-client totals are random and spread on either side of 0.095, so no reading
of the stated schedule gives 0.095 for every client. The only reading that reproduces it for every
client is the sum with the privacy parameter *decaying*, :math:`\sum_{n=1}^{300} 0.001\cdot 0.99^{n-1}`
= 0.0951, i.e. the noise variance growing, the opposite of the stated schedule.
"""

from __future__ import annotations

import math

import numpy as np

from theory.privacy import gaussian_zcdp, zcdp_compose, zcdp_total_geometric, zcdp_total_variance_decay
from verify.evidence import declare_form, result_from_evidence, sample_evidence
from verify.executor import map_seeded
from verify.papers import SEED_PGFL_J, SEED_THESIS
from verify.pgfl import cite
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import gamma, relative_gap

__all__ = ["CLAIMS", "REPORTED_TOTAL", "check_reported_total", "check_total_closed_form",
           "evaluate_reported_total", "evaluate_total_closed_form", "scheduled_totals"]

#: The experiment (seed 004 lines 1515-1521; seed 003 line 436): phi^(0), zeta, iterations, the
#: scheduling (servers x clients per server, clients sampled per server per iteration) and the
#: reported total, printed with three decimals.
EXPERIMENT = {"phi0": 0.001, "zeta": 0.99, "iterations": 300, "servers": 10, "clients_per_server": 15,
              "sampled_per_server": 3}
REPORTED_TOTAL = 0.095
#: Half a unit in the last printed digit of 0.095.
PRINTED_HALF_UNIT = 0.0005
_PROFILE = {"ci": {"draws": 4}, "thorough": {"draws": 64}}
_REPORTED_FORM = ("an equality to the printed digits (Theorem IV's total against the reported 0.095, half a unit in "
                  "the last digit), under every reading of the schedule")
READINGS = ("full participation, delta2(n) = zeta^n delta2(0)",
            "full participation, round 1 uses delta2(0)",
            "scheduled, global iteration index",
            "scheduled, per-client release counter")


def _per_client_totals(reading: str, phi0: float, zeta: float, iterations: int,
                       participation: np.ndarray | None) -> np.ndarray:
    """Theorem IV totals of every client under one reading of the stated (increasing) schedule."""
    if reading == READINGS[0]:
        return np.array([zcdp_total_variance_decay(phi0, zeta, iterations, first_release_decayed=True)])
    if reading == READINGS[1]:
        return np.array([zcdp_total_variance_decay(phi0, zeta, iterations, first_release_decayed=False)])
    per_iteration = phi0 * zeta ** -np.arange(1, iterations + 1, dtype=np.float64)
    if reading == READINGS[2]:
        return per_iteration @ participation
    releases = participation.sum(axis=0)
    return np.array([zcdp_total_variance_decay(phi0, zeta, int(m), first_release_decayed=True) if m else 0.0
                     for m in releases])


def scheduled_totals(rng: np.random.Generator, phi0: float, zeta: float, iterations: int, servers: int,
                     clients_per_server: int, sampled_per_server: int) -> dict[str, list[float]]:
    """One scheduling draw: each server samples clients uniformly without replacement every iteration.

    Returns the (min, max) of the per-client totals under both scheduled readings.
    """
    keys = rng.random((iterations, servers, clients_per_server))
    ranks = keys.argsort(axis=2).argsort(axis=2)
    participation = (ranks < sampled_per_server).reshape(iterations, servers * clients_per_server)
    out = {}
    for reading in READINGS[2:]:
        totals = _per_client_totals(reading, phi0, zeta, iterations, participation.astype(np.float64))
        out[reading] = [float(totals.min()), float(totals.max())]
    return out


def evaluate_reported_total(counterexample) -> Evidence:
    """Re-evaluate a full-participation reading: does Theorem IV give the reported 0.095?"""
    p = dict(counterexample)
    total = float(_per_client_totals(p["reading"], p["phi0"], p["zeta"], p["iterations"], None)[0])
    gap = abs(total - REPORTED_TOTAL)
    return Evidence(measured=total, bound=REPORTED_TOTAL, holds=gap <= PRINTED_HALF_UNIT,
                    parameters={**p, "theorem_iv_total": total})


def check_reported_total(ctx: CheckContext) -> CheckResult:
    """Every reading of the stated schedule against 0.095 (to the printed precision), for every client."""
    e = EXPERIMENT
    draws = map_seeded(ctx.executor, scheduled_totals, ctx.seed_sequence("pgfl.theorem4.reported_total"),
                       _PROFILE[ctx.profile]["draws"], (e["phi0"], e["zeta"], e["iterations"], e["servers"],
                                                        e["clients_per_server"], e["sampled_per_server"]))
    ranges = {r: [min(d[r][0] for d in draws), max(d[r][1] for d in draws)] for r in READINGS[2:]}
    full = [evaluate_reported_total({"phi0": e["phi0"], "zeta": e["zeta"], "iterations": e["iterations"],
                                     "reading": r}) for r in READINGS[:2]]
    # A scheduled reading would hold only if every client's total rounded to 0.095.
    scheduled_holds = {r: max(abs(lo - REPORTED_TOTAL), abs(hi - REPORTED_TOTAL)) <= PRINTED_HALF_UNIT
                       for r, (lo, hi) in ranges.items()}
    decaying = zcdp_total_geometric(e["phi0"], e["zeta"], e["iterations"])
    holds_somewhere = any(x.holds for x in full) or any(scheduled_holds.values())
    worst = full[0]  # the paper's own schedule: delta2(0) fixed, delta2(n) = zeta delta2(n-1) for n >= 1
    n = np.arange(1, e["iterations"] + 1)
    figure = FigureSpec(
        name="cumulative_total", title="PGFL privacy total after n iterations (phi0 = 0.001, zeta = 0.99)",
        xlabel="iteration n", ylabel="total zCDP", yscale="log",
        series=(Series(label="Theorem IV, stated schedule (variance x zeta each iteration)", x=n,
                       y=np.cumsum(e["phi0"] * e["zeta"] ** -n)),
                Series(label="decaying phi (variance / zeta each iteration)", x=n,
                       y=np.cumsum(e["phi0"] * e["zeta"] ** (n - 1))),
                Series(label="reported phi_final = 0.095", x=(1, n[-1]), y=(REPORTED_TOTAL, REPORTED_TOTAL),
                       style="dashed")))
    details = {"readings": {**{r: x.measured for r, x in zip(READINGS[:2], full, strict=True)},
                            **{f"{r} (min, max over clients and draws)": v for r, v in ranges.items()}},
               "decaying_sum_reproducing_0.095": decaying, "scheduling_draws": len(draws)}
    if holds_somewhere:
        return declare_form(CheckResult(claim_id="pgfl.theorem4.reported_total", verdict=Verdict.CONFIRMED,
                           summary="a reading of the stated schedule gives 0.095 for every client",
                           quantity="Theorem IV total", measured=worst.measured, bound=REPORTED_TOTAL,
                           margin=0.0, seed=ctx.seed, figures=(figure,), details=details),
                            "identity", _REPORTED_FORM)
    return declare_form(CheckResult(
        claim_id="pgfl.theorem4.reported_total", verdict=Verdict.REFUTED,
        summary=(f"stated schedule gives {full[0].measured:.5g} (full participation) and per-client totals "
                 f"{ranges[READINGS[3]][0]:.3g}-{ranges[READINGS[3]][1]:.3g} (scheduled); only the decaying sum "
                 f"gives {decaying:.4g}"),
        quantity="Theorem IV total zCDP after 300 iterations vs the reported 0.095",
        measured=worst.measured, bound=REPORTED_TOTAL, margin=REPORTED_TOTAL - worst.measured,
        counterexample=dict(worst.parameters), corrected_claim="pgfl.theorem4.total_closed_form",
        seed=ctx.seed, figures=(figure,), details=details), "identity", _REPORTED_FORM)


def evaluate_total_closed_form(phi0: float, zeta: float, rounds: int, sensitivity: float, *,
                               total_fn=zcdp_total_variance_decay) -> Evidence:
    r"""Closed form vs the composition of the per-round Gaussian mechanisms it describes.

    Round :math:`n` adds noise of variance :math:`\zeta^n\Delta^2/(2\phi^{(0)})`; its zCDP parameter
    (:func:`theory.privacy.gaussian_zcdp`) is summed exactly (``math.fsum``).
    """
    sigma0 = sensitivity / math.sqrt(2.0 * phi0)
    direct = zcdp_compose([gaussian_zcdp(sensitivity, sigma0 * zeta ** (n / 2.0)) for n in range(1, rounds + 1)])
    closed = total_fn(phi0, zeta, rounds, first_release_decayed=True)
    # Both evaluations raise zeta to powers up to N, whose rounding is amplified by the exponent's size
    # x = N |ln zeta| (pow/expm1 condition numbers): closed form ~ (4x + 10) u via expm1(N log G);
    # composed ~ (x + 8) u per term (zeta**(n/2) squared inside gaussian_zcdp), fsum adds u.
    x = rounds * abs(math.log(zeta))
    allowance = gamma(math.ceil(4.0 * x) + 12) + gamma(math.ceil(x) + 12)
    ratio = float(relative_gap(closed, direct)) / allowance
    return Evidence(measured=ratio, bound=1.0, holds=ratio <= 1.0,
                    parameters={"phi0": phi0, "zeta": zeta, "rounds": rounds, "sensitivity": sensitivity,
                                "closed_form": closed, "composed": direct})


def _closed_form_batch(rng: np.random.Generator, count: int, total_fn) -> list[Evidence]:
    out = []
    for _ in range(count):
        zeta = float(rng.uniform(0.5, 1.0))
        max_rounds = int(min(2000, 600 / max(-math.log(zeta), 1e-12)))  # keep zeta^-N inside the double range
        out.append(evaluate_total_closed_form(float(10 ** rng.uniform(-5, 0)), zeta,
                                              int(rng.integers(1, max_rounds + 1)),
                                              float(10 ** rng.uniform(-3, 2)), total_fn=total_fn))
    return out


def check_total_closed_form(ctx: CheckContext, *, total_fn=zcdp_total_variance_decay) -> CheckResult:
    """Random (phi0, zeta, N, Delta) and the experiment's (0.001, 0.99, 300)."""
    evidence = sample_evidence(ctx, "pgfl.theorem4.total_closed_form", _closed_form_batch,
                               4 if ctx.profile == "ci" else 16, (25, total_fn))
    evidence.append(evaluate_total_closed_form(0.001, 0.99, 300, 1.0, total_fn=total_fn))
    rounds = np.arange(1, 301)
    figure = FigureSpec(
        name="total_vs_rounds", title="Theorem IV total, phi0 = 0.001, zeta = 0.99",
        xlabel="iterations N", ylabel="phi_total(N)", yscale="log",
        series=(Series(label="closed form phi0 (zeta^-N - 1)/(1 - zeta)", x=rounds, group="a",
                       y=[zcdp_total_variance_decay(0.001, 0.99, int(N), first_release_decayed=True) for N in rounds]),
                Series(label="sum of per-round Gaussian zCDP", x=rounds[9::20], group="a", style="points",
                       y=np.cumsum([gaussian_zcdp(1.0, math.sqrt(0.99**n / 0.002)) for n in rounds])[9::20])))
    return result_from_evidence(
        "pgfl.theorem4.total_closed_form", evidence, ctx=ctx,
        quantity="relative gap closed form vs composed per-round Gaussian zCDP / rounding-error bound",
        what="phi_total(N) = phi0 (zeta^-N - 1)/(1 - zeta)", figures=[figure],
        form="identity", form_reason=("a closed form against the exact composition of the per-round Gaussian "
                                      "mechanisms, to certified rounding"),
        details={"experiment_total": zcdp_total_variance_decay(0.001, 0.99, 300, first_release_decayed=True)})


_CITE_REPORTED = (cite(label="Section 5.5 (Fig. 5.1(c) setting)", lines="1521", seed=SEED_THESIS),
                  cite(label="Section V (Fig. 3 setting)", lines="436", seed=SEED_PGFL_J),
                  cite(label="Appendix E (journal text)", lines="3286", seed=SEED_THESIS))

CLAIMS = (
    Claim(
        id="pgfl.theorem4.reported_total",
        title="Experiment: phi0 = 0.001, zeta = 0.99 gives phi_final = 0.095 for every client",
        citations=_CITE_REPORTED,
        statement=("With the noise perturbation (5.11), phi_k^(0) = 0.001 for all k and zeta = 0.99, all "
                   "algorithms satisfy phi_k^final-zCDP throughout the 300 iterations with "
                   "phi_k^final = 0.095 for every client k."),
        hypotheses=("noise variance delta2(n) = zeta delta2(n-1) (seed 004 line 1297)",
                    "total = sum of per-iteration zCDP (Theorem 5.4)",
                    "300 iterations; client scheduling 3 of 15 per server"),
        check=check_reported_total,
        expected=Verdict.REFUTED,
        reason=("The stated schedule makes phi^(n) grow as zeta^-n: 1.939 after 300 iterations with full "
                "participation; under scheduling the per-client totals are random (about 0.05-0.11 with a "
                "per-client counter, 0.25-0.55 with the global index), never 0.095 for every client. "
                "0.0951 is the sum with phi decaying, the opposite direction (docs/papers/pgfl.md#erratum-e1)."),
        severity="false",
        reproduce=evaluate_reported_total,
        corrected_by="pgfl.theorem4.total_closed_form",
    ),
    Claim(
        id="pgfl.theorem4.total_closed_form",
        title="Theorem IV total under the stated schedule: phi0 (zeta^-N - 1)/(1 - zeta)",
        citations=(cite(label="Theorem IV", equation="(48)", seed=SEED_PGFL_J),
                   cite(label="Theorem 5.4", equation="(5.33)", lines="1482-1487", seed=SEED_THESIS)),
        statement=("Corrected statement: with delta2(n) = zeta^n delta2(0) and phi^(0) = Delta^2/(2 delta2(0)), "
                   "a client releasing at iterations 1..N is phi_total-zCDP with "
                   "phi_total = phi^(0) (zeta^-N - 1)/(1 - zeta), the composition of its per-round Gaussian "
                   "mechanisms; 1.93911 for phi^(0) = 0.001, zeta = 0.99, N = 300 (a client with m releases "
                   "under a per-client counter: the same with N = m)."),
        hypotheses=("zeta in (0, 1]", "phi^(0) > 0", "fixed sensitivity Delta (Lemma 1)", "N >= 1"),
        check=check_total_closed_form,
        expected=Verdict.CONFIRMED,
        reason="Closed form agrees with the exact sum of per-round Gaussian zCDP within rounding.",
        corrects="pgfl.theorem4.reported_total",
    ),
)
