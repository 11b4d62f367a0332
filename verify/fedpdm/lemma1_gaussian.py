r"""FedPDM-DP Lemma 1: the classical Gaussian calibration, as the seed uses it, against the exact privacy profile.

The seed's Lemma 1 (eq. (5)) gives :math:`\sigma^2 = 2s^2\ln(1.25/\delta)/\varepsilon^2` as the
"minimum required" variance for :math:`(\varepsilon, \delta)`-DP and applies it (Theorem 1, eq. (18))
for every :math:`\varepsilon > 0`; the experiment's totals :math:`\bar\varepsilon \in \{7, 10, 20, 30\}`
imply per-round :math:`\varepsilon` well above 1 (docs/papers/fedpdm.md#choice-calibration). The cited Dwork-Roth
theorem needs
:math:`\varepsilon < 1`. Oracle: the exact privacy profile of the Gaussian mechanism
(:func:`theory.privacy.conversions.gaussian_delta_exact`, Balle & Wang 2018): the calibration is
:math:`(\varepsilon, \delta)`-DP iff :math:`\delta_G(\varepsilon; 1/z) \le \delta`.

Finding (docs/papers/fedpdm.md#erratum-e1): the formula is DP only up to a crossover :math:`\varepsilon^*(\delta)`
(8.4198 at :math:`\delta = 10^{-5}`, 7.4635 at :math:`10^{-3}`); at :math:`\varepsilon = 10`,
:math:`\delta = 10^{-5}` the exact :math:`\delta` is 2.265 times the target. The corrected claim
(exactly DP for :math:`\varepsilon < \varepsilon^*(\delta)`; Dwork & Roth, Thm. A.1 covers :math:`(0, 1)`) holds on
grids, random points and is sharp.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from theory.privacy.conversions import gaussian_delta_exact, gaussian_sigma_analytic
from theory.privacy.subsampled import noise_multiplier_fedpdm
from verify.evidence import HARD_POINT, SIDES, report_counterexample, result_from_evidence, sample_evidence
from verify.fedpdm._common import SEED
from verify.records import CheckContext, CheckResult, Citation, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import CONVERSION_RTOL as PROFILE_RTOL

__all__ = [
    "CLAIMS",
    "COUNTEREXAMPLE",
    "EXPERIMENT_EPSILONS",
    "PROFILE_RTOL",
    "check_classical_calibration",
    "CORRECTED_DELTAS",
    "check_classical_calibration_below_crossover",
    "classical_profile_ratio",
    "crossover_epsilon",
    "evaluate_classical_calibration",
    "evaluate_classical_calibration_below_crossover",
    "evaluate_crossover_sharpness",
    "reproduce_classical_calibration",
]

#: The experiment's reported total budgets (seed line 268, 278), used here as per-round epsilons as the
#: literal per_round_eps reading does for small q (docs/papers/fedpdm.md#choice-calibration: implied per-round epsilon
#: 1.8-503).
EXPERIMENT_EPSILONS = (7.0, 10.0, 20.0, 30.0)
GRID_DELTAS = (1e-3, 1e-5, 1e-8)
#: The counterexample reported: epsilon = 10 (an experiment value), delta = 1e-5 (the experiment's delta).
COUNTEREXAMPLE = {"epsilon": 10.0, "delta": 1e-5}
_PROFILE = {"ci": {"batches": 2, "per_batch": 25, "grid": 25},
            "thorough": {"batches": 16, "per_batch": 250, "grid": 80}}


def classical_profile_ratio(epsilon: float, delta: float, *, z_fn=noise_multiplier_fedpdm) -> float:
    r""":math:`\delta_G(\varepsilon; 1/z)/\delta` for the noise multiplier ``z_fn(epsilon, delta)`` (default:
    eq. (5))."""
    return gaussian_delta_exact(epsilon, 1.0 / z_fn(epsilon, delta)) / delta


def evaluate_classical_calibration(epsilon: float, delta: float, *, z_fn=noise_multiplier_fedpdm) -> Evidence:
    r"""Is eq. (5) :math:`(\varepsilon, \delta)`-DP at this point? ``measured`` = :math:`\delta_G/\delta`, bound 1.

    Holds when :math:`\delta_G(\varepsilon; 1/z) \le \delta(1 + \text{PROFILE\_RTOL})` (one-sided).
    """
    ratio = classical_profile_ratio(epsilon, delta, z_fn=z_fn)
    z = z_fn(epsilon, delta)
    return Evidence(measured=ratio, bound=1.0, holds=ratio <= 1.0 + PROFILE_RTOL,
                    parameters={"epsilon": float(epsilon), "delta": float(delta), "z": z,
                                "delta_exact": ratio * delta, "delta_exact_over_delta": ratio})


#: The paper's own setting for "minimum required": delta = 1e-5 (Section V) and eps in (0, 1), the range of the
#: theorem Lemma 1 cites (Dwork & Roth, Theorem 3.22).
MINIMALITY_EPSILONS = (0.1, 0.25, 0.5, 0.9)
MINIMALITY_COUNTEREXAMPLE = {"epsilon": 0.5, "delta": 1e-5}


def evaluate_minimality(epsilon: float, delta: float, *, z_fn=noise_multiplier_fedpdm) -> Evidence:
    r"""Is eq. (5) the *minimum* variance for :math:`(\varepsilon, \delta)`-DP? ``measured`` =
    :math:`\sigma_{(5)}/\sigma_{\min}` with :math:`\sigma_{\min}` the analytic Gaussian mechanism's noise (Balle & Wang
    2018), bound 1: above 1 a smaller noise is already DP, so (5) is not the minimum. The smaller noise is certified by
    the exact profile (:math:`\delta_G(\varepsilon; 1/\sigma_{\min}) \le \delta` within ``PROFILE_RTOL``); without
    that certificate the point cannot refute and holds."""
    z_min = float(gaussian_sigma_analytic(1.0, epsilon, delta))
    certified = gaussian_delta_exact(epsilon, 1.0 / z_min) <= delta * (1.0 + PROFILE_RTOL)
    ratio = float(z_fn(epsilon, delta)) / z_min
    return Evidence(measured=ratio, bound=1.0, holds=bool(ratio <= 1.0 + PROFILE_RTOL or not certified),
                    parameters={"epsilon": float(epsilon), "delta": float(delta), "part": "minimum required",
                                "z_eq5": float(z_fn(epsilon, delta)), "z_min_analytic": z_min,
                                "variance_ratio_eq5_over_min": ratio * ratio,
                                "smaller_noise_certified": bool(certified)})


def crossover_epsilon(delta: float, *, z_fn=noise_multiplier_fedpdm) -> float:
    r"""The :math:`\varepsilon^*` where eq. (5) stops being DP: root of
    :math:`\delta_G(\varepsilon; 1/z(\varepsilon)) = \delta`.

    brentq on :math:`[10^{-3}, 200]` in :math:`\log\varepsilon`; raises ValueError if there is no sign change.
    """
    def excess(log_eps: float) -> float:
        return math.log(classical_profile_ratio(math.exp(log_eps), delta, z_fn=z_fn))

    lo, hi = math.log(1e-3), math.log(200.0)
    if excess(lo) >= 0.0 or excess(hi) <= 0.0:
        raise ValueError(f"delta = {delta!r}: the calibration does not cross delta_exact = delta in [1e-3, 200]")
    return math.exp(optimize.brentq(excess, lo, hi, xtol=1e-15, rtol=8.9e-16))


def _random_points(rng: np.random.Generator, count: int, z_fn, log10_eps: tuple[float, float]) -> list[Evidence]:
    out = []
    for _ in range(count):
        epsilon = float(10.0 ** rng.uniform(*log10_eps))
        delta = float(10.0 ** rng.uniform(-30.0, math.log10(0.99)))
        out.append(evaluate_classical_calibration(epsilon, delta, z_fn=z_fn))
    return out


def _ratio_figure(name: str, title: str, eps_grid: np.ndarray, deltas, z_fn, marks=()) -> FigureSpec:
    series = [Series(label=f"delta = {d:g}", x=eps_grid,
                     y=[classical_profile_ratio(float(e), d, z_fn=z_fn) for e in eps_grid], group=str(d))
              for d in deltas]
    for d in deltas:
        if marks:
            series.append(Series(label=f"experiment epsilons, delta = {d:g}", x=marks,
                                 y=[classical_profile_ratio(e, d, z_fn=z_fn) for e in marks], style="points",
                                 group=str(d)))
    series.append(Series(label="delta_exact = delta (DP boundary)", x=(eps_grid[0], eps_grid[-1]), y=(1.0, 1.0),
                         style="dashed"))
    return FigureSpec(name=name, title=title, xlabel="per-round epsilon", ylabel="delta_exact / delta",
                      series=tuple(series), xscale="log", yscale="log")


def check_classical_calibration(ctx: CheckContext, *, z_fn=noise_multiplier_fedpdm) -> CheckResult:
    """A log grid of epsilon in [0.05, 50] x delta in {1e-3, 1e-5, 1e-8}, the experiment's epsilons, random points and
    the minimality of (5) in the paper's own setting."""
    claim_id = "fedpdm.lemma1"
    p = _PROFILE[ctx.profile]
    grid = np.geomspace(0.05, 50.0, p["grid"])
    evidence = [evaluate_classical_calibration(float(e), d, z_fn=z_fn) for d in GRID_DELTAS for e in grid]
    evidence += [evaluate_classical_calibration(e, d, z_fn=z_fn) for d in GRID_DELTAS for e in EXPERIMENT_EPSILONS]
    evidence += sample_evidence(ctx, claim_id, _random_points, p["batches"],
                                (p["per_batch"], z_fn, (-2.0, math.log10(60.0))))
    chosen = evaluate_classical_calibration(COUNTEREXAMPLE["epsilon"], COUNTEREXAMPLE["delta"], z_fn=z_fn)
    evidence.append(chosen)
    minimal = [evaluate_minimality(e, MINIMALITY_COUNTEREXAMPLE["delta"], z_fn=z_fn) for e in MINIMALITY_EPSILONS]
    evidence += minimal
    details: dict = {"profile_rtol": PROFILE_RTOL,
                     "minimum_required_paper_setting": {f"eps={e.parameters['epsilon']:g}":
                                                        e.parameters["variance_ratio_eq5_over_min"] for e in minimal},
                     "sufficiency_counterexample_eps10_delta1e-5": chosen.measured}
    try:
        details["crossover_epsilon"] = {f"{d:g}": crossover_epsilon(d, z_fn=z_fn) for d in (1e-3, 1e-5, 1e-8)}
    except ValueError as exc:  # a (mutated) calibration that never crosses: nothing to record
        details["crossover_epsilon"] = str(exc)
    details["delta_exact_over_delta_at_delta_1e-5"] = {
        f"{e:g}": classical_profile_ratio(e, 1e-5, z_fn=z_fn) for e in (1.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0)}
    # "Minimum required variance": the analytic Gaussian mechanism needs less noise (ratio of multipliers).
    details["z_min_analytic_vs_z_classical_at_delta_1e-5"] = {
        f"{e:g}": [gaussian_sigma_analytic(1.0, e, 1e-5), noise_multiplier_fedpdm(e, 1e-5)] for e in (0.1, 1.0, 5.0)}
    result = result_from_evidence(
        claim_id, evidence, ctx=ctx, quantity="delta_exact(eps; 1/z_classical) / delta (one-sided, <= 1)",
        what="eq. (5) noise sigma = s sqrt(2 ln(1.25/delta))/eps is the minimum variance for (eps, delta)-DP, for "
             "every eps > 0",
        figures=[_ratio_figure("lemma1_ratio_vs_epsilon", "FedPDM-DP Lemma 1: exact delta of the classical calibration",
                               np.geomspace(0.05, 50.0, 60), (1e-3, 1e-5, 1e-8), z_fn, EXPERIMENT_EPSILONS)],
        corrected_claim="fedpdm.lemma1_corrected", details=details)
    paper = minimal[MINIMALITY_EPSILONS.index(MINIMALITY_COUNTEREXAMPLE["epsilon"])]
    if not paper.holds:  # the paper's own setting first: eps < 1 (the cited theorem's range), delta = 1e-5
        return report_counterexample(result, paper, "the paper's own setting: eps = 0.5 (inside the cited theorem's "
                                                    "eps < 1), delta = 1e-5: (5) is not the minimum variance")
    return report_counterexample(result, chosen, "epsilon = 10, delta = 1e-5")


