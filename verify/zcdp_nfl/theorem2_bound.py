r"""zCDP-NFL Theorem II, the bound (19) itself: as printed, decided where it is hardest, and its corrected form.

(19) bounds :math:`E[f(\hat w^{(T)}) - f(\mathfrak w^*)]` by a trajectory sum, a noise term
:math:`\frac1T\rho P c_\xi\sum_k\sigma_k^2(0)/(1-\tau)` and three initial terms. At the privacy level
:math:`\sigma^2(0) = 10^{-2}` the noise term alone (about 530 at T = 20, 26.5 at T = 400 on the small instance) exceeds
the whole left side, so the bound holds there whatever the other terms are. The hardest points are the limits where
that term vanishes: the noise-free run (:math:`\sigma^2(0) = 0`) and a private run with a tiny variance
(:math:`\sigma^2(0) = 10^{-8}`). There the printed form fails in every setting at T = 20 (and at most (setting, T)
points): the trajectory sum with :math:`(2/\rho)D^{(n+1)}` and the identically-zero last term
:math:`\rho\lVert\tilde w^{(0)} - \mathfrak w^*\rVert^2_{L_-}/T` are too small.

The corrected form (the proof's own terms, :mod:`theory.zcdp_nfl.network`): :math:`2D^2 = \operatorname{diag}(1/\eta)`
for :math:`2D` in the trajectory sum (the gradient of :math:`\lVert D(\mathfrak w - \tilde w)\rVert^2`), and last term
:math:`(\rho/2)\lVert\tilde w^{(0)} - \mathfrak w^*\rVert^2_{L_+}/T` (from :math:`\lVert q^{(0)} - q^*\rVert_G^2`). Each
correction alone still fails at some hard point (details), both together hold at every point, with measured/bound up
to about 0.9 at the hard points.

Decision: Monte Carlo (one-sided t upper confidence limit of :math:`E[\text{LHS} - \text{RHS}]` against 0, ``MC_ALPHA``
split over the points) for the noisy points; the noise-free point is deterministic, against a rounding allowance.
Settings: S1 noise :math:`\sigma^2(n) = \sigma^2(0)\tau^n`, :math:`\tau = 0.97`, :math:`\rho = 1`,
:math:`\eta_0 = 0.05` (constant or :math:`/\sqrt n`), the small instance K = 10, P = 3, M = 20.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
from scipy import stats

from theory.zcdp_nfl.network import BOUND_VARIANTS
from theory.zcdp_nfl.network import theorem2_sides as network_theorem2_sides
from verify.evidence import HARD_POINT, SIDES, report_counterexample, result_from_evidence
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, MonteCarlo, Series, Verdict
from verify.tolerance import MC_ALPHA, bonferroni, gamma
from verify.zcdp_nfl import cite
from verify.zcdp_nfl._runs import problem_from, run_from, truth_from

__all__ = ["BOUND_BASE", "CLAIMS", "CORRECTED", "NOISE_LEVELS", "check_theorem2_bound",
           "check_theorem2_bound_corrected", "evaluate_theorem2_bound", "reproduce_theorem2_bound", "theorem2_sides"]

#: S1 noise sigma^2(n) = sigma^2(0) 0.97^n, rho = 1 (the settings the printed bound was first checked at).
BOUND_BASE = {"rho": 1.0, "noise": "S1", "sigma2_0": 0.01, "tau": 0.97}
#: sigma^2(0) levels: the noise-free limit and a tiny variance (the hardest points), and the loose level 1e-2.
NOISE_LEVELS = (0.0, 1e-8, 1e-2)
HARD_LABELS = {0.0: "noise-free limit sigma^2(0) = 0", 1e-8: "tiny noise sigma^2(0) = 1e-8"}
#: The corrected form: 2 D^2 for 2 D and the last term (rho/2)||w~(0) - w*||^2_{L+}/T.
CORRECTED = "D2_half_L_plus"
_PROFILE = {"ci": {"runs": 40, "Ts": (20, 100, 400),
                   "settings": tuple({"objective": o, "step": s, "eta0": 0.05}
                                     for o, s in (("ridge", "constant"), ("ridge", "inv_sqrt"), ("lad", "constant"),
                                                  ("lad", "inv_sqrt")))},
            "thorough": {"runs": 100, "Ts": (20, 100, 400),
                         "settings": tuple({"objective": o, "step": s, "eta0": 0.05, "seed": seed}
                                           for o in ("ridge", "lad", "elastic_net") for s in ("constant", "inv_sqrt")
                                           for seed in (0, 1))}}


def theorem2_sides(settings: dict, T: int, variant: str = "printed") -> tuple[np.ndarray, np.ndarray]:
    r"""Per run: LHS :math:`f(\hat w^{(T)}) - f(\mathfrak w^*)` and the RHS of (19) in ``variant``, shape (runs,).

    The noise term uses ``settings["sigma2_0"]`` (0 for a noise-free run, ``noise = "none"``)."""
    if variant not in BOUND_VARIANTS:
        raise ValueError(f"variant must be one of {BOUND_VARIANTS}, got {variant!r}")
    problem, truth = problem_from(settings), truth_from(settings)
    etas, w_tilde = _trajectory(tuple(sorted(settings.items())))
    sigma2_0 = 0.0 if settings.get("noise", "S1") == "none" else float(settings["sigma2_0"])
    return network_theorem2_sides(problem, rho=float(settings["rho"]), etas=etas, w_tilde=w_tilde, w_star=truth.w_c,
                                  sigma2_0=sigma2_0, tau=float(settings["tau"]), T=T, variant=variant)


@functools.lru_cache(maxsize=16)
def _trajectory(key: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The run's step sizes and perturbed iterates (every T and variant of one point reads the same run)."""
    run = run_from(dict(key), keep_trajectory=True)
    return np.asarray(run.etas), run.trajectory["w_tilde"]


