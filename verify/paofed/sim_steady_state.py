r"""PAO-Fed steady-state MSD: the analysis-model simulation (SIM-A, docs/papers/paofed.md#choice-simulators) against the
exact closed form.

The seed's steady-state expression (Ch. (4.34) with the sentence of line 1072, P4 (38) with the sentence
lost at line 2785, erratum E14 (docs/papers/paofed.md#erratum-e14)) is :math:`\mathrm{MSD}_\infty = \mu^2 h^T(I -
\mathcal F^T)^{-1}\sigma_J`. With the exact :math:`\mathcal F` (the :math:`\mu^2` fourth-moment term kept, Gaussian
regressors; docs/papers/paofed.md#mean-square, docs/papers/paofed.md#structured) it is exact for the process the
analysis describes: SIM-A of docs/papers/paofed.md#choice-simulators (:func:`reference_impl.paofed.run_analysis_model`,
hypotheses I1-I5 (docs/papers/paofed.md#assumption-i1 to #assumption-i5)). The check simulates SIM-A on the reference
instance of docs/papers/paofed.md#instance-reference and asks whether the exact prediction lies in a two-sided
Monte-Carlo confidence interval of the simulated mean.

Statistic: each run's time average of :math:`\lVert w_n - w^\star\rVert^2` over the second half of the
horizon (i.i.d. over runs). Prediction: the mean of the exact transient :math:`\mathrm{MSD}_n` ((S1),
:func:`theory.msd.structured.msd_transient`) over the same window, so a residual transient biases
neither side. The interval's width is the only tolerance (docs/papers/paofed.md#msd-checks recipe, with its fixed 0.25
dB replaced by the confidence interval).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from reference_impl.paofed import run_analysis_model, time_average
from theory.msd.instance import reference_instance
from theory.msd.structured import msd_steady_state, msd_transient
from verify.evidence import result_from_evidence
from verify.paofed.sim_common import (
    MC_ALPHA,
    REFERENCE_TABLE,
    cite,
    mean_confidence_interval,
    seed_integers,
    to_db,
)
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, MonteCarlo, Series, Verdict
from verify.tolerance import bonferroni

__all__ = ["CLAIMS", "CLAIM_ID", "PROFILE", "check_steady_state", "evaluate_steady_state", "exact_msd_curve",
           "learning_curve_figure", "simulate_point", "simulate_points"]

CLAIM_ID = "paofed.sim_steady_state"
#: Points mu * lambda_max of the reference instance, runs and iterations (per point) of each profile.
PROFILE = {
    "ci": {"points": ((0.1, 600), (0.2, 400)), "runs": 150},
    "thorough": {"points": ((0.05, 3000), (0.1, 3000), (0.2, 3000)), "runs": 400},
}


def exact_msd_curve(instance, iterations: int) -> np.ndarray:
    """Exact transient MSD_n, n = 0..iterations ((S1) with the Gaussian mu^2 term)."""
    return msd_transient(instance, iterations, "exact")


def simulate_point(mu_times_lambda_max: float, runs: int, iterations: int, seed: int, alpha: float, theory):
    instance = reference_instance(mu_times_lambda_max)
    run = run_analysis_model(instance, iterations, np.random.default_rng(seed), runs=runs)
    start = iterations // 2
    samples = time_average(run.msd, start)
    predicted_curve = np.asarray(theory(instance, iterations), dtype=np.float64)
    predicted = float(np.mean(predicted_curve[start:]))
    lower, upper = mean_confidence_interval(samples, alpha)
    mean = float(np.mean(samples))
    sim_db, pred_db = to_db(mean), to_db(predicted)
    if mean >= predicted:
        bound = sim_db - to_db(lower) if lower > 0 else math.inf
    else:
        bound = to_db(upper) - sim_db
    holds = bool(lower <= predicted <= upper)
    table = REFERENCE_TABLE.get(round(mu_times_lambda_max, 6), {})
    evidence = Evidence(
        measured=abs(sim_db - pred_db), bound=bound, holds=holds,
        parameters={"mu_times_lambda_max": mu_times_lambda_max, "mu": instance.mu, "runs": runs,
                    "iterations": iterations, "window": [start, iterations], "seed": seed, "alpha": alpha,
                    "sim_a_db": sim_db, "exact_db": pred_db, "lcl_db": to_db(lower) if lower > 0 else -math.inf,
                    "ucl_db": to_db(upper), "table_exact_db": table.get("exact"), "table_sim_a_db": table.get("sim_a")})
    return evidence, run.msd.mean(axis=1), predicted_curve


def evaluate_steady_state(mu_times_lambda_max: float, *, runs: int, iterations: int, seed: int,
                          alpha: float = MC_ALPHA, theory=exact_msd_curve) -> Evidence:
    r"""SIM-A (docs/papers/paofed.md#choice-simulators) on the reference instance at :math:`\mu\lambda_{max}`: is the
    exact window-mean MSD in the CI?

    ``measured`` = :math:`|\text{SIM-A} - \text{exact}|` in dB; ``bound`` = the confidence interval's
    half-width in dB on the side of the discrepancy (two-sided interval at failure probability ``alpha``).
    ``theory(instance, iterations)`` returns the predicted MSD_n (injectable for mutation tests).
    """
    return simulate_point(mu_times_lambda_max, runs, iterations, seed, alpha, theory)[0]


def _point(item, runs, alpha, theory):
    (scale, iterations), seed = item
    return simulate_point(scale, runs, iterations, seed, alpha, theory)


def simulate_points(ctx: CheckContext, claim_id: str, theory) -> tuple[list, float]:
    """SIM-A (docs/papers/paofed.md#choice-simulators) against ``theory`` at every point of the profile (seeded from
    ``claim_id``), through the executor: ``([(evidence, sim-a curve, predicted curve), ...], alpha per point)``."""
    p = PROFILE[ctx.profile]
    alpha = bonferroni(MC_ALPHA, len(p["points"]))
    seeds = seed_integers(ctx.seed_sequence(claim_id), len(p["points"]))
    outcomes = ctx.executor.map(functools.partial(_point, runs=p["runs"], alpha=alpha, theory=theory),
                                list(zip(p["points"], seeds, strict=True)))
    return outcomes, alpha


def learning_curve_figure(ctx: CheckContext, outcomes, *, name: str, title: str, prediction: str) -> FigureSpec:
    """SIM-A (docs/papers/paofed.md#choice-simulators) (points) and the predicted MSD curve of every point, one colour
    per step size (log-spaced iterations)."""
    curves = []
    for (scale, iterations), (_, sim, pred) in zip(PROFILE[ctx.profile]["points"], outcomes, strict=True):
        n = np.unique(np.geomspace(1, iterations, 80).astype(int))
        label = f"mu lambda_max = {scale}"
        curves.append(Series(label=f"SIM-A, {label}", x=n, y=10 * np.log10(sim[n]), style="points", group=label))
        curves.append(Series(label=f"{prediction}, {label}", x=n, y=10 * np.log10(pred[n]), group=label))
    return FigureSpec(name=name, title=title, xlabel="iteration n", ylabel="MSD (dB)", series=tuple(curves),
                      xscale="log")


def check_steady_state(ctx: CheckContext, *, theory=exact_msd_curve) -> CheckResult:
    """SIM-A (docs/papers/paofed.md#choice-simulators) vs the exact (S1)/(S2) prediction at the reference instance, one
    seeded point per mu lambda_max."""
    p = PROFILE[ctx.profile]
    outcomes, alpha = simulate_points(ctx, CLAIM_ID, theory)
    evidence = [o[0] for o in outcomes]
    learning = learning_curve_figure(ctx, outcomes, name="sim_a_learning_curves", prediction="exact (S1)",
                                     title="PAO-Fed reference instance: "
                                           "SIM-A (docs/papers/paofed.md#choice-simulators) vs exact transient MSD")
    xs = [e.parameters["mu_times_lambda_max"] for e in evidence]
    steady = FigureSpec(
        name="sim_a_steady_state", title="Steady-state MSD: SIM-A (docs/papers/paofed.md#choice-simulators) confidence "
                                         "interval and exact prediction",
        xlabel="mu lambda_max", ylabel="MSD_inf (dB)",
        series=(Series(label="exact (window mean of (S1))", x=xs, y=[e.parameters["exact_db"] for e in evidence]),
                Series(label="SIM-A mean", x=xs, y=[e.parameters["sim_a_db"] for e in evidence], style="points"),
                Series(label="SIM-A lower confidence limit", x=xs, y=[e.parameters["lcl_db"] for e in evidence],
                       style="dashed", group="ci"),
                Series(label="SIM-A upper confidence limit", x=xs, y=[e.parameters["ucl_db"] for e in evidence],
                       style="dashed", group="ci")))
    regression = {}
    for e in evidence:
        scale = e.parameters["mu_times_lambda_max"]
        if e.parameters["table_exact_db"] is not None:
            s2 = to_db(msd_steady_state(reference_instance(scale), "exact").msd)
            regression[str(scale)] = {"S2_exact_db": s2, "spec_table_exact_db": e.parameters["table_exact_db"],
                                      "spec_table_sim_a_db": e.parameters["table_sim_a_db"]}
    return result_from_evidence(
        CLAIM_ID, evidence, ctx=ctx, quantity="|SIM-A (docs/papers/paofed.md#choice-simulators) - exact MSD| (dB) vs "
                                              "confidence-interval half-width (dB)",
        what="exact steady-state MSD lies in the SIM-A (docs/papers/paofed.md#choice-simulators) confidence "
             "interval", figures=[learning, steady],
        form="identity", form_reason="a closed form (MSD_inf from (S2) with the exact F) = a simulation "
                                     "(SIM-A, docs/papers/paofed.md#choice-simulators), to the Monte-Carlo confidence "
                                     "interval: two-sided, no bound to rate",
        monte_carlo=MonteCarlo(n=p["runs"], alpha=MC_ALPHA, seed=ctx.seed),
        details={"alpha_per_point": alpha, "statistic": "per-run time average over the second half",
                 "regression_values (docs/papers/paofed.md#instance-reference, labelled, not a "
                 "certificate)": regression})


CLAIMS = (
    Claim(
        id=CLAIM_ID,
        paper="paofed",
        title="Steady-state MSD (4.34): the exact closed form predicts the analysis-model simulation",
        citations=(cite("Ch. 4 steady-state MSD", "(4.34)", "1067-1072"),
                   cite("P4 steady-state MSD", "(38)", "2780-2785"),
                   cite("Ch. 4 transient MSD", "(4.32)-(4.33)", "1057-1066")),
        statement=("Under Assumptions 1-5 the steady-state MSD of the server model is "
                   "MSD_inf = mu^2 h^T (I - F^T)^{-1} bvec(blockdiag(I_D, 0, ..., 0)); fedcheck checks it with the "
                   "exact F (fourth-moment term kept, Gaussian regressors) against a simulation of the very model "
                   "the analysis describes (SIM-A (docs/papers/paofed.md#choice-simulators): independent a, M, b, S, z "
                   "at every iteration)."),
        hypotheses=("linear data y = z^T w* + eta, z ~ N(0, R_k) i.i.d. (I1, docs/papers/paofed.md#assumption-i1, "
                    "I3 (docs/papers/paofed.md#assumption-i3))", "every client has a sample at every "
                    "iteration (I2)", "random selections with E[M] = p_m I (I4)",
                    "b_{k,n,l} ~ Bern(p_k pi_l) independent "
                    "of everything (I5, docs/papers/paofed.md#assumption-i5)",
                    "rho(F_exact) < 1 (mu lambda_max <= 0.2 on the reference instance)"),
        check=check_steady_state,
        expected=Verdict.CONFIRMED,
        reason=("The exact F describes SIM-A (docs/papers/paofed.md#choice-simulators) without "
                "approximation (docs/papers/paofed.md#mean-square, docs/papers/paofed.md#structured); the prediction "
                "lies in the Monte-Carlo interval at every point (docs/papers/paofed.md#instance-reference: exact "
                "-30.073 dB, SIM-A -30.076 dB at 0.1). The seed's truncated F is biased low (-0.2 to -0.95 dB here, "
                "erratum E9 (docs/papers/paofed.md#erratum-e9)); the faithful algorithm deviates further "
                "(paofed.sim_faithful_gap, erratum E15 (docs/papers/paofed.md#erratum-e15))."),
        corrects="paofed.seed_msd_formulas",
    ),
)
