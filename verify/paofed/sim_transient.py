r"""PAO-Fed transient MSD: the learning curve of the analysis-model simulation
(SIM-A, docs/papers/paofed.md#choice-simulators) against (S1).

The seed's transient recursion (Ch. (4.32)-(4.33) lines 1057-1066, P4 (35), (37) lines 2760-2778, with the
index typos of erratum E13 (docs/papers/paofed.md#erratum-e13) corrected) propagates :math:`E\lVert\tilde
w_{e,n}\rVert^2_\sigma` through
:math:`\mathcal F`. docs/papers/paofed.md#structured writes the same recursion on the covariance, (S1):
:math:`C_{n+1} = \mathcal B\mathcal R_\mu\mathcal A(C_n) + \mu^2\mathcal B(E[\Phi])`,
:math:`\mathrm{MSD}_n = \mathrm{tr}[C_n]_{00}` (:func:`theory.msd.structured.msd_transient`). With the exact
:math:`\mu^2` term (Gaussian fourth moment) it is exact for SIM-A (docs/papers/paofed.md#choice-simulators); the seed's
truncated
:math:`\mathcal F` (assumption A5) is not.

Check (docs/papers/paofed.md#msd-checks, with the instance of docs/papers/paofed.md#review-note-1: the reference
instance of docs/papers/paofed.md#instance-reference at :math:`\mu\lambda_{max} = 0.3`, i.e. :math:`\mu =
0.0967`; docs/papers/paofed.md's "μ = 0.3" is mean-square unstable there): at every :math:`n \in \{1, 5, 20, 50, 100,
200, 400\}` the exact :math:`\mathrm{MSD}_n` must lie in a two-sided Monte-Carlo confidence interval of SIM-A's mean
:math:`\lVert w_n - w^\star\rVert^2`; the intervals are simultaneous (Bonferroni over the n's, total failure probability
:data:`MC_ALPHA`). The interval width is the only tolerance (docs/papers/paofed.md's fixed 0.15 dB is replaced by it).
The truncated model's bias in dB at each n is recorded (docs/papers/paofed.md#structured: 0.1-2.5 dB too
low; docs/papers/paofed.md#review-note-1: 0.06-2.4 dB).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from reference_impl.paofed import run_analysis_model
from theory.msd.instance import reference_instance
from theory.msd.structured import msd_transient
from verify.evidence import result_from_evidence
from verify.paofed.sim_common import MC_ALPHA, cite, mean_confidence_interval, seed_integers, to_db
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, MonteCarlo, Series, Verdict
from verify.tolerance import bonferroni

__all__ = ["CLAIMS", "CLAIM_ID", "N_POINTS", "PROFILE", "SCALE", "check_transient", "evaluate_transient",
           "exact_transient", "seed_transient"]

CLAIM_ID = "paofed.sim_transient"
#: Iterations at which the learning curve is compared (docs/papers/paofed.md#msd-checks).
N_POINTS = (1, 5, 20, 50, 100, 200, 400)
#: mu * lambda_max of the reference instance (docs/papers/paofed.md#review-note-1).
SCALE = 0.3
#: Monte-Carlo runs per chunk and chunks (run in parallel on the executor), per profile.
PROFILE = {"ci": {"chunks": 2, "runs": 400}, "thorough": {"chunks": 4, "runs": 1000}}


def exact_transient(instance, iterations: int) -> np.ndarray:
    """(S1) with the exact (Gaussian fourth-moment) mu^2 term, n = 0..iterations."""
    return msd_transient(instance, iterations, "exact")


def seed_transient(instance, iterations: int) -> np.ndarray:
    """(S1) with the seed's truncated F (assumption A5: mu^2 term dropped from F), n = 0..iterations."""
    return msd_transient(instance, iterations, "seed")


def _chunk(seed: int, *, scale: float, runs: int, horizon: int, n_points: tuple) -> np.ndarray:
    """SIM-A (docs/papers/paofed.md#choice-simulators) squared errors ||w_n - w*||^2 at the n's, shape (len(n_points),
    runs)."""
    run = run_analysis_model(reference_instance(scale), horizon, np.random.default_rng(seed), runs=runs)
    return run.msd[list(n_points)]