def _point(settings: dict, sigma2_0: float, runs: int, noise_seed: int, T_max: int) -> dict:
    if sigma2_0 == 0.0:
        return {**BOUND_BASE, **settings, "noise": "none", "sigma2_0": 0.0, "T": T_max + 1, "runs": 1,
                "noise_seed": 0}
    return {**BOUND_BASE, **settings, "sigma2_0": sigma2_0, "T": T_max + 1, "runs": runs, "noise_seed": noise_seed}


def evaluate_theorem2_bound(settings: dict, T: int, alpha_each: float, variant: str = "printed") -> Evidence:
    """E[LHS] <= E[RHS] at one (settings, T): ``measured`` = UCL of E[LHS - RHS] (noisy) or LHS - RHS (noise-free,
    against a rounding allowance); ``parameters["sides"]`` = (mean LHS, mean RHS)."""
    lhs, rhs = theorem2_sides(settings, T, variant)
    d = lhs - rhs
    problem = problem_from(settings)
    if d.size == 1:
        # deterministic: T-term sums of K x K products of (K, P) arrays, each side evaluated once
        bound = gamma(4 * problem.K * problem.K * problem.P * (T + 8)) * float(abs(lhs[0]) + abs(rhs[0]) + 1.0)
        measured = lower = float(d[0])
    else:
        bound = 0.0
        half = float(stats.t.ppf(1 - alpha_each, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size))
        measured, lower = float(d.mean()) + half, float(d.mean()) - half
    params = {**settings, "T_bound": T, "variant": variant, "alpha_each": alpha_each, "mean_lhs": float(lhs.mean()),
              "mean_rhs": float(rhs.mean()), "mean_difference": float(d.mean()),
              "standard_error": float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else 0.0,
              "violation_shown": bool(lower > bound),
              SIDES: (float(lhs.mean()), float(rhs.mean()))}
    label = HARD_LABELS.get(0.0 if settings.get("noise") == "none" else float(settings["sigma2_0"]))
    if label:
        params[HARD_POINT] = label
    return Evidence(measured=measured, bound=bound, holds=bool(measured <= bound), parameters=params)


def reproduce_theorem2_bound(counterexample) -> Evidence:
    """Re-evaluate the recorded (settings, T, variant)."""
    keys = ("seed", "objective", "step", "eta0", "rho", "noise", "sigma2_0", "tau", "T", "runs", "noise_seed")
    settings = {k: counterexample[k] for k in keys if k in counterexample}
    return evaluate_theorem2_bound(settings, int(counterexample["T_bound"]), float(counterexample["alpha_each"]),
                                   str(counterexample["variant"]))


def _cases(ctx: CheckContext) -> list[tuple[dict, int]]:
    p = _PROFILE[ctx.profile]
    seed = int(ctx.seed_sequence("zcdp_nfl.theorem2_bound").generate_state(1)[0])
    return [(_point(s, level, p["runs"], seed + i, max(p["Ts"])), T)
            for i, s in enumerate(p["settings"]) for level in NOISE_LEVELS for T in p["Ts"]]


