r"""PAO-Fed: how far the faithful algorithm (SIM-F, docs/papers/paofed.md#choice-simulators) is from the analysis
model's steady-state MSD.

The mean-square analysis (Ch. 4.3.2, P4 Section IV) assumes independences the algorithm violates by
construction (erratum E15 (docs/papers/paofed.md#erratum-e15) of docs/papers/paofed.md#errata): :math:`S_{k,n-1} =
M_{k,n}` couples B and A, :math:`b_{k,n,0}` needs
:math:`a_{k,n} = 1`, and every message is delivered exactly once. The check runs SIM-F (P1-P9 exactly,
:func:`reference_impl.paofed.run_faithful`) on the reference instance of docs/papers/paofed.md#instance-reference and
reports the gap
:math:`\text{SIM-F} - \mathrm{MSD}_\infty^{exact}` in dB. The statement checked
(replacing docs/papers/paofed.md#msd-checks's loose 3 dB gate on one instance, whose width was a choice, not a
derivation): the analysis is **conservative** for the faithful algorithm, :math:`\mathrm{MSD}_{\text{SIM-F}} <
\mathrm{MSD}_\infty^{exact}`, decided one-sidedly by the upper confidence limit of SIM-F's mean (the Monte-Carlo
interval at the stated failure probability is the only tolerance). The size of the gap is recorded, not gated.
"""

from __future__ import annotations

import functools

import numpy as np

from reference_impl.paofed import run_faithful, time_average
from theory.msd.instance import reference_instance
from theory.msd.structured import msd_steady_state
from verify.evidence import HARD_POINT, SIDES, result_from_evidence
from verify.paofed.sim_common import MC_ALPHA, REFERENCE_TABLE, cite, mean_confidence_interval, seed_integers, to_db
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, MonteCarlo, Series, Verdict
from verify.tolerance import bonferroni

__all__ = ["CLAIMS", "CLAIM_ID", "PROFILE", "check_faithful_gap", "evaluate_faithful_gap", "exact_msd"]

CLAIM_ID = "paofed.sim_faithful_gap"
PROFILE = {
    "ci": {"points": ((0.2, 500), (0.62, 2500)), "runs": 150},
    "thorough": {"points": ((0.05, 3000), (0.1, 3000), (0.2, 3000), (0.62, 5000)), "runs": 400},
}
#: The declared hardest points (``verify.evidence.HARD_POINT``) by mu lambda_max. The noise-free limit does not apply:
#: both sides are linear in the noise variance (a linear recursion driven by the noise), so their ratio does not depend
#: on it. A scan at 150 runs put the smallest gap near 0.2 (-0.97, -1.04, -1.25, -2.06 dB at 0.2, 0.4, 0.55, 0.62; the
#: thorough profile's 0.05 and 0.1 give about -1.2 and -1.1 dB); 0.62 is the boundary of the hypothesis rho(F_exact) < 1
#: (the reference instance's exact threshold is 0.6724/lambda_max).
HARD_POINTS = {0.2: "smallest gap in a scan of mu lambda_max over 0.05-0.62",
               0.62: "near the boundary of rho(F_exact) < 1 (threshold 0.6724/lambda_max)"}


def exact_msd(instance) -> float:
    """MSD_inf from (S2) with the exact F (Gaussian regressors)."""
    return msd_steady_state(instance, "exact").msd