def reproduce_classical_calibration(counterexample) -> Evidence:
    """Re-evaluate eq. (5) at a recorded counterexample (keys ``epsilon``, ``delta``; ``part`` = ``"minimum
    required"`` re-evaluates the minimality of (5), otherwise its sufficiency)."""
    if counterexample.get("part") == "minimum required":
        return evaluate_minimality(counterexample["epsilon"], counterexample["delta"])
    return evaluate_classical_calibration(counterexample["epsilon"], counterexample["delta"])


def _sigma_as_z(sigma_fn):
    return lambda e, d: sigma_fn(1.0, e, d)


def evaluate_classical_calibration_below_crossover(epsilon: float, delta: float, *, sigma_fn=None) -> Evidence:
    r"""The corrected Lemma 1 at one point with :math:`\varepsilon < \varepsilon^*(\delta)`:
    :math:`\delta_G(\varepsilon; 1/\sigma) \le \delta`, with :math:`\varepsilon^*(\delta)` of the classical
    calibration (:func:`crossover_epsilon`, exact Gaussian profile).

    ``sigma_fn(1, epsilon, delta)`` is the noise for unit sensitivity (default None: the classical calibration as
    the seed applies it for every eps, :func:`theory.privacy.subsampled.noise_multiplier_fedpdm`; the theory's
    ``gaussian_sigma_classical`` refuses eps >= 1, the range of Dwork-Roth's theorem).
    """
    star = crossover_epsilon(delta)
    if not 0.0 < epsilon < star:
        raise ValueError(f"epsilon must be in (0, eps*(delta)) = (0, {star:.6g}), got {epsilon!r}")
    evidence = evaluate_classical_calibration(
        epsilon, delta, z_fn=noise_multiplier_fedpdm if sigma_fn is None else _sigma_as_z(sigma_fn))
    return Evidence(measured=evidence.measured, bound=evidence.bound, holds=evidence.holds,
                    parameters={**evidence.parameters, "eps_star": star})