def _side_halfwidth_db(mean: float, lower: float, upper: float, predicted: float) -> float:
    """Half-width in dB of the interval on the side of the prediction."""
    if predicted >= mean:
        return to_db(upper) - to_db(mean)
    return to_db(mean) - to_db(lower) if lower > 0 else math.inf


def _evidence(samples: np.ndarray, n_points, predicted, seed_model, alpha: float, params: dict) -> list[Evidence]:
    out = []
    for i, n in enumerate(n_points):
        x = samples[i]
        lower, upper = mean_confidence_interval(x, alpha)
        mean = float(np.mean(x))
        pred = float(predicted[n])
        out.append(Evidence(
            measured=abs(to_db(mean) - to_db(pred)), bound=_side_halfwidth_db(mean, lower, upper, pred),
            holds=bool(lower <= pred <= upper),
            parameters={**params, "n": int(n), "runs": int(x.size), "alpha_per_n": alpha, "sim_a_db": to_db(mean),
                        "predicted_db": to_db(pred), "lcl_db": to_db(lower) if lower > 0 else -math.inf,
                        "ucl_db": to_db(upper), "seed_model_db": to_db(float(seed_model[n])),
                        "seed_model_bias_db": to_db(float(seed_model[n])) - to_db(pred)}))
    return out


def evaluate_transient(*, runs: int, seed: int, scale: float = SCALE, n_points=N_POINTS, alpha: float = MC_ALPHA,
                       theory=exact_transient) -> list[Evidence]:
    r"""SIM-A (docs/papers/paofed.md#choice-simulators) on the reference instance at :math:`\mu\lambda_{max}` =
    ``scale``: one Evidence per n.

    ``measured`` = :math:`|\text{SIM-A} - \text{prediction}|` in dB, ``bound`` = the interval's half-width in
    dB on the prediction's side; the intervals are simultaneous over ``n_points`` at total failure probability
    ``alpha``. ``theory(instance, iterations)`` gives the predicted MSD_n (injectable for mutation tests).
    """
    n_points = tuple(int(n) for n in n_points)
    if not n_points or min(n_points) < 1:
        raise ValueError(f"n_points must be non-empty integers >= 1, got {n_points!r}")
    horizon = max(n_points)
    samples = _chunk(seed, scale=scale, runs=runs, horizon=horizon, n_points=n_points)
    inst = reference_instance(scale)
    return _evidence(samples, n_points, theory(inst, horizon), seed_transient(inst, horizon),
                     bonferroni(alpha, len(n_points)), {"mu_times_lambda_max": scale, "mu": inst.mu, "seed": seed})