def evaluate_faithful_gap(mu_times_lambda_max: float, *, runs: int, iterations: int, seed: int,
                          alpha: float = MC_ALPHA, theory=exact_msd) -> Evidence:
    r"""SIM-F (docs/papers/paofed.md#choice-simulators) on the reference instance; ``measured`` = the upper end of the
    gap's CI (dB), bound 0 (one-sided: SIM-F below the analysis). The bound's two sides (``verify.evidence.SIDES``) are
    the upper confidence limit of SIM-F's MSD and the analysis' MSD_inf, both linear, so the tightness is their ratio.

    The gap's interval comes from the two-sided interval (failure probability ``alpha``) of the mean of the
    per-run time averages over the second half. ``theory(instance)`` returns MSD_inf (injectable).
    """
    instance = reference_instance(mu_times_lambda_max)
    run = run_faithful(instance, iterations, np.random.default_rng(seed), runs=runs)
    samples = time_average(run.curve, iterations // 2)
    lower, upper = mean_confidence_interval(samples, alpha)
    predicted_db = to_db(float(theory(instance)))
    gap = to_db(float(np.mean(samples))) - predicted_db
    gap_lo = (to_db(lower) if lower > 0 else -np.inf) - predicted_db
    gap_hi = to_db(upper) - predicted_db
    table = REFERENCE_TABLE.get(round(mu_times_lambda_max, 6), {})
    hard = HARD_POINTS.get(round(mu_times_lambda_max, 6))
    return Evidence(measured=float(gap_hi), bound=0.0, holds=bool(gap_hi < 0.0),
                    parameters={"mu_times_lambda_max": mu_times_lambda_max, "mu": instance.mu, "runs": runs,
                                SIDES: (float(upper), float(10.0 ** (predicted_db / 10.0))),
                                **({HARD_POINT: hard} if hard else {}),
                                "iterations": iterations, "seed": seed, "alpha": alpha, "gap_db": gap,
                                "gap_ci_db": [gap_lo, gap_hi], "sim_f_db": gap + predicted_db, "exact_db": predicted_db,
                                "table_sim_f_db": table.get("sim_f"), "table_exact_db": table.get("exact")})


def _point(item, runs, alpha, theory):
    (scale, iterations), seed = item
    return evaluate_faithful_gap(scale, runs=runs, iterations=iterations, seed=seed, alpha=alpha, theory=theory)


def check_faithful_gap(ctx: CheckContext, *, theory=exact_msd) -> CheckResult:
    """SIM-F (docs/papers/paofed.md#choice-simulators) vs the exact steady-state MSD at the reference instance: upper
    confidence limit of the gap below 0 dB."""
    p = PROFILE[ctx.profile]
    alpha = bonferroni(MC_ALPHA, len(p["points"]))
    seeds = seed_integers(ctx.seed_sequence(CLAIM_ID), len(p["points"]))
    evidence = ctx.executor.map(functools.partial(_point, runs=p["runs"], alpha=alpha, theory=theory),
                                list(zip(p["points"], seeds, strict=True)))
    xs = [e.parameters["mu_times_lambda_max"] for e in evidence]
    figure = FigureSpec(
        name="sim_f_gap", title="PAO-Fed reference instance: faithful algorithm "
                                "(SIM-F, docs/papers/paofed.md#choice-simulators) vs the analysis (exact F)",
        xlabel="mu lambda_max", ylabel="MSD_inf (dB)",
        series=(Series(label="exact (S2)", x=xs, y=[e.parameters["exact_db"] for e in evidence]),
                Series(label="SIM-F", x=xs, y=[e.parameters["sim_f_db"] for e in evidence], style="points"),
                Series(label="SIM-F upper confidence limit", x=xs,
                       y=[e.parameters["exact_db"] + e.parameters["gap_ci_db"][1] for e in evidence], style="dashed",
                       group="ci")))
    return result_from_evidence(
        CLAIM_ID, evidence, ctx=ctx, quantity="upper confidence limit of "
                                              "SIM-F (docs/papers/paofed.md#choice-simulators) - exact MSD_inf (dB), "
                                              "one-sided against 0",
        what="the analysis (exact F) over-predicts the faithful algorithm's MSD", figures=[figure],
        monte_carlo=MonteCarlo(n=p["runs"], alpha=MC_ALPHA, seed=ctx.seed),
        details={"gaps_db": {str(e.parameters["mu_times_lambda_max"]): e.parameters["gap_db"] for e in evidence},
                 "spec_4_3_item_9_observed_gaps_db (labelled regression values)": {"0.05": -1.19, "0.1": -1.12,
                                                                                    "0.2": -1.03},
                 "alpha_per_point": alpha})


CLAIMS = (
    Claim(
        id=CLAIM_ID,
        paper="paofed",
        title="The analysis' steady-state MSD (exact F) is conservative for the real PAO-Fed algorithm",
        citations=(cite("Ch. 4 Algorithm 3", "(4.9)-(4.14)", "936-939"),
                   cite("Ch. 4 steady-state MSD", "(4.34)", "1067-1072"),
                   cite("P4 Assumptions 3-4", "", "2651-2661")),
        statement=("The steady-state MSD expression (4.34), derived under Assumptions 1-5 and presented as PAO-Fed's "
                   "steady-state MSD, evaluated with the exact F, is an upper bound for the faithful algorithm "
                   "(SIM-F (docs/papers/paofed.md#choice-simulators): P1-P9, S_{k,n} = M_{k,n+1}, message buffer with "
                   "exactly-once delivery): MSD_SIM-F < MSD_inf^exact, decided one-sidedly by the upper Monte-Carlo "
                   "confidence limit (replacing docs/papers/paofed.md#msd-checks's 3 dB gate)."),
        hypotheses=("reference instance of docs/papers/paofed.md#instance-reference (K = 4, D = 5, l_max = 2, m = 2, "
                    "uniform-subset selection)",
                    "linear Gaussian data, a sample for every client at every iteration", "overlap_rule = none",
                    "rho(F_exact) < 1"),
        check=check_faithful_gap,
        expected=Verdict.CONFIRMED,
        reason=("SIM-F (docs/papers/paofed.md#choice-simulators) is about 1.1 dB below the exact prediction on the "
                "reference instance (docs/papers/paofed.md#msd-checks: -1.19, -1.12, -1.03 dB) and the upper "
                "confidence limit of the gap is below 0 dB at every point: the algorithm's correlations (S_{k,n} = "
                "M_{k,n+1}, exactly-once delivery, which violate I5 (docs/papers/paofed.md#assumption-i5) by "
                "construction, erratum E15 (docs/papers/paofed.md#erratum-e15)) help it, so the analysis "
                "over-predicts. The earlier verdict used a 3 dB gate that was a choice; the size of the gap is now "
                "recorded, not gated. Checked on the reference instance only (mu lambda_max 0.2 and 0.62 at ci; 0.05, "
                "0.1, 0.2, 0.62 thorough). Hardest points: the smallest gap of a scan over mu lambda_max (0.2) and the "
                "boundary of the stability hypothesis (0.62); the noise-free limit does not apply (both sides scale "
                "with the noise variance). Nearly tight: upper confidence limit / prediction about 0.85 at "
                "0.2 (docs/papers/paofed.md)."),
    ),
)
