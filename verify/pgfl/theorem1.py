r"""PGFL Theorem I: linear convergence without inter-cluster learning (:math:`\tau \equiv 0`).

Theorem I (seed 000 line 229, seed 003 line 268, thesis Theorem 5.1 line 1399) states that with
:math:`\tau^{(n)} = 0` PGFL "converges to the optimal solution of (2) in linear time for each cluster": (Pa) of
docs/papers/pgfl.md#reference-problems, :math:`w^\star_{(q)} = \arg\min_w\sum_{k\in\mathcal C_{(q)}} f_k(w)`. Ridge
instances (strongly convex, docs/papers/pgfl.md#erratum-e11) of :mod:`verify.pgfl._instances`.

``pgfl.theorem1`` (as stated; refuted; a decision: the limit is the optimum or it is not). One server:
global-consensus ADMM, reaches (Pa). Several servers: linear convergence at rate :math:`r(T)` to the fixed point (Pc)
(docs/papers/pgfl.md#structure), which is not (Pa) (:math:`O(1/\rho)` disagreement plus a :math:`\pi`-weighting bias,
docs/papers/pgfl.md#erratum-e12); and Algorithm 1 diverges for small :math:`\rho`
(:func:`theory.pgfl.stability.identical_clients_threshold`). The refutation does not rest on which regulariser
weighting "(2)" is read with (docs/papers/pgfl.md#erratum-e4): where the servers' models of a cluster still disagree
at the limit (``consensus_gap`` > 0) it is the consensus optimum of no problem; where they agree (two servers joined
by an edge average the same aggregates) the limit weights each server's group by its mean gradient (the
:math:`\pi`-weighted optimum), not each client, so it is not the optimum of a client sum whatever the regulariser.

``pgfl.theorem1_fixed_point`` (corrected; confirmed). With the stability condition: limit (Pc), = (Pa) for
:math:`S = 1`, within an explicit :math:`O(1/\rho)` of the :math:`\pi`-weighted optimum
(:func:`theory.pgfl.consensus.consensus_bias`). Its one inequality, the :math:`O(1/\rho)` bias bound, carries the
result's tightness; the other conditions (stability, limit, rate, :math:`S = 1` target) are not bound points.

Acceptance constants (the claim's resolution, not rounding tolerances): (Pa) reached to ``TARGET_RTOL`` when
:math:`S = 1`, the iterate within ``FIXED_POINT_RTOL`` of (Pc), the rate band :math:`[r(T) - 0.05, r(T) + 0.01]`
applied as :func:`verify.pgfl._tau0_iteration.rate_assessment` explains. The private versions are in
:mod:`verify.pgfl.theorem1_private`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from reference_impl.pgfl import PGFLConfig, PGFLProblem, cluster_optima, fixed_point_tau0, iteration_spectral_radius
from theory.pgfl.consensus import (
    consensus_bias,
    fixed_point_condition_number,
    fixed_point_state,
    group_curvature,
    perron_weights,
    pi_weighted_optimum,
)
from theory.pgfl.stability import identical_clients_threshold, iteration_radius, stability_threshold_factor
from verify.evidence import HARD_POINT, SIDES, result_from_evidence, sample_evidence
from verify.papers import SEED_PGFL_J, SEED_THESIS
from verify.pgfl import cite
from verify.pgfl._instances import (
    PARAM_KEYS,
    TAU0_INSTANCES,
    build_instance,
    four_cycle_identical_params,
    paper_params,
    tau0_config,
)
from verify.pgfl._tau0_iteration import rate_assessment, relative_distance, run_errors
from verify.pgfl._theorem1_figures import bias_sweep_figure, error_figure
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import FIXED_POINT_RTOL, TARGET_RTOL, gamma

__all__ = [
    "CLAIMS",
    "check_theorem1",
    "check_theorem1_fixed_point",
    "evaluate_theorem1",
    "evaluate_theorem1_fixed_point",
    "pa_optimum",
    "reproduce_theorem1",
    "smallest_stable_rho",
]

_PROFILE = {
    "ci": {"batches": 2, "per_batch": 4, "fp_batches": 2, "fp_per_batch": 6},
    "thorough": {"batches": 8, "per_batch": 6, "fp_batches": 8, "fp_per_batch": 10},
}


# --------------------------------------------------------------------------------------------------
# pgfl.theorem1 (as stated)
# --------------------------------------------------------------------------------------------------


def pa_optimum(problem: PGFLProblem, config: PGFLConfig) -> np.ndarray:
    """(Pa) for every cluster, (Q, d) (:func:`reference_impl.pgfl.cluster_optima`; ``config`` is unused)."""
    return cluster_optima(problem)


def evaluate_theorem1(params: Mapping[str, Any], *, optimum_fn: Callable = pa_optimum,
                      radius_fn: Callable = iteration_spectral_radius) -> Evidence:
    r"""Run Algorithm 1 with :math:`\tau = 0` to convergence and measure the distance to (Pa).

    The claim holds at the point iff the fitted rate matches :math:`r(T) < 1` (linear convergence) and the
    final server models are within ``FIXED_POINT_RTOL`` (relative) of ``optimum_fn(problem)`` (Pa) for
    every server and cluster. The distance to the solved fixed point (Pc) is recorded as well, so a
    violation shows that the iteration did converge, to another point.
    """
    problem = build_instance(params)
    config = tau0_config(problem, params)
    radius = float(radius_fn(problem, config))
    u_star, w_pc, residual = fixed_point_state(problem, config)
    errors, state = run_errors(problem, config, u_star, radius)
    rate = rate_assessment(problem, config, u_star, errors, radius)
    models = state.w_servers[0]
    target = np.asarray(optimum_fn(problem, config))
    dist_pa = relative_distance(models, target)
    dist_pc = relative_distance(models, w_pc)
    linear = radius < 1.0 and rate["rate_severity"] <= 1.0
    # disagreement of the servers' models of a cluster at the limit: a limit that is not a consensus is the optimum
    # of no consensus problem, whichever regulariser weighting "(2)" is read with
    spread = max(float(np.max(np.linalg.norm(w_pc[:, q, None, :] - w_pc[None, :, q, :], axis=-1)))
                 for q in range(w_pc.shape[1]))
    consensus_gap = spread / max(float(np.max(np.linalg.norm(w_pc, axis=-1))), 1e-300)
    # one server: (Pa) must be reached exactly; several: within the fixed-point tolerance
    tol = TARGET_RTOL if problem.S == 1 else FIXED_POINT_RTOL
    return Evidence(measured=dist_pa, bound=tol, holds=bool(linear and dist_pa <= tol),
                    parameters={**dict(params), "iterations": int(errors.size), "spectral_radius": radius, **rate,
                                "relative_distance_to_Pa": dist_pa, "relative_distance_to_Pc": dist_pc,
                                "fixed_point_residual": residual,
                                "relative_distance_Pc_to_Pa": relative_distance(w_pc, target),
                                "consensus_gap": consensus_gap})


def _theorem1_batch(rng: np.random.Generator, count: int, optimum_fn: Callable) -> list[Evidence]:
    """Half single-server (exact target), half multi-server (S in [2, 4]) gaussian instances of ``TAU0_INSTANCES``."""
    out = []
    for i in range(count):
        low, high = (1, 1) if i % 2 == 0 else (2, 4)
        params = TAU0_INSTANCES.sample(rng, min_servers=low, max_servers=high, data="gaussian")
        out.append(evaluate_theorem1(params, optimum_fn=optimum_fn))
    return out


def _rho_sweep(problem: PGFLProblem, factors) -> dict:
    """Relative distances of (Pc) to (Pa) and to the pi-weighted optimum over rho = factor * L_max."""
    pa, wpi = cluster_optima(problem), pi_weighted_optimum(problem)
    to_pa, to_pi = [], []
    for f in factors:
        w, _ = fixed_point_tau0(problem, PGFLConfig(rho=f * problem.max_curvature))
        to_pa.append(relative_distance(w, pa))
        to_pi.append(relative_distance(w, wpi))
    return {"rho_over_Lmax": list(factors), "to_Pa": to_pa, "to_pi_weighted": to_pi,
            "Pa_vs_pi_weighted": relative_distance(wpi, pa)}


def _loglog_exponent(x, y) -> float:
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


def smallest_stable_rho(problem: PGFLProblem, grid=None, *, algorithm: str = "alg1") -> dict:
    """Smallest rho/L_max on a log grid from which every larger grid value has r(T) < 1 (closed-form radius)."""
    grid = np.geomspace(1e-3, 1.0, 31) if grid is None else np.asarray(grid, dtype=np.float64)
    extra = {"algorithm": "alg2"} if algorithm == "alg2" else {}
    radii = [iteration_radius(problem, PGFLConfig(rho=f * problem.max_curvature, **extra)) for f in grid]
    stable = np.asarray(radii) < 1.0
    start = len(grid)
    while start > 0 and stable[start - 1]:
        start -= 1
    return {"smallest_stable_rho_over_Lmax": float(grid[start]) if start < len(grid) else None,
            "largest_unstable_rho_over_Lmax": float(grid[start - 1]) if start > 0 else None,
            "grid": grid.tolist(), "radius": [float(r) for r in radii]}


def _stability_report(ctx: CheckContext) -> dict:
    """Smallest stable rho/L_max of Algorithm 1 on instances shaped like the paper's regression setting, and the sharp
    4-cycle example."""
    rng = np.random.default_rng(ctx.seed_sequence("pgfl.theorem1.stability").generate_state(1)[0])
    rows = []
    count = 4 if not ctx.thorough else 8
    for _ in range(count):
        d = int(rng.integers(2, 5))
        params = {"seed": int(rng.integers(2**32)), "servers": int(rng.integers(3, 7)), "clients_per_server": 4,
                  "clusters": 2, "d": d, "lam": 0.1, "samples": (2, 9), "data": "gaussian", "average_degree": 3.0}
        problem = build_instance(params)
        scan = smallest_stable_rho(problem)
        rows.append({"instance": {k: v for k, v in params.items()},
                     "smallest_stable_rho_over_Lmax": scan["smallest_stable_rho_over_Lmax"],
                     "graph_threshold_m_over_1_plus_m": stability_threshold_factor(problem.adjacency)})
    if ctx.thorough:
        problem = build_instance(paper_params(int(rng.integers(2**32))))
        scan = smallest_stable_rho(problem, np.geomspace(1e-3, 1.0, 13))
        rows.append({"instance": "paper size (S=10, 15 clients/server, d=60)",
                     "smallest_stable_rho_over_Lmax": scan["smallest_stable_rho_over_Lmax"],
                     "graph_threshold_m_over_1_plus_m": stability_threshold_factor(problem.adjacency)})
    c4 = build_instance(four_cycle_identical_params(0.1))
    threshold = identical_clients_threshold(c4) / c4.max_curvature
    scan = smallest_stable_rho(c4, np.geomspace(0.05, 1.0, 41))
    at_01 = iteration_spectral_radius(c4, PGFLConfig(rho=0.1 * c4.max_curvature))
    a = 0.1 / 1.1
    return {"paper_style_instances": rows,
            "four_cycle_identical_clients": {
                "params": four_cycle_identical_params(0.1), "closed_form_threshold_rho_over_Lmax": threshold,
                "grid_smallest_stable_rho_over_Lmax": scan["smallest_stable_rho_over_Lmax"],
                "grid_largest_unstable_rho_over_Lmax": scan["largest_unstable_rho_over_Lmax"],
                "r(T)_at_0.1_Lmax": at_01, "closed_form_r_at_0.1_Lmax": 4.0 / 3.0 - 5.0 / 3.0 * a},
            "note": ("Algorithm 1 is unstable below a threshold; the 0.03-0.08 L_max seen on the paper's kind of "
                     "data (docs/papers/pgfl.md#choice-rho-lambda) holds where L_max is set by outlying clients. With "
                     "identical clients the "
                     "threshold is L_max m/(1+m) (0.25 L_max on a 4-cycle), so rho >= 0.1 L_max is not "
                     "always stable.")}


SWEEP_FACTORS = (0.1, 0.2, 0.3, 0.5, 1.0, 3.0, 10.0, 30.0, 100.0, 1000.0)


def check_theorem1(ctx: CheckContext, *, optimum_fn: Callable = pa_optimum) -> CheckResult:
    """Single- and multi-server instances run to convergence; distance of the limit to ``optimum_fn`` (Pa)."""
    p = _PROFILE[ctx.profile]
    evidence = sample_evidence(ctx, "pgfl.theorem1", _theorem1_batch, p["batches"], (p["per_batch"], optimum_fn))
    if ctx.thorough:
        params = paper_params(int(ctx.seed_sequence("pgfl.theorem1.paper").generate_state(1)[0]))
        evidence.append(evaluate_theorem1(params, optimum_fn=optimum_fn, radius_fn=iteration_radius))
    single = [e for e in evidence if e.parameters["servers"] == 1]
    multi = [e for e in evidence if e.parameters["servers"] > 1]
    not_converged = [e.parameters for e in evidence if e.parameters["relative_distance_to_Pc"] > FIXED_POINT_RTOL]
    if not_converged:
        # the refutation rests on runs that did converge (to (Pc)); anything else is a harness failure
        raise AssertionError(f"runs did not reach the solved fixed point (Pc) to {FIXED_POINT_RTOL}: {not_converged}")
    # rho scaling of the bias on the multi-server point farthest from (Pa)
    worst_multi = max(multi, key=lambda e: e.measured)
    problem = build_instance(worst_multi.parameters)
    sweep = _rho_sweep(problem, SWEEP_FACTORS)
    in_range = [i for i, f in enumerate(SWEEP_FACTORS) if f <= 0.5]
    large = [i for i, f in enumerate(SWEEP_FACTORS) if f >= 10.0]
    exponents = {
        "to_Pa_rho_in_[0.1,0.5]Lmax": _loglog_exponent([SWEEP_FACTORS[i] for i in in_range],
                                                       [sweep["to_Pa"][i] for i in in_range]),
        "to_Pa_rho_in_[10,1000]Lmax": _loglog_exponent([SWEEP_FACTORS[i] for i in large],
                                                       [sweep["to_Pa"][i] for i in large]),
        "to_pi_weighted_rho_in_[0.1,0.5]Lmax": _loglog_exponent([SWEEP_FACTORS[i] for i in in_range],
                                                                [sweep["to_pi_weighted"][i] for i in in_range]),
        "to_pi_weighted_rho_in_[10,1000]Lmax": _loglog_exponent([SWEEP_FACTORS[i] for i in large],
                                                                [sweep["to_pi_weighted"][i] for i in large])}
    # figures: one single-server and the worst multi-server run
    cases = []
    for e in (single[0], worst_multi):
        pr = build_instance(e.parameters)
        cfg = tau0_config(pr, e.parameters)
        u_star, _, _ = fixed_point_state(pr, cfg)
        errors, _ = run_errors(pr, cfg, u_star, e.parameters["spectral_radius"])
        cases.append((f"S = {e.parameters['servers']}", errors, e.parameters["spectral_radius"]))
    figures = [
        error_figure(cases, "error_vs_iteration", "Theorem I: Algorithm 1, tau = 0: state error and r(T)^n"),
        bias_sweep_figure(sweep, "distance_vs_rho", "Theorem I: limit (Pc) vs (Pa) and the pi-weighted optimum"),
    ]
    details = {
        "single_server_max_relative_distance_to_Pa": max(e.measured for e in single),
        "multi_server_relative_distance_to_Pa": [e.measured for e in multi],
        "multi_server_max_relative_distance_to_Pc": max(e.parameters["relative_distance_to_Pc"] for e in multi),
        "rate_fits": [{"servers": e.parameters["servers"], "r(T)": e.parameters["spectral_radius"],
                       "fitted": e.parameters["fitted_rate"], "predicted": e.parameters.get("predicted_window_fit"),
                       "asymptotic": e.parameters.get("asymptotic_rate")} for e in evidence],
        "rate_band_violations": sum(e.parameters["rate_band_severity"] > 1.0 for e in evidence),
        "rho_sweep_on_worst_instance": sweep, "loglog_exponents": exponents,
        "stability": _stability_report(ctx),
    }
    details["multi_server_consensus_gap"] = [e.parameters["consensus_gap"] for e in multi]
    return result_from_evidence(
        "pgfl.theorem1", evidence, ctx=ctx, quantity="max_{s,q} ||w_{s,(q)}^(N) - w*_(q)|| / max_q ||w*_(q)|| (Pa)",
        form="decision", form_reason=("convergence to the optimum of (2) or not: the run converges (to the solved "
                                      "fixed point (Pc)) and its distance to (Pa) is compared with the fixed-point "
                                      "tolerance; the paper gives no rate constant to bound"),
        what="Algorithm 1 (tau = 0) converges linearly to (Pa)", figures=figures,
        corrected_claim="pgfl.theorem1_fixed_point", details=details)


def reproduce_theorem1(counterexample: Mapping[str, Any]) -> Evidence:
    """Rebuild the counterexample instance from its recorded parameters and rerun the iteration."""
    return evaluate_theorem1({k: v for k, v in counterexample.items() if k in PARAM_KEYS})


# --------------------------------------------------------------------------------------------------
# pgfl.theorem1_fixed_point (corrected statement)
# --------------------------------------------------------------------------------------------------


def _bias_evidence(problem: PGFLProblem, rho: float, params: Mapping[str, Any],
                   pi_optimum_fn: Callable) -> list[Evidence]:
    r"""Distance of (Pc) to the :math:`\pi`-weighted optimum against
    :math:`\kappa\lVert g_\pi\rVert/(\rho' - \kappa G_{\max})`.

    Evaluated at :math:`\rho' = \max(\rho, \max_q\kappa_q G_{\max,q})\cdot\{2, 20, 200\}` (where the bound
    applies; it is :math:`O(1/\rho')`), and at the drawn :math:`\rho` in the a-posteriori form
    :math:`\lVert e\rVert \le \kappa\lVert g(w)\rVert/\rho` of the exact identity, whose residual is checked too.
    Each distance may exceed its bound by the rounding allowance
    :math:`\gamma_{16Sd+16}(\mathrm{cond}(\bar G) + \mathrm{cond}(\text{fixed-point system}))\sqrt{Sd}\max|w|`
    (the fixed-point system's condition grows like :math:`\rho'`). ``measured`` is the worst ratio
    distance / (bound + allowance).

    Two points: every row, and (a declared hardest point) the rows at the largest :math:`\rho'`, the bound's
    first-order regime, where :math:`\rho'\lVert e\rVert \to \lVert N(I - A)^\# A\,g\rVert` and only the slack of
    the operator norm :math:`\kappa` remains. ``parameters["sides"]``: (distance, bound) of the row with the largest
    ratio, rows at the rounding allowance left out.
    """
    w_pi_ref = pi_weighted_optimum(problem)
    w_pi = np.asarray(pi_optimum_fn(problem))
    S, d = problem.S, problem.d
    w_rho, _ = fixed_point_tau0(problem, PGFLConfig(rho=rho))
    clusters = consensus_bias(problem, rho, w_rho)
    pi = perron_weights(problem)
    cond_g = max(float(np.linalg.cond(np.einsum("s,sij->ij", pi, group_curvature(problem, q)[0])))
                 for q in range(problem.n_clusters))
    large = max(rho, max(cb["kappa"] * cb["G_max"] for cb in clusters))
    rows, worst = [], 0.0
    cond_rho = fixed_point_condition_number(problem, rho)
    for r in [rho] + [large * m for m in (2.0, 20.0, 200.0)]:
        w = w_rho if r == rho else fixed_point_tau0(problem, PGFLConfig(rho=r))[0]
        cond = cond_rho if r == rho else fixed_point_condition_number(problem, r)
        scale = max(float(np.max(np.abs(w))), float(np.max(np.abs(w_pi_ref))))
        allowance = gamma(16 * S * d + 16) * (cond_g + cond) * scale * math.sqrt(S * d)
        for q, cb in enumerate(clusters):
            kappa, g_pi, g_max = cb["kappa"], cb["g_pi"], cb["G_max"]
            distance = float(np.linalg.norm(w[:, q, :] - w_pi[q][None, :]))
            # at the drawn rho the a-posteriori form of the identity: ||e|| <= kappa ||g(w)|| / rho
            bound = kappa * cb["g_w"] / r if r == rho else kappa * g_pi / (r - kappa * g_max)
            ratio = distance / (bound * (1.0 + gamma(8 * S * d)) + allowance)
            worst = max(worst, ratio)
            rows.append({"cluster": q, "rho": r, "distance": distance, "bound": bound, "allowance": allowance})
    identity = max(cb["identity_gap"] / (gamma(16 * S * d + 16) * (cb["scale"] + rho * float(np.max(np.abs(w_rho))))
                                         * cond_rho + 1e-300) for cb in clusters)
    measured = max(worst, identity)
    largest = max(r["rho"] for r in rows)

    def sides(subset):
        # slack ratio of the bound: distance / bound at the row where it is largest (rows whose distance is at the
        # rounding allowance carry no information about the bound and are left out)
        rated = [r for r in subset if r["bound"] > 0 and r["distance"] > 10.0 * r["allowance"]]
        tight = max(rated, key=lambda r: r["distance"] / r["bound"]) if rated else None
        return ((tight["distance"], tight["bound"]) if tight else None,
                {"rho": tight["rho"], "drawn_rho": tight["rho"] == rho, "cluster": tight["cluster"]} if tight else None)

    limit_rows = [r for r in rows if r["rho"] == largest]
    limit_ratio = max(r["distance"] / (r["bound"] * (1.0 + gamma(8 * S * d)) + r["allowance"]) for r in limit_rows)
    all_sides, all_at = sides(rows)
    limit_sides, limit_at = sides(limit_rows)
    base = {**dict(params), "condition": "O(1/rho) distance to the pi-weighted optimum",
            "kappa": [cb["kappa"] for cb in clusters]}
    return [Evidence(measured=measured, bound=1.0, holds=measured <= 1.0,
                     parameters={**base, "bias_rows": rows, "identity_ratio": identity, SIDES: all_sides,
                                 "tightest_row": all_at}),
            Evidence(measured=limit_ratio, bound=1.0, holds=limit_ratio <= 1.0,
                     parameters={**base, "rho_prime": largest, SIDES: limit_sides, "tightest_row": limit_at,
                                 HARD_POINT: "largest rho' (the O(1/rho) bound's first-order regime)"})]


def evaluate_theorem1_fixed_point(params: Mapping[str, Any], *, fixed_point_fn: Callable = fixed_point_state,
                                  radius_fn: Callable = iteration_spectral_radius,
                                  pi_optimum_fn: Callable = pi_weighted_optimum) -> list[Evidence]:
    r"""Evidence of the corrected statement at one instance (Algorithm 1, :math:`\tau = 0`, no noise).

    One :class:`Evidence` per condition: stability (:math:`r(T) < 1`, cross-checked with the closed form
    :func:`iteration_radius`), limit = (Pc) (``FIXED_POINT_RTOL``), fitted rate in the band around
    :math:`r(T)`, (Pc) = (Pa) for :math:`S = 1` (``TARGET_RTOL``), and the :math:`O(1/\rho)` bias bound.
    """
    problem = build_instance(params)
    config = tau0_config(problem, params)
    radius = float(radius_fn(problem, config))
    radius_closed = iteration_radius(problem, config)
    base = {**dict(params), "spectral_radius": radius, "closed_form_radius": radius_closed,
            "stability_threshold_factor": stability_threshold_factor(problem.adjacency)}
    out = [Evidence(measured=radius, bound=1.0, holds=radius < 1.0,
                    parameters={**base, "condition": "r(T) < 1", SIDES: None})]
    if radius >= 1.0:
        return out
    u_star, w_pc, residual = fixed_point_fn(problem, config)
    errors, state = run_errors(problem, config, u_star, radius)
    rate = rate_assessment(problem, config, u_star, errors, radius)
    dist_pc = relative_distance(state.w_servers[0], w_pc)
    info = {**base, "iterations": int(errors.size), **rate, "fixed_point_residual": residual}
    out.append(Evidence(measured=dist_pc, bound=FIXED_POINT_RTOL, holds=dist_pc <= FIXED_POINT_RTOL,
                        parameters={**info, "condition": "limit is (Pc)", SIDES: None}))
    severity = rate["rate_severity"]
    out.append(Evidence(measured=severity, bound=1.0, holds=severity <= 1.0,
                        parameters={**info, "condition": "linear rate r(T): asymptotic rate in [r(T) - 0.05, "
                                                         "r(T) + 0.01], window fit = prediction of T", SIDES: None}))
    if problem.S == 1:
        pa = cluster_optima(problem)
        dist = max(relative_distance(w_pc, pa), relative_distance(state.w_servers[0], pa))
        out.append(Evidence(measured=dist, bound=TARGET_RTOL, holds=dist <= TARGET_RTOL,
                            parameters={**info, "condition": "S = 1: limit is (Pa)", SIDES: None}))
    out += _bias_evidence(problem, config.rho, base, pi_optimum_fn)
    return out


def _fixed_point_batch(rng: np.random.Generator, count: int, kwargs: dict) -> list[Evidence]:
    """Instances of the corrected claim's hypotheses (``TAU0_INSTANCES``, the space of its property test), every
    third with identical-client data."""
    return [ev for i in range(count)
            for ev in evaluate_theorem1_fixed_point(
                TAU0_INSTANCES.sample(rng, data="identical" if i % 3 == 2 else "gaussian"), **kwargs)]


def check_theorem1_fixed_point(ctx: CheckContext, *, fixed_point_fn: Callable = fixed_point_state,
                               radius_fn: Callable = iteration_spectral_radius,
                               pi_optimum_fn: Callable = pi_weighted_optimum) -> CheckResult:
    """Random instances (gaussian and identical-client data, S = 1..4), the sharp 4-cycle, and (thorough) the
    paper's size."""
    p = _PROFILE[ctx.profile]
    kwargs = {"fixed_point_fn": fixed_point_fn, "radius_fn": radius_fn, "pi_optimum_fn": pi_optimum_fn}
    evidence = sample_evidence(ctx, "pgfl.theorem1_fixed_point", _fixed_point_batch, p["fp_batches"],
                               (p["fp_per_batch"], kwargs))
    c4 = build_instance(four_cycle_identical_params(0.1))
    sharp = 1.1 * identical_clients_threshold(c4) / c4.max_curvature
    evidence += evaluate_theorem1_fixed_point(four_cycle_identical_params(sharp), **kwargs)
    if ctx.thorough:
        params = paper_params(int(ctx.seed_sequence("pgfl.theorem1_fixed_point.paper").generate_state(1)[0]))
        thr = stability_threshold_factor(build_instance(params).adjacency)
        params["rho_factor"] = max(params["rho_factor"], 1.1 * thr)
        evidence += evaluate_theorem1_fixed_point(params, **{**kwargs, "radius_fn": iteration_radius})
    rate_points = [e for e in evidence if e.parameters["condition"].startswith("linear rate")]
    cases = []
    for e in sorted(rate_points, key=lambda e: e.parameters["spectral_radius"])[:: max(1, len(rate_points) // 3)][:3]:
        pr = build_instance(e.parameters)
        cfg = tau0_config(pr, e.parameters)
        u_star, _, _ = fixed_point_fn(pr, cfg)
        errors, _ = run_errors(pr, cfg, u_star, e.parameters["spectral_radius"])
        label = f"S = {e.parameters['servers']}, {e.parameters['data']}"
        cases.append((label, errors, e.parameters["spectral_radius"]))
    bias_rows = [row for e in evidence if e.parameters["condition"].startswith("O(1/rho)")
                 for row in e.parameters.get("bias_rows", ()) if row["bound"] > 0]
    figure_bias = FigureSpec(
        name="pi_bias_vs_rho", title="Corrected Theorem I: ||(Pc) - pi-weighted optimum|| against its O(1/rho) bound",
        xlabel="rho", ylabel="distance (per cluster)", xscale="log", yscale="log",
        series=(Series(label="distance", x=[r["rho"] for r in bias_rows],
                       y=[max(r["distance"], 1e-300) for r in bias_rows], style="points", group="b"),
                Series(label="bound kappa ||g|| / (rho - kappa G_max) (or kappa ||g(w)|| / rho)",
                       x=[r["rho"] for r in bias_rows], y=[r["bound"] for r in bias_rows], style="points", group="c")))
    radius_gap = max(abs(e.parameters["spectral_radius"] - e.parameters["closed_form_radius"]) for e in evidence)
    return result_from_evidence(
        "pgfl.theorem1_fixed_point", evidence, ctx=ctx,
        quantity=("per condition: measured / acceptance bound (r(T) < 1; ||w - (Pc)||; rate band; (Pa) if S = 1; "
                  "bias bound)"),
        what="tau = 0 iteration converges at rate r(T) to (Pc), = (Pa) if S = 1, O(1/rho) from the pi-weighted optimum",
        figures=[error_figure(cases, "error_vs_iteration", "Corrected Theorem I: error and r(T)^n"), figure_bias],
        details={"max_|r(T)_reference - r(T)_closed_form|": radius_gap,
                 "sharp_four_cycle_rho_over_Lmax": sharp,
                 "rates": [{"servers": e.parameters["servers"], "data": e.parameters["data"],
                            "rho_over_Lmax": e.parameters["rho_factor"], "r(T)": e.parameters["spectral_radius"],
                            "fitted": e.parameters["fitted_rate"],
                            "predicted": e.parameters.get("predicted_window_fit"),
                            "asymptotic": e.parameters.get("asymptotic_rate")} for e in rate_points],
                 "rate_band_violations": sum(e.parameters["rate_band_severity"] > 1.0 for e in rate_points)})


# --------------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------------

#: Theorem I in the three seeds.
_CITATIONS = (cite(label="Theorem I", equation="(13)-(22)", lines="199-240"),
            cite(label="Theorem I", lines="268", seed=SEED_PGFL_J),
            cite(label="Theorem 5.1", lines="1399", seed=SEED_THESIS))

CLAIMS = (
    Claim(
        id="pgfl.theorem1",
        title="Theorem I: with tau = 0, PGFL converges linearly to the optimum of (2) for each cluster",
        citations=_CITATIONS,
        statement=("Under Assumption 1, if tau^(n) = tau = 0 for all n, the proposed PGFL algorithm converges to the "
                   "optimal solution of (2) in linear time for each cluster (the optimum of (2) with tau = 0 is (Pa), "
                   "argmin_w sum_{k in C_(q)} f_k(w), docs/papers/pgfl.md#reference-problems)."),
        hypotheses=("Assumption 1 (convex, smooth f_k); instances are strongly convex ridge problems "
                    "(docs/papers/pgfl.md#erratum-e11)",
                    "tau^(n) = 0", "full participation, no privacy noise (Algorithm 1)",
                    "rho/L_max uniform in [max(0.1, 1.1 m/(1+m)), 0.5] (m = max(0, -lambda_min(A_srv))) so that "
                    "r(T) < 1"),
        check=check_theorem1, expected=Verdict.REFUTED,
        reason=("With one server the iteration is global-consensus ADMM and reaches (Pa) (to 1e-10). With several "
                "servers it converges linearly at rate r(T) to the fixed point (Pc) (docs/papers/pgfl.md#structure; "
                "to 1e-9), which is "
                "O(1e-2) relative away from (Pa): O(1/rho) server disagreement plus a pi-weighting bias that does not "
                "vanish as rho -> infinity (the distance to (Pa) levels off, the distance to the pi-weighted optimum "
                "falls like 1/rho). The proof (seed 000 eqs. (13)-(22)) analyses a client-level decentralised ADMM, "
                "not steps (8)-(10) (docs/papers/pgfl.md#erratum-e12). The refutation does not depend on the reading "
                "of (2)'s regulariser weight: where the servers' models of a cluster disagree at the limit (details: "
                "multi_server_consensus_gap, 0.04-0.21 relative) it is the consensus optimum of no problem, and where "
                "they agree (S = 2) it weights the servers' groups, not the clients. The theorem also has no "
                "condition on rho, and Algorithm 1 diverges for "
                "rho < L_max m/(1+m) with identical clients (4-cycle: r(T) = 1.18 at rho = 0.1 L_max)."),
        severity="false",
        reproduce=reproduce_theorem1, corrected_by="pgfl.theorem1_fixed_point",
    ),
    Claim(
        id="pgfl.theorem1_fixed_point",
        title="Corrected Theorem I: linear convergence at rate r(T) to the fixed point (Pc), (Pa) only for one server",
        citations=_CITATIONS,
        statement=("With tau = 0, full participation, no noise and rho in [0.1, 0.5] L_max with "
                   "rho > L_max m/(1+m), m = max(0, -lambda_min(A_srv)) (the stability threshold, exact for "
                   "identical clients), the Algorithm 1 iteration has r(T) < 1 and converges linearly with rate r(T) "
                   "to the fixed point (Pc) (docs/papers/pgfl.md#structure), which equals (Pa) when S = 1 and lies "
                   "within "
                   "kappa ||g(1 w_pi)|| / (rho - kappa max_s ||G_s||) = O(1/rho) of the pi-weighted optimum "
                   "argmin sum_s |N_s|/|C_{s,(q)}| sum_{k in C_{s,(q)}} f_k (kappa = ||N (I - A)^# A||)."),
        hypotheses=("ridge f_k with lambda in [1e-3, 1] (strongly convex)", "tau^(n) = 0",
                    "full participation, no noise",
                    "connected server graph, every group C_{s,(q)} non-empty",
                    "rho in [0.1, 0.5] L_max and rho > L_max m/(1+m)"),
        check=check_theorem1_fixed_point, expected=Verdict.CONFIRMED,
        reason=("The iteration is affine: with v = w_k - phi_k/rho it is v -> (I + RC)v/2 (R = 2P - I, C = 2B - I), "
                "whose radius matches the reference's r(T); the iterates reach the solved (Pc) to 1e-9 at the fitted "
                "rate, (Pc) = (Pa) for S = 1, and the exact identity rho (w - 1 w_pi) = -N (I - A)^# A g(w) gives the "
                "explicit O(1/rho) bound. Stability for rho >= L_max and for lambda_min(A_srv) >= 0 is proved; the "
                "graph threshold L_max m/(1+m) is exact for identical clients and held on every instance tried."),
        corrects="pgfl.theorem1",
    ),
)