def check_transient(ctx: CheckContext, *, theory=exact_transient) -> CheckResult:
    """(S1) exact vs SIM-A (docs/papers/paofed.md#choice-simulators)'s learning curve at n in N_POINTS, simultaneous
    two-sided intervals."""
    p = PROFILE[ctx.profile]
    horizon = max(N_POINTS)
    seeds = seed_integers(ctx.seed_sequence(CLAIM_ID), p["chunks"])
    chunks = ctx.executor.map(functools.partial(_chunk, scale=SCALE, runs=p["runs"], horizon=horizon,
                                                n_points=N_POINTS), seeds)
    samples = np.concatenate(list(chunks), axis=1)
    inst = reference_instance(SCALE)
    exact, seed_model = theory(inst, horizon), seed_transient(inst, horizon)
    alpha = bonferroni(MC_ALPHA, len(N_POINTS))
    evidence = _evidence(samples, N_POINTS, exact, seed_model, alpha,
                         {"mu_times_lambda_max": SCALE, "mu": inst.mu, "chunk_seeds": seeds})
    n_all = np.unique(np.geomspace(1, horizon, 60).astype(int))
    ns = list(N_POINTS)
    get = lambda key: [e.parameters[key] for e in evidence]  # noqa: E731
    figure = FigureSpec(
        name="sim_a_transient", title=f"PAO-Fed reference instance (mu lambda_max = {SCALE}): transient MSD",
        xlabel="iteration n", ylabel="MSD (dB)", xscale="log",
        series=(Series(label="exact (S1) (mu^2 term kept)", x=n_all, y=[to_db(float(exact[n])) for n in n_all],
                       group="exact"),
                Series(label="seed's truncated F (S1)", x=n_all, y=[to_db(float(seed_model[n])) for n in n_all],
                       style="dashed", group="seed"),
                Series(label="SIM-A mean", x=ns, y=get("sim_a_db"), style="points", group="sim"),
                Series(label="SIM-A lower confidence limit", x=ns, y=get("lcl_db"), style="points", group="ci"),
                Series(label="SIM-A upper confidence limit", x=ns, y=get("ucl_db"), style="points", group="ci")))
    bias = {str(e.parameters["n"]): e.parameters["seed_model_bias_db"] for e in evidence}
    sim_minus_seed = {str(e.parameters["n"]): e.parameters["sim_a_db"] - e.parameters["seed_model_db"]
                      for e in evidence}
    return result_from_evidence(
        CLAIM_ID, evidence, ctx=ctx, quantity="|SIM-A (docs/papers/paofed.md#choice-simulators) - (S1) exact| (dB) vs "
                                              "simultaneous CI half-width (dB)",
        what="exact transient MSD lies in the SIM-A (docs/papers/paofed.md#choice-simulators) confidence interval at "
             "every n", figures=[figure],
        form="identity", form_reason="a closed form (the transient MSD of (S1) with the exact F) = a simulation "
                                     "(SIM-A, docs/papers/paofed.md#choice-simulators) at every n, to a simultaneous "
                                     "confidence interval: two-sided",
        monte_carlo=MonteCarlo(n=samples.shape[1], alpha=MC_ALPHA, seed=ctx.seed),
        details={"alpha_per_n": alpha, "n_points": ns, "statistic": "||w_n - w*||^2 per run (i.i.d. over runs)",
                 "seed_model_minus_exact_db": bias, "sim_a_minus_seed_model_db": sim_minus_seed,
                 "seed_model_bias_range_db": [min(bias.values()), max(bias.values())]})


CLAIMS = (
    Claim(
        id=CLAIM_ID,
        paper="paofed",
        title="Transient MSD (4.32)-(4.33): the exact recursion predicts the analysis-model learning curve",
        citations=(cite("Ch. 4 transient MSD", "(4.32)-(4.33)", "1057-1066"),
                   cite("P4 transient MSD", "(35), (37)", "2760-2778")),
        statement=("Under Assumptions 1-5 the server MSD E||w_n - w*||^2 follows the recursion through F "
                   "(Ch. (4.32)-(4.33)); fedcheck checks it, with the exact F (fourth-moment term kept, Gaussian "
                   "regressors), against SIM-A (docs/papers/paofed.md#choice-simulators)'s learning curve at n = 1, 5, "
                   "20, 50, 100, 200, 400 on the reference instance at mu lambda_max = 0.3, and records the bias of "
                   "the seed's truncated F."),
        hypotheses=("linear data y = z^T w* + eta, z ~ N(0, R_k) i.i.d. (I1, docs/papers/paofed.md#assumption-i1, "
                    "I3 (docs/papers/paofed.md#assumption-i3))", "every client has a sample at "
                    "every iteration (I2)", "random selections with E[M] = p_m I (I4)", "b_{k,n,l} ~ Bern(p_k pi_l) "
                    "independent of everything (I5, docs/papers/paofed.md#assumption-i5)",
                    "reference instance of docs/papers/paofed.md#instance-reference at mu lambda_max = 0.3 "
                    "(rho(F_exact) < 1; docs/papers/paofed.md#review-note-1)"),
        check=check_transient,
        expected=Verdict.CONFIRMED,
        reason=("The exact F describes SIM-A (docs/papers/paofed.md#choice-simulators) without "
                "approximation (docs/papers/paofed.md#structured); the prediction lies in every simultaneous interval. "
                "The seed's truncated F is 0.06-2.4 dB too low over the same n (recorded, not gated; "
                "erratum E9 (docs/papers/paofed.md#erratum-e9)). docs/papers/paofed.md's 'mu = 0.3' is mu lambda_max = "
                "0.3 (docs/papers/paofed.md#review-note-1)."),
    ),
)