def evaluate_crossover_sharpness(delta: float, *, above: float = 1e-6) -> Evidence:
    """Sharpness of eps*(delta): at eps*(1 + ``above``) the classical calibration is not DP. ``measured`` =
    delta / delta_exact (bound 1: holds when the exact delta exceeds the target just above eps*)."""
    star = crossover_epsilon(delta)
    ratio = classical_profile_ratio(star * (1.0 + above), delta)
    return Evidence(measured=1.0 / ratio, bound=1.0, holds=bool(ratio > 1.0),
                    parameters={"epsilon": star * (1.0 + above), "delta": delta, "eps_star": star,
                                "delta_exact_over_delta": ratio, "side": "just above eps*",
                                SIDES: None})  # a decision beside the bound: sharpness, not a slack ratio


def _random_points_below_crossover(rng: np.random.Generator, count: int, sigma_fn) -> list[Evidence]:
    out = []
    for _ in range(count):
        delta = float(10.0 ** rng.uniform(-30.0, math.log10(0.99)))
        epsilon = float(rng.uniform(0.0, 1.0)) * crossover_epsilon(delta)
        if epsilon > 0.0:
            out.append(evaluate_classical_calibration_below_crossover(epsilon, delta, sigma_fn=sigma_fn))
    return out


#: delta values of the corrected Lemma 1's grid and their eps*(delta) (docs/papers/fedpdm.md#review-notes gives 8.4198
#: at 1e-5,
#: 7.4635 at 1e-3; recomputed by :func:`crossover_epsilon` in the check, not pinned).
CORRECTED_DELTAS = (0.5, 0.1, 1e-3, 1e-5, 1e-8, 1e-12, 1e-50)