def _evidence(ctx: CheckContext, variant: str) -> tuple[list[Evidence], list[tuple[dict, int]], float]:
    cases = _cases(ctx)
    noisy = sum(s["runs"] > 1 for s, _ in cases)
    alpha_each = bonferroni(MC_ALPHA, max(noisy, 1))
    return [evaluate_theorem2_bound(s, T, alpha_each, variant) for s, T in cases], cases, alpha_each


def _figure(evidence: list[Evidence], variant: str) -> FigureSpec:
    series = []
    for level in NOISE_LEVELS:
        pts = [e for e in evidence if float(e.parameters["sigma2_0"]) == level]
        series.append(Series(label=f"sigma^2(0) = {level:g}", x=list(range(len(pts))), style="points",
                             group=f"{level:g}",
                             y=[e.parameters[SIDES][0] / e.parameters[SIDES][1] for e in pts]))
    series.append(Series(label="1 (LHS = RHS)", x=(0, len(series[0].x) - 1), y=(1, 1), style="dashed", group="z"))
    return FigureSpec(name="bound_ratio", title=f"Theorem II (19), {variant} form: E[LHS] / E[RHS] per (setting, T)",
                      xlabel="point (setting x T)", ylabel="E[LHS] / E[RHS] (> 1: violated)", yscale="log",
                      series=tuple(series))


def _per_level(evidence: list[Evidence]) -> dict:
    out = {}
    for level in NOISE_LEVELS:
        pts = [e for e in evidence if float(e.parameters["sigma2_0"]) == level]
        out[f"{level:g}"] = {"violated": sum(not e.holds for e in pts), "points": len(pts),
                             "max_lhs_over_rhs": float(max(e.parameters[SIDES][0] / e.parameters[SIDES][1]
                                                           for e in pts))}
    return out


def check_theorem2_bound(ctx: CheckContext) -> CheckResult:
    """(19) as printed at every noise level: refuted only where a violation is shown (the lower confidence limit of
    E[LHS - RHS] above 0, or a deterministic noise-free excess); reports the smallest T at sigma^2(0) = 1e-8."""
    evidence, _, _ = _evidence(ctx, "printed")
    variants = {}
    for v in BOUND_VARIANTS[1:]:
        ev, _, _ = _evidence(ctx, v)
        variants[v] = {"violated": sum(not e.holds for e in ev), "points": len(ev)}
    result = result_from_evidence(
        "zcdp_nfl.theorem2_bound", evidence, ctx=ctx,
        quantity="UCL of E[LHS - RHS] (noisy, against 0) or LHS - RHS (noise-free, against rounding); printed (19)",
        what="E[f(w_hat^(T)) - f(w*)] <= RHS of (19) as printed", corrected_claim="zcdp_nfl.theorem2_bound_corrected",
        figures=[_figure(evidence, "printed")], monte_carlo=MonteCarlo(n=_PROFILE[ctx.profile]["runs"], alpha=MC_ALPHA,
                                                                       seed=ctx.seed),
        details={"by_noise_level": _per_level(evidence), "variants_violated": variants})
    if result.verdict is Verdict.REFUTED and not any(e.parameters["violation_shown"] for e in evidence):
        return dataclasses.replace(result, verdict=Verdict.NOT_CHECKABLE, counterexample=None,
                                   summary=result.summary + "; no violation is shown (lower limits <= 0): more runs "
                                           "would decide")
    tiny = [e for e in evidence if e.parameters["violation_shown"] and float(e.parameters["sigma2_0"]) == 1e-8]
    if tiny and result.verdict is Verdict.REFUTED:
        chosen = min(tiny, key=lambda e: (e.parameters["T_bound"], -e.measured))
        result = report_counterexample(result, chosen, "a private run (sigma^2(0) = 1e-8) at the smallest T")
    return result


def check_theorem2_bound_corrected(ctx: CheckContext) -> CheckResult:
    """The corrected form at the same points, the hardest included."""
    evidence, _, _ = _evidence(ctx, CORRECTED)
    return result_from_evidence(
        "zcdp_nfl.theorem2_bound_corrected", evidence, ctx=ctx,
        quantity="UCL of E[LHS - RHS] (noisy, against 0) or LHS - RHS (noise-free, against rounding); corrected (19)",
        what="E[f(w_hat^(T)) - f(w*)] <= RHS of (19) with 2D^2 and (rho/2) L+ last term",
        figures=[_figure(evidence, "corrected")],
        monte_carlo=MonteCarlo(n=_PROFILE[ctx.profile]["runs"], alpha=MC_ALPHA, seed=ctx.seed),
        details={"by_noise_level": _per_level(evidence)})


