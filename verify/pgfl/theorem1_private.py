r"""PGFL Theorem I for the privacy-preserving algorithm (Algorithm 2, :math:`\tau = 0`, noise variance
:math:`\propto\zeta^n`).

``pgfl.theorem1_private`` (as stated in the abstract and Section III; refuted). The iteration is affine in (state,
noise) with zero-mean noise, so :math:`E w^{(n)}` is the noise-free iterate and converges to (Pc), not (Pa)
(:mod:`verify.pgfl.theorem1`).

``pgfl.theorem1_private_rate`` (corrected; confirmed). :math:`E\lVert u^{(n)} - u^\star\rVert^2` decays with factor
:math:`\max(r(T)^2, \zeta)` (docs/papers/pgfl.md#structure), checked on both branches: noise-dominated (Monte Carlo with
jackknife limits) and iteration-dominated (the exact mean-square curve of
:func:`verify.pgfl._tau0_iteration.affine_parts`). Algorithm 2 (literal) contracts for every :math:`\rho`
(:func:`theory.pgfl.stability.alg2_contraction_bound`), which is how the instances meet :math:`\zeta \ge r(T)^2 +
0.05` by construction. The factor must lie within ``FACTOR_BAND`` of :math:`\max(r(T)^2, \zeta)`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from reference_impl.pgfl import PGFLConfig, PGFLProblem, iteration_spectral_radius, run_pgfl
from theory.pgfl.consensus import fixed_point_state
from theory.pgfl.stability import alg2_contraction_bound, iteration_radius
from verify.evidence import result_from_evidence
from verify.papers import SEED_THESIS
from verify.pgfl import cite
from verify.pgfl._instances import (
    ITERATION_BRANCH_INSTANCES,
    PARAM_KEYS,
    PRIVATE_INSTANCES,
    build_instance,
    paper_params,
)
from verify.pgfl._tau0_iteration import (
    affine_parts,
    exact_log_mean_square,
    exact_mean_square,
    relative_distance,
    state_vectors,
)
from verify.pgfl.theorem1 import pa_optimum
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, MonteCarlo, Series, Verdict
from verify.tolerance import (
    FACTOR_BAND,
    FIXED_POINT_RTOL,
    MC_ALPHA,
    NOISE_DOMINANCE_GAP,
    bonferroni,
    gamma,
    mean_upper_confidence_limit,
)

__all__ = [
    "CLAIMS",
    "check_theorem1_private",
    "check_theorem1_private_rate",
    "evaluate_private_factor",
    "evaluate_private_limit",
    "private_target_factor",
    "reproduce_theorem1_private",
]

_PROFILE = {"ci": {"runs": 200, "private_instances": 4}, "thorough": {"runs": 1000, "private_instances": 12}}


#: Runs of the successive looks at the paper-size point (thorough): the next look only if the previous one does not
#: hold; alpha is split over the looks (Bonferroni), so the rule is that of one look. At the paper's size the
#: jackknife limits of 200 runs lay within 3e-6 of zeta against a band of 0.01, and one run-iteration there costs
#: as much as about 250 of the small instances'.
PAPER_SIZE_LOOKS = (50, 200)


def _jackknife_factor(sq_errors: np.ndarray, n: np.ndarray, alpha: float) -> dict:
    """Fitted factor of the mean over runs (slope of log mean vs n) with jackknife confidence limits."""
    R = sq_errors.shape[1]
    mean = sq_errors.mean(axis=1)
    x = n - n.mean()
    sxx = float(x @ x)
    theta = math.exp(float(x @ np.log(mean)) / sxx)
    loo = (R * mean[:, None] - sq_errors) / (R - 1)
    theta_loo = np.exp((x @ np.log(loo)) / sxx)
    pseudo = R * theta - (R - 1) * theta_loo
    return {"factor": theta, "upper": mean_upper_confidence_limit(pseudo, alpha),
            "lower": -mean_upper_confidence_limit(-pseudo, alpha), "runs": R}


def private_target_factor(radius: float, zeta: float) -> float:
    r"""Per-iteration factor of :math:`E\lVert u^{(n)} - u^\star\rVert^2` (docs/papers/pgfl.md#structure):
    :math:`\max(r(T)^2, \zeta)`."""
    if not (0.0 <= radius and 0.0 < zeta <= 1.0):
        raise ValueError(f"radius must be >= 0 and zeta in (0, 1], got {radius!r}, {zeta!r}")
    return max(radius**2, zeta)


def evaluate_private_factor(params: Mapping[str, Any], *, runs: int, seed: int, alpha: float,
                            factor_fn: Callable = private_target_factor, exact: bool = True,
                            radius: float | None = None) -> Evidence:
    r"""Monte Carlo of Algorithm 2 (literal, :math:`\tau = 0`) with noise variance :math:`\propto\zeta^n`.

    Window: from the iteration :math:`n_1` where :math:`(r(T)^2/\zeta)^{n_1} \le 10^{-6}` (the deterministic
    part and the transient of the noise part are negligible) over :math:`\log(10^{-6})/\log\zeta` iterations.
    Holds iff both jackknife confidence limits (level ``alpha`` each) of the fitted factor lie within
    ``FACTOR_BAND`` of ``factor_fn(r(T), zeta)``. Also records :math:`r(T)` against the proven bound
    :func:`alg2_contraction_bound`, and (``exact``) the factor of the exact mean-square curve. ``radius``: r(T) of
    the noise-free iteration when the caller has it (computed here otherwise).
    """
    problem = build_instance(params)
    zeta = float(params["zeta"])
    config = PGFLConfig(rho=float(params["rho_factor"]) * problem.max_curvature, algorithm="alg2",
                        phi0=float(params["phi0"]), zeta=zeta, C=float(params.get("C", 1.0)))
    noise_free = PGFLConfig(**{**config.__dict__, "phi0": None})
    if radius is None:
        radius = (iteration_spectral_radius(problem, noise_free) if problem.S * problem.n_clusters * problem.d
                  + problem.K * problem.d <= 4000 else iteration_radius(problem, noise_free))
    radius = float(radius)
    bound = alg2_contraction_bound(problem, config.rho)
    if abs(radius**2 - zeta) < NOISE_DOMINANCE_GAP:
        raise ValueError(f"|zeta - r(T)^2| = {abs(zeta - radius**2):.4f} < {NOISE_DOMINANCE_GAP}: outside the claim's "
                         "hypotheses (one of noise and iteration must dominate by the gap)")
    target = float(factor_fn(radius, zeta))
    u_star, _, residual = fixed_point_state(problem, noise_free)
    within_bound = radius <= bound * (1.0 + gamma(64))
    if zeta < radius**2:
        return _iteration_branch(problem, config, params, radius, bound, target, u_star, residual, runs, seed)
    n1 = max(1, int(math.ceil(math.log(1e-6) / math.log(radius**2 / zeta))) if radius > 0 else 1)
    length = int(math.ceil(math.log(1e-6) / math.log(zeta)))
    n2 = n1 + length
    run = run_pgfl(problem, config, n2, np.random.default_rng(seed), runs=runs,
                   observe=lambda st: np.sum((state_vectors(st) - u_star[None, :]) ** 2, axis=1))
    sq = run.observations                                                     # (n2, runs)
    n = np.arange(n1, n2 + 1, dtype=np.float64)
    jk = _jackknife_factor(sq[n1 - 1:], n, alpha)
    deviation = max(jk["upper"] - target, target - jk["lower"])
    info = {**dict(params), "spectral_radius": radius, "alg2_contraction_bound": bound,
            "r_within_proven_bound": bool(radius <= bound * (1.0 + gamma(64))), "target_factor": target,
            "fitted_factor": jk["factor"], "confidence_limits": (jk["lower"], jk["upper"]), "window": (n1, n2),
            "runs": runs, "mc_seed": seed, "alpha_per_limit": alpha, "fixed_point_residual": residual}
    if exact:
        curve = exact_mean_square(problem, config, u_star, n2)
        info["exact_factor"] = math.exp(float(np.polyfit(n, np.log(curve[n1 - 1:]), 1)[0]))
        se = sq.std(axis=1, ddof=1) / math.sqrt(runs)
        info["max_|mc_mean - exact|/se"] = float(np.max(np.abs(sq.mean(axis=1) - curve) / se))
        info["curves"] = {"mc_mean": sq.mean(axis=1), "exact": curve}
    else:
        info["curves"] = {"mc_mean": sq.mean(axis=1)}
    info["branch"] = "noise dominates (zeta > r(T)^2)"
    return Evidence(measured=deviation, bound=FACTOR_BAND, holds=bool(deviation <= FACTOR_BAND and within_bound),
                    parameters=info)


def _iteration_branch(problem: PGFLProblem, config: PGFLConfig, params: Mapping[str, Any], radius: float,
                      bound: float, target: float, u_star: np.ndarray, residual: float, runs: int,
                      seed: int) -> Evidence:
    """zeta < r(T)^2: the factor of the exact mean-square curve (homogeneous recursions) over the window where the
    noise term and the sub-dominant eigenmodes of T have fallen by 1e-6 relative to the dominant one, within
    ``FACTOR_BAND`` of r(T)^2; a Monte Carlo of the first iterations must agree with that curve (recorded as
    max |MC mean - exact| / standard error)."""
    zeta = config.zeta
    moduli = np.abs(np.linalg.eigvals(affine_parts(problem, config, with_noise=False)[0]))
    # the sub-dominant modes: largest modulus m with r(T)^2 - m^2 > FACTOR_BAND / 10 (closer ones move the fitted
    # factor by less than that whatever their weight, so the window need not wait for them)
    below = moduli[radius**2 - moduli**2 > FACTOR_BAND / 10]
    second = float(below.max()) if below.size else 0.0
    ratio = max(zeta / radius**2, (second / radius) ** 2)
    n1 = max(1, int(math.ceil(math.log(1e-6) / math.log(ratio))))
    if n1 > 20000:
        raise ValueError(f"sub-dominant modes too close to r(T) (ratio {ratio:.6f}): window would start at n = {n1}")
    n2 = n1 + int(math.ceil(math.log(1e-6) / math.log(radius**2)))
    log_curve = exact_log_mean_square(problem, config, u_star, n2)
    n = np.arange(n1, n2 + 1, dtype=np.float64)
    fitted = math.exp(float(np.polyfit(n, log_curve[n1 - 1:], 1)[0]))
    endpoint = math.exp((log_curve[n2 - 1] - log_curve[n1 - 1]) / (n2 - n1))
    curve = np.exp(log_curve)                                  # for the Monte-Carlo comparison and the figure
    deviation = max(abs(fitted - target), abs(endpoint - target))
    # Monte Carlo only where the exact curve is above the run's rounding floor (a run measures ||u - u*||^2 with an
    # absolute error ~ (eps ||u*||)^2; the recursions have none)
    n_mc = max(2, min(n1, 60, int(np.count_nonzero(curve >= 1e-16 * curve[0]))))
    run = run_pgfl(problem, config, n_mc, np.random.default_rng(seed), runs=runs,
                   observe=lambda st: np.sum((state_vectors(st) - u_star[None, :]) ** 2, axis=1))
    sq = run.observations
    se = sq.std(axis=1, ddof=1) / math.sqrt(runs)
    agreement = float(np.max(np.abs(sq.mean(axis=1) - curve[:n_mc]) / np.maximum(se, 1e-300)))
    within_bound = radius <= bound * (1.0 + gamma(64))
    info = {**dict(params), "spectral_radius": radius, "alg2_contraction_bound": bound,
            "r_within_proven_bound": bool(within_bound), "target_factor": target, "fitted_factor": fitted,
            "endpoint_factor": endpoint, "window": (n1, n2), "runs": runs, "mc_seed": seed,
            "fixed_point_residual": residual, "exact_factor": fitted, "max_|mc_mean - exact|/se": agreement,
            "second_modulus": second, "branch": "iteration dominates (zeta < r(T)^2)",
            "curves": {"mc_mean": np.concatenate([sq.mean(axis=1), np.full(n2 - n_mc, np.nan)]), "exact": curve}}
    return Evidence(measured=deviation, bound=FACTOR_BAND, holds=bool(deviation <= FACTOR_BAND and within_bound),
                    parameters=info)


_PRIVATE_DETAIL_KEYS = ("branch", "zeta", "rho_factor", "servers", "spectral_radius", "second_modulus",
                        "alg2_contraction_bound", "target_factor", "endpoint_factor",
                        "fitted_factor", "confidence_limits", "window", "runs", "exact_factor",
                        "max_|mc_mean - exact|/se")


def check_theorem1_private_rate(ctx: CheckContext, *, factor_fn: Callable = private_target_factor) -> CheckResult:
    """Both branches of max(r(T)^2, zeta): noise-dominated instances (zeta in {0.9, 0.97}; Monte Carlo, jackknife
    limits) and iteration-dominated ones (zeta <= r(T)^2 - 0.05; exact curve, Monte Carlo agreement recorded)."""
    p = _PROFILE[ctx.profile]
    rng = np.random.default_rng(ctx.seed_sequence("pgfl.theorem1_private").generate_state(1)[0])
    count = p["private_instances"]
    alpha = bonferroni(MC_ALPHA, 2 * (count + int(ctx.thorough)))
    mc_seed = int(ctx.seed_sequence("pgfl.theorem1_private.mc").generate_state(1)[0])
    evidence = []
    for i in range(count):
        zeta = (0.9, 0.97)[i % 2]
        evidence.append(evaluate_private_factor(PRIVATE_INSTANCES.sample(rng, zeta=zeta), runs=p["runs"],
                                                seed=mc_seed + i, alpha=alpha, factor_fn=factor_fn))
    rng_it = np.random.default_rng(ctx.seed_sequence("pgfl.theorem1_private_rate.iteration").generate_state(1)[0])
    for i in range(count):
        evidence.append(evaluate_private_factor(ITERATION_BRANCH_INSTANCES.sample(rng_it), runs=p["runs"],
                                                seed=mc_seed + count + 1 + i, alpha=alpha, factor_fn=factor_fn))
    skipped, looks = [], []
    if ctx.thorough:
        # the paper's size and data (docs/papers/pgfl.md#exp-r1: gaussian features, D_k in 2..9), rho = 0.1 L_max,
        # zeta = 0.97: the
        # first drawn graph and data with r(T)^2 + 0.05 <= zeta (the claim's hypothesis; r(T) by Arnoldi)
        for _ in range(20):
            params = {**paper_params(int(rng.integers(2**32)), rho_factor=0.1), "zeta": 0.97, "phi0": 0.05, "C": 1.0}
            problem = build_instance(params)
            radius = iteration_radius(problem, PGFLConfig(rho=0.1 * problem.max_curvature, algorithm="alg2"))
            if radius**2 + NOISE_DOMINANCE_GAP <= params["zeta"]:
                for runs in PAPER_SIZE_LOOKS:
                    point = evaluate_private_factor(params, runs=runs, seed=mc_seed + count,
                                                    alpha=alpha / len(PAPER_SIZE_LOOKS), factor_fn=factor_fn,
                                                    exact=False, radius=radius)
                    looks.append({"runs": runs, "holds": point.holds,
                                  "confidence_limits": point.parameters["confidence_limits"]})
                    if point.holds:
                        break
                evidence.append(point)
                break
            skipped.append({"seed": params["seed"], "r(T)^2": radius**2})
    series = []
    for e in evidence[:2]:
        curves = e.parameters["curves"]
        n = np.arange(1, curves["mc_mean"].size + 1)
        label = f"zeta = {e.parameters['zeta']}, r(T)^2 = {e.parameters['spectral_radius'] ** 2:.3f}"
        series.append(Series(label=f"{label}: Monte-Carlo mean", x=n, y=curves["mc_mean"], style="points", group=label))
        if "exact" in curves:
            series.append(Series(label=f"{label}: exact (covariance recursion)", x=n, y=curves["exact"], group=label))
        n1, n2 = e.parameters["window"]
        anchor = curves["mc_mean"][n1 - 1]
        series.append(Series(label=f"{label}: max(r^2, zeta)^n", x=(n1, n2),
                             y=(anchor, anchor * e.parameters["target_factor"] ** (n2 - n1)), style="dashed",
                             group=label))
    figure = FigureSpec(name="mean_square_error_vs_iteration",
                        title="Theorem I with privacy noise: E||u^(n) - u*||^2 (Algorithm 2, tau = 0)",
                        xlabel="iteration n", ylabel="mean-square state error", yscale="log", series=tuple(series))
    stripped = [Evidence(measured=e.measured, bound=e.bound, holds=e.holds,
                         parameters={k: v for k, v in e.parameters.items() if k != "curves"}) for e in evidence]
    return result_from_evidence(
        "pgfl.theorem1_private_rate", stripped, ctx=ctx,
        quantity=("distance of the fitted factor from max(r(T)^2, zeta): jackknife confidence limits (zeta > r^2), "
                  "exact-curve fit and endpoint ratio (zeta < r^2)"),
        what="E||u^(n) - u*||^2 decays with factor max(r(T)^2, zeta)", figures=[figure],
        form="rate",
        form_reason=("a fitted per-iteration factor of the last iterate's mean-square error (no averaging makes it "
                     "automatic), against max(r(T)^2, zeta): jackknife confidence limits over a window of "
                     "log(1e-6)/log(zeta) iterations (noise branch), the exact mean-square curve (iteration branch)"),
        monte_carlo=MonteCarlo(n=min(e.parameters["runs"] for e in stripped), alpha=MC_ALPHA, seed=mc_seed),
        details={"points": [{k: e.parameters[k] for k in _PRIVATE_DETAIL_KEYS if k in e.parameters} for e in stripped],
                 "alpha_per_limit": alpha, "paper_size_draws_outside_hypothesis": skipped,
                 **({"paper_size_looks": {"looks": looks, "runs_per_look": list(PAPER_SIZE_LOOKS),
                                          "alpha_per_limit_per_look": alpha / len(PAPER_SIZE_LOOKS),
                                          "rule": "the next look only if the previous one does not hold"}}
                    if ctx.thorough else {})})


def evaluate_private_limit(params: Mapping[str, Any], *, runs: int = 100, seed: int = 0,
                           optimum_fn: Callable = pa_optimum) -> Evidence:
    r"""Private PGFL (Algorithm 2, literal, :math:`\tau = 0`): distance of its limit from the optimum (Pa) of (2).

    The iteration is affine in (state, noise) with zero-mean noise, so :math:`E w^{(n)}` is the noise-free iterate,
    which converges to the solved fixed point (Pc); by Jensen :math:`E\lVert w^{(n)} - w_{Pa}\rVert^2 \ge
    \lVert E w^{(n)} - w_{Pa}\rVert^2 \to \lVert w_{Pc} - w_{Pa}\rVert^2`. The statement holds at the point iff
    (Pc) is within ``FIXED_POINT_RTOL`` (relative) of ``optimum_fn`` (Pa). A Monte Carlo at the iteration where
    :math:`\zeta^n \le 10^{-6}` records the mean-square relative distance to (Pa) next to the squared (Pc)-(Pa) one.
    """
    problem = build_instance(params)
    config = PGFLConfig(rho=float(params["rho_factor"]) * problem.max_curvature, algorithm="alg2",
                        phi0=float(params["phi0"]), zeta=float(params["zeta"]), C=float(params.get("C", 1.0)))
    noise_free = PGFLConfig(**{**config.__dict__, "phi0": None})
    radius = float(iteration_spectral_radius(problem, noise_free))
    _, w_pc, residual = fixed_point_state(problem, noise_free)
    target = np.asarray(optimum_fn(problem, noise_free))
    distance = relative_distance(w_pc, target)
    n_end = int(math.ceil(max(math.log(1e-6) / math.log(config.zeta), math.log(1e-9) / math.log(max(radius, 1e-3)))))
    scale = float(np.max(np.linalg.norm(np.broadcast_to(target, w_pc.shape), axis=-1))) ** 2
    run = run_pgfl(problem, config, n_end, np.random.default_rng(seed), runs=runs,
                   observe=lambda st: np.max(np.sum((st.w_servers - target) ** 2, axis=-1).reshape(runs, -1), axis=1))
    final = run.observations[-1] / scale
    return Evidence(measured=distance, bound=FIXED_POINT_RTOL,
                    holds=bool(radius < 1.0 and distance <= FIXED_POINT_RTOL),
                    parameters={**dict(params), "spectral_radius": radius, "relative_distance_Pc_to_Pa": distance,
                                "fixed_point_residual": residual, "iterations": n_end, "runs": runs, "mc_seed": seed,
                                "mc_mean_square_relative_distance_to_Pa": float(final.mean()),
                                "squared_relative_distance_Pc_to_Pa": distance**2})


def check_theorem1_private(ctx: CheckContext, *, optimum_fn: Callable = pa_optimum) -> CheckResult:
    """The private algorithm's limit vs (Pa) on multi-server instances of the private claim's hypotheses."""
    rng = np.random.default_rng(ctx.seed_sequence("pgfl.theorem1_private.as_stated").generate_state(1)[0])
    evidence = []
    for i in range(4 if not ctx.thorough else 12):
        params = PRIVATE_INSTANCES.sample(rng, zeta=(0.9, 0.97)[i % 2], min_servers=2)
        evidence.append(evaluate_private_limit(params, runs=20 if not ctx.thorough else 200,
                                               seed=int(rng.integers(2**31)), optimum_fn=optimum_fn))
    points = [e.parameters for e in evidence]
    figure = FigureSpec(
        name="limit_distance_to_pa", title="Private PGFL (tau = 0): where the iterates go, relative to (Pa)",
        xlabel="instance", ylabel="squared relative distance to (Pa)", yscale="log",
        series=(Series(label="||w_Pc - w_Pa||^2 / max_q ||w_Pa||^2 (lower bound on the limit, Jensen)",
                       x=range(len(points)), y=[q["squared_relative_distance_Pc_to_Pa"] for q in points],
                       style="points", group="pc"),
                Series(label="Monte-Carlo mean at zeta^n <= 1e-6", x=range(len(points)),
                       y=[q["mc_mean_square_relative_distance_to_Pa"] for q in points], style="points", group="mc")))
    return result_from_evidence(
        "pgfl.theorem1_private", evidence, ctx=ctx,
        quantity="max_{s,q} ||w_Pc - w_Pa|| / max_q ||w_Pa||: the private iterates' mean limit vs the optimum of (2)",
        what="private PGFL (tau = 0) converges to the optimum (Pa) of (2)",
        corrected_claim="pgfl.theorem1_private_rate",
        form="decision", form_reason=("convergence to the optimum of (2) or not: the mean iterate's limit (Pc) against "
                                      "(Pa), compared with the fixed-point tolerance"),
        figures=[figure],
        details={"points": [{k: e.parameters[k] for k in ("servers", "zeta", "rho_factor", "spectral_radius",
                                                          "relative_distance_Pc_to_Pa",
                                                          "squared_relative_distance_Pc_to_Pa",
                                                          "mc_mean_square_relative_distance_to_Pa", "runs")}
                            for e in evidence]})


def reproduce_theorem1_private(counterexample: Mapping[str, Any]) -> Evidence:
    """Rebuild the instance from its recorded parameters and recompute the limit's distance from (Pa)."""
    keys = (*PARAM_KEYS, "zeta", "phi0", "C")
    return evaluate_private_limit({k: v for k, v in counterexample.items() if k in keys},
                                  seed=int(counterexample.get("mc_seed", 0)))


#: The private version of Theorem I (seed 000 abstract, Section III) and its noise schedule.
_CITATIONS = (cite(label="Abstract and Section III (Theorem I for the private version)",
                      lines="229"),
             cite(label="noise schedule delta^2(n) = zeta delta^2(n-1)", lines="145"),
             cite(label="Algorithm 5", lines="1297", seed=SEED_THESIS))

CLAIMS = (
    Claim(
        id="pgfl.theorem1_private",
        title=("Theorem I for the private algorithm: with tau = 0, private PGFL converges linearly to the optimum of "
               "(2)"),
        citations=_CITATIONS,
        statement=("As stated for the privacy-preserving version: PGFL with privacy noise (Algorithm 2), tau = 0 and "
                   "decaying noise variance delta_k^2(n) = zeta delta_k^2(n-1), zeta < 1, converges linearly to the "
                   "optimal solution of (2) for each cluster ((Pa), argmin_w sum_{k in C_(q)} f_k(w))."),
        hypotheses=("ridge f_k, data Hessians with eigenvalues in [1, 4], lambda in [1e-3, 1]", "tau^(n) = 0",
                    "full participation", "at least two servers", "zeta in {0.9, 0.97}, rho/L_max in [0.1, 0.5]"),
        check=check_theorem1_private, expected=Verdict.REFUTED,
        reason=("It falls with Theorem I for several servers: the iteration is affine in (state, noise) with zero-mean "
                "noise, so E w^(n) is the noise-free iterate, which converges to the fixed point (Pc), not (Pa); by "
                "Jensen E||w^(n) - w_Pa||^2 >= ||w_Pc - w_Pa||^2 in the limit, O(1e-2) relative on every "
                "multi-server instance drawn (the Monte-Carlo mean square at zeta^n <= 1e-6 agrees). What does hold "
                "is the rate statement pgfl.theorem1_private_rate, towards (Pc)."),
        severity="false", reproduce=reproduce_theorem1_private, corrected_by="pgfl.theorem1_private_rate",
    ),
    Claim(
        id="pgfl.theorem1_private_rate",
        title="Corrected private Theorem I: E||u^(n) - u*||^2 decays with factor max(r(T)^2, zeta), towards (Pc)",
        citations=_CITATIONS,
        statement=("For privacy-preserving PGFL (Algorithm 2, literal dual reference) with tau = 0, full participation "
                   "and noise variance delta_k^2(n) = zeta^n delta_k^2(0), E||u^(n) - u*||^2 (u = server models and "
                   "duals, u* the noise-free fixed point, whose server part is (Pc), not (Pa)) decays with "
                   "per-iteration factor max(r(T)^2, zeta): zeta when the noise dominates (zeta > r(T)^2) and r(T)^2 "
                   "when the iteration does (zeta < r(T)^2)."),
        hypotheses=("ridge f_k, data Hessians with eigenvalues in [1, 4], lambda in [1e-3, 1]", "tau^(n) = 0",
                    "full participation", "|zeta - r(T)^2| >= 0.05: zeta in {0.9, 0.97} with rho/L_max in [0.1, 0.5] "
                    "([0.18, 0.5] for zeta = 0.9), so that the proven bound gives r(T)^2 <= zeta - 0.05; or "
                    "zeta in [0.05, r(T)^2 - 0.05] with rho/L_max in [0.1, 0.3]"),
        check=check_theorem1_private_rate, expected=Verdict.CONFIRMED,
        reason=("Algorithm 2 (literal) is affine in (state, noise) and contracts for every rho > 0 (proven bound). "
                "E||u^(n) - u*||^2 = ||T^n e_0||^2 + sum_j zeta^j tr(T^(n-j) B D B^T T^(n-j)^T): the first term decays "
                "like r(T)^(2n), the second like max(r(T)^2, zeta)^n. Noise branch: Monte Carlo (jackknife limits) "
                "and the exact covariance recursion give zeta within 0.01. Iteration branch (zeta < r(T)^2, which "
                "the earlier check excluded): the exact curve's factor, over the window where the noise term and the "
                "sub-dominant eigenmodes of T have fallen by 1e-6, matches r(T)^2 to ~1e-7, and 200 Monte-Carlo runs "
                "agree with the exact curve within a few standard errors. The factor zeta alone (true for the noise "
                "term of any stable affine system) is refuted on that branch."),
        corrects="pgfl.theorem1_private",
    ),
)