def check_classical_calibration_below_crossover(ctx: CheckContext, *, sigma_fn=None) -> CheckResult:
    """Per delta: a log grid of eps in [1e-3, eps*(delta)(1 - 1e-9)], random points, and sharpness just above eps*."""
    claim_id = "fedpdm.lemma1_corrected"
    p = _PROFILE[ctx.profile]
    evidence, stars = [], {}
    for d in CORRECTED_DELTAS:
        star = crossover_epsilon(d)
        stars[f"{d:g}"] = star
        grid = np.geomspace(1e-3, star * (1.0 - 1e-9), p["grid"])
        points = [evaluate_classical_calibration_below_crossover(float(e), d, sigma_fn=sigma_fn) for e in grid]
        # the boundary of the hypothesis eps < eps*(delta): the bound is attained there (ratio -> 1)
        top = points[-1]
        points[-1] = Evidence(measured=top.measured, bound=top.bound, holds=top.holds,
                              parameters={**top.parameters, HARD_POINT: "eps -> eps*(delta)"})
        evidence += points
    evidence += sample_evidence(ctx, claim_id, _random_points_below_crossover, p["batches"],
                                (p["per_batch"] // 5, sigma_fn))
    sharp = [evaluate_crossover_sharpness(d) for d in CORRECTED_DELTAS]
    evidence += sharp
    z_fn = noise_multiplier_fedpdm if sigma_fn is None else _sigma_as_z(sigma_fn)
    below = [e.measured for e in evidence if "side" not in e.parameters]
    return result_from_evidence(
        claim_id, evidence, ctx=ctx,
        quantity="delta_exact(eps; 1/sigma) / delta for eps < eps*(delta) (<= 1); delta / delta_exact just above eps*",
        what="sigma = s sqrt(2 ln(1.25/delta))/eps is (eps, delta)-DP exactly for eps < eps*(delta)",
        figures=[_ratio_figure("lemma1_corrected_ratio", "Classical calibration up to its crossover eps*(delta)",
                               np.geomspace(1e-3, 12.0, 60), (0.5, 1e-3, 1e-5, 1e-12), z_fn)],
        details={"profile_rtol": PROFILE_RTOL, "eps_star": stars,
                 "max_delta_exact_over_delta_below_eps_star": max(below),
                 "delta_exact_over_delta_at_eps_star_times_1+1e-6": {f"{e.parameters['delta']:g}":
                                                                     e.parameters["delta_exact_over_delta"]
                                                                     for e in sharp}})


_CITE = (Citation(seed=SEED, label="Lemma 1", equation="(5)-(6)", lines="74-82"),
         Citation(seed=SEED, label="Theorem 1 (uses (5) per round)", equation="(18)", lines="187-191"))

CLAIMS = (
    Claim(
        id="fedpdm.lemma1",
        paper="fedpdm",
        title="Lemma 1: sigma^2 = 2 s^2 ln(1.25/delta)/eps^2 gives (eps, delta)-DP (for any eps, as used)",
        citations=_CITE,
        statement=("Adding N(0, sigma^2 I) with sigma^2 = 2 s^2 ln(1.25/delta)/eps^2 to a query of l2 sensitivity s "
                   "achieves (eps, delta)-DP (the seed calls it the minimum required variance), and the seed "
                   "applies it for every per-round eps > 0, including the experiment's budgets 7-30."),
        hypotheses=("eps > 0 (the seed states no upper limit)", "delta in (0, 1)", "l2 sensitivity s",
                    "replace-one neighbours"),
        check=check_classical_calibration,
        expected=Verdict.REFUTED,
        reason=("In the paper's own setting (delta = 1e-5, eps < 1 as the cited Dwork-Roth theorem needs) (5) is not "
                "the minimum: the analytic Gaussian mechanism is (eps, delta)-DP with 1.90x less variance at eps = 0.5 "
                "(2.48x at 0.1, 1.72x at 0.9), certified by the exact profile (the reported counterexample). "
                "Exact Gaussian privacy profile (Balle & Wang 2018): the calibration is (eps, delta)-DP only up "
                "to eps* = 8.4198 (delta = 1e-5) / 7.4635 (delta = 1e-3); at eps = 10, delta = 1e-5 the exact "
                "delta is 2.265 delta (152.7 delta at eps = 20, 2945 delta at eps = 30), so for the experiment's "
                "per-round eps it is not even sufficient (docs/papers/fedpdm.md#erratum-e1)."),
        severity="false",
        reproduce=reproduce_classical_calibration,
        corrected_by="fedpdm.lemma1_corrected",
    ),
    Claim(
        id="fedpdm.lemma1_corrected",
        paper="fedpdm",
        title="Lemma 1 corrected: the classical calibration is (eps, delta)-DP exactly for eps < eps*(delta)",
        citations=(*_CITE, Citation(external="Dwork & Roth 2014", label="Theorem A.1 (Theorem 3.22)"),
                   Citation(external="Balle & Wang 2018, ICML", label="Theorem 8 (exact Gaussian privacy profile)")),
        statement=("For delta in (0, 1), adding N(0, sigma^2 I) with sigma = s sqrt(2 ln(1.25/delta))/eps is "
                   "(eps, delta)-DP for every eps in (0, eps*(delta)), where eps*(delta) is the root of "
                   "delta_G(eps; eps/sqrt(2 ln(1.25/delta))) = delta of the exact Gaussian profile (8.4198 at "
                   "delta = 1e-5, 7.4635 at 1e-3, 4.47 at 0.5, 13.6 at 1e-50), and is not DP just above it. Dwork & "
                   "Roth's eps < 1 is a sufficient sub-range; the variance is sufficient, not minimal (the analytic "
                   "Gaussian mechanism needs less)."),
        hypotheses=("eps in (0, eps*(delta))", "delta in (0, 1)", "l2 sensitivity s"),
        check=check_classical_calibration_below_crossover,
        expected=Verdict.CONFIRMED,
        reason=("eps*(delta) is the root of the exact profile ratio (brentq in log eps, one sign change on every "
                "grid tried); the exact profile stays below delta on a log grid of eps up to eps*(1 - 1e-9) for seven "
                "deltas from 0.5 to 1e-50 and at random points with delta in [1e-30, 0.99] (largest delta_exact/delta "
                "-> 1 at eps*, by construction), and exceeds delta at eps*(1 + 1e-6) for each of those deltas. "
                "Extended "
                "from the earlier eps < 1 (Dwork-Roth's range) to the exact validity range "
                "(docs/papers/fedpdm.md#lemma-1). Tightness: the hardest point of each delta is eps -> eps*(delta), "
                "where delta_exact/delta -> 1."),
        corrects="fedpdm.lemma1",
    ),
)