_CITATIONS = (cite("Publication 2, Theorem II and its proof (App. E)", "(19)", "2119-2126, 2334-2352"),
              cite("Thesis Chapter 3, Theorem II", "(3.20)", "685-693"))
_HYPOTHESES = ("Assumption 2 (convex f)", "S1 noise sigma^2(n) = sigma^2(0) 0.97^n with sigma^2(0) in {0, 1e-8, 1e-2}",
               "rho = 1, eta0 = 0.05 (constant or eta0/sqrt(n))", "expectation on both sides (the RHS is random)",
               "T in {20, 100, 400}; ci: ridge and LAD, 40 runs; thorough: ridge, LAD, elastic net on two instances, "
               "100 runs (K = 10, P = 3, M = 20)")

CLAIMS = (
    Claim(
        id="zcdp_nfl.theorem2_bound",
        title="Theorem II (19) as printed: E[f(w_hat^(T)) - f(w*)] <= (rho/T) sum(...) + noise term + initial terms",
        citations=_CITATIONS,
        statement=("Under Assumption 2, E[f(w_hat^(T)) - f(w*)] <= (rho/T) sum_{n=1}^T (-2<Qw~^(n), Qw~^(n+1)> - "
                   "||w~^(n) - w~^(n-1)||^2_{L+/2} + <w~^(n) - w*, (2/rho) D^(n+1) (w~^(n) - w~^(n+1))> - <w*, "
                   "L+(2w~^(n) - w~^(n-1) - w~^(n+1))> + ||w~^(n+1) - w~^(n)||^2_{L+}) + (1/T) rho P c_xi sum_k "
                   "sigma_k^2(0)/(1 - tau) + <w~^(1), L+(w~^(1) - w~^(0))>/T + rho ||Q w~^(0)||^2/T + rho ||w~^(0) - "
                   "w*||^2_{L-}/T."),
        hypotheses=_HYPOTHESES,
        check=check_theorem2_bound,
        expected=Verdict.REFUTED,
        reason=("Where the noise term vanishes the printed bound fails: noise-free and at sigma^2(0) = 1e-8 (a private "
                "run) E[LHS - RHS] is +4.45 (ridge, constant eta, T = 20), +8.0 (ridge, eta0/sqrt(n)), +8.1 (LAD, "
                "constant), +9.5 (LAD, eta0/sqrt(n)) with standard errors below 5e-4, and stays positive at T = 400 "
                "for LAD. At sigma^2(0) = 1e-2 it holds only because the noise term (530 at T = 20) dwarfs the left "
                "side (E[LHS]/E[RHS] <= 0.4). The corrected form holds at every point "
                "(zcdp_nfl.theorem2_bound_corrected)."),
        severity="correction_as_useful",
        reproduce=reproduce_theorem2_bound,
        corrected_by="zcdp_nfl.theorem2_bound_corrected",
    ),
    Claim(
        id="zcdp_nfl.theorem2_bound_corrected",
        title="Theorem II (19) corrected: 2D^2 for 2D and last term (rho/2)||w~(0) - w*||^2_{L+}/T",
        citations=_CITATIONS,
        statement=("Corrected statement: (19) holds with (1/rho) diag(1/eta^(n+1)) (= (2/rho) D^2) in place of "
                   "(2/rho) D in the trajectory sum (the gradient of ||D(w - w~)||^2 is 2 D^2 (w - w~)) and the last "
                   "term "
                   "(rho/2)||w~^(0) - w*||^2_{L+}/T (from ||q^(0) - q*||_G^2 in the proof) in place of rho||w~^(0) - "
                   "w*||^2_{L-}/T, which is identically 0."),
        hypotheses=_HYPOTHESES,
        check=check_theorem2_bound_corrected,
        expected=Verdict.CONFIRMED,
        reason=("E[LHS] <= E[RHS] at every (setting, T, sigma^2(0)), the noise-free and tiny-noise points "
                "included, where it is nearly tight: E[LHS]/E[RHS] up to 0.90 (LAD, eta0/sqrt(n), T = 400, "
                "noise-free) and 0.73 (LAD, constant eta, T = 400); at sigma^2(0) = 1e-2 it is loose (ratio <= 0.4). "
                "Either correction alone fails at some hard point "
                "(2D^2 alone: LAD, constant eta, noise-free, +1.9 at T = 20; the L+ last term alone: +7.7 for LAD, "
                "eta0/sqrt(n), T = 400)."),
        corrects="zcdp_nfl.theorem2_bound",
    ),
)
