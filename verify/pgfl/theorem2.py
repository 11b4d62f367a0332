r"""PGFL Theorem II and its Corollary on the running algorithm (common random numbers).

:math:`D_n = \max_{s,q}\lVert\bar w_{s,(q)}^{(n)} - w_{s,(q)}^{(n)}\rVert^2`, where :math:`\bar w` is the
:math:`\tau \equiv 0` run and both runs share data, initialisation, scheduling and noise draws. Theorem II claims
:math:`D_n \le B_n = \eta(1 - \prod_{j\le n}(1-\tau^{(j)}))` for all :math:`n` once :math:`\rho` is large enough.

* ``pgfl.theorem2`` (a bound; refuted for every :math:`\rho > 0`, docs/papers/pgfl.md#erratum-r-a): one server, two
  clusters with one client each, :math:`f_q(w) = a_q(w - w_0)^2`, :math:`a_1 \ne a_2`: both optima are :math:`w_0`, so
  :math:`\eta = 0 = B_n`, but :math:`D_1 = \tau^2 w_0^2 (2a_1/(2a_1+\rho) - 2a_2/(2a_2+\rho))^2 > 0`. This instance
  meets the theorem's own hypotheses (Assumption 1, any :math:`\rho`); the paper's own sizes (S = 10, 15 clients per
  server, d = 60, :math:`\tau = 0.4`) are swept at the thorough profile. Privacy noise only makes it worse
  (:mod:`verify.pgfl._noise_sweep`).
* ``pgfl.corollary`` (a bound; refuted): on the same instance the :math:`\tau = 0` run is, in closed form,
  :math:`\varphi_k \equiv 0` and :math:`\hat w_q^{(n)} = w_0(1 - r_q^n)`, :math:`r_q = \rho/(2a_q + \rho)`, so a single
  step of :math:`\tau` at iteration :math:`n` gives :math:`D_n = \tau^2w_0^2(r_2^n - r_1^n)^2 > 0 = \tau\eta` at every
  :math:`n`: the hypothesis ":math:`\tau^{(i)} = 0` for :math:`i < n`" is not vacuous (:math:`n \ge 2`) and the bound
  still fails. The exact value is computed in rational arithmetic (a certificate where the floating-point gap falls
  below rounding) and cross-checked with the simulation where it is resolvable.
* ``pgfl.corollary_identity`` (corrected, an identity checked on the algorithm): if :math:`\tau^{(i)} = 0` for
  :math:`i < n`, then :math:`\bar w^{(n)}_{s,(q)} - w^{(n)}_{s,(q)} = \tau^{(n)}\bigl(\hat w_{s,(q)}^{(n)} -
  \tfrac{1}{Q-1}\sum_{r\ne q}\hat w_{s,(r)}^{(n)}\bigr)`, so :math:`D_n \le (\tau^{(n)})^2 \max_{s,q,r}
  \lVert\hat w_{s,(q)}^{(n)} - \hat w_{s,(r)}^{(n)}\rVert^2`.

The limit :math:`n\to\infty` is in :mod:`verify.pgfl.theorem2_limit`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from fractions import Fraction

import numpy as np

from reference_impl.pgfl import (
    PGFLConfig,
    cluster_optima,
    eta_cluster_distance,
    run_pgfl,
    server_models_observer,
    synthetic_regression,
)
from theory.bounds import corollary_single_step_bound, intercluster_bound
from theory.pgfl.stability import slowest_cluster_curvature
from verify.evidence import HARD_POINT, bound_tightness, declare_form, report_counterexample, result_from_evidence
from verify.papers import SEED_THESIS
from verify.pgfl import cite
from verify.pgfl._coupled_runs import gap_sequence
from verify.pgfl._instances import build_instance, equal_optima_instance
from verify.pgfl._noise_sweep import (
    RHO_GRID,
    RHO_GRID_PAPER_SIZE,
    SWEEP_COLUMNS,
    SWEEP_SCALES,
    noise_sweep,
    sweep_horizon,
)
from verify.pgfl._theorem2_figures import noise_sweep_figures
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, MonteCarlo, Series, Verdict
from verify.tolerance import RECORDED_ALPHA, gamma

__all__ = [
    "CLAIMS",
    "THEOREM2_CITATIONS",
    "check_corollary",
    "check_corollary_identity",
    "check_theorem2",
    "evaluate_corollary_identity",
    "evaluate_equal_optima",
    "evaluate_noise_decomposition",
]


def exact_single_step_gap(a1: float, a2: float, w0: float, rho: float, tau: float, n: int) -> Fraction:
    r""":math:`D_n = \tau^2 w_0^2 (r_2^n - r_1^n)^2`, :math:`r_q = \rho/(2a_q + \rho)`, in exact rational arithmetic
    (the float inputs are exact binary rationals): the equal-optima instance after :math:`n - 1` steps of
    :math:`\tau = 0` and one of :math:`\tau` (module docstring). Positive whenever :math:`a_1 \ne a_2`."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    a1_, a2_, w0_, rho_, tau_ = (Fraction(v) for v in (a1, a2, w0, rho, tau))
    r1, r2 = rho_ / (2 * a1_ + rho_), rho_ / (2 * a2_ + rho_)
    return tau_**2 * w0_**2 * (r2**n - r1**n) ** 2


def evaluate_equal_optima(a1: float, a2: float, w0: float, rho: float, tau: float, n: int = 1) -> Evidence:
    """Iteration ``n`` of the equal-optima instance with tau^(i) = 0 for i < n and tau^(n) = tau (n = 1: the first
    step of any schedule starting with tau): D_n > B_n = tau eta = 0 is a violation.

    ``measured`` is the exact D_n (:func:`exact_single_step_gap`, rational arithmetic); the simulated D_n must agree
    with it within the rounding of the simulation (``closed_form_agrees``) wherever the gap is resolvable in floating
    point (``resolvable``: the exact gap above the simulation's rounding floor), which ties the certificate to the
    implemented algorithm.
    """
    problem = equal_optima_instance(a1, a2, w0)
    # both clusters' optima are w0 exactly, so eta = 0 exactly; the solver's eta is recorded (rounding, ~1e-33), but
    # the bound is evaluated at the exact eta, like D_n, so that a gap below the rounding of eta still counts
    eta_computed = eta_cluster_distance(cluster_optima(problem))
    eta = 0.0
    taus = (0.0,) * (n - 1) + (tau,)
    dn = float(gap_sequence(problem, PGFLConfig(rho=rho, taus=taus), n, seed=0)[n - 1])
    bound = float(intercluster_bound(list(taus), eta)[-1])
    exact = exact_single_step_gap(a1, a2, w0, rho, tau, n)
    r1, r2 = rho / (2 * a1 + rho), rho / (2 * a2 + rho)
    hat1, hat2 = w0 * (1 - r1**n), w0 * (1 - r2**n)
    # D_n squares w_bar - w = hat_q - ((1 - tau) hat_q + tau hat_r), a difference of O(|hat|) numbers equal to
    # tau (hat_q - hat_r); each hat carries the rounding of ~32 operations per iteration (client solve, aggregation,
    # mixing) and the mixing step rounds at the scale of |hat| whatever tau, so the simulated gap sqrt(D_n) is known to
    # gamma(32 n) (|hat1| + |hat2|) absolutely.
    floor = gamma(32 * n) * (abs(hat1) + abs(hat2))
    resolvable = bool(float(exact) ** 0.5 > 100.0 * floor)
    agrees = abs(dn ** 0.5 - float(exact) ** 0.5) <= floor + 1e-300
    return Evidence(measured=float(exact), bound=bound, holds=bool(exact <= bound),
                    parameters={"a1": a1, "a2": a2, "w0": w0, "rho": rho, "tau": tau, "n": n, "eta": eta,
                                "eta_computed": eta_computed,
                                "D_n_simulated": dn, "D_n_exact": float(exact), "exact_positive": bool(exact > 0),
                                "resolvable": resolvable, "closed_form_agrees": bool(agrees or not resolvable),
                                HARD_POINT: "eta = 0 (equal optima, different curvatures)"})


def _sweep_instance(item):
    """One instance of the paper-like sweep (module level: runs on the executor)."""
    i, seed, sizes, base, grid = item
    problem = synthetic_regression(np.random.default_rng(seed), **sizes)
    eta = eta_cluster_distance(cluster_optima(problem))
    mu_min = slowest_cluster_curvature(problem)
    row = {"instance": i, "seed": seed, "eta": eta, "L_max": problem.max_curvature, "mu_min": mu_min,
           "ratio_by_rho": {}, "iterations_by_rho": {}, "peak_iteration_by_rho": {}, "status_by_rho": {}}
    curves = {}
    for mult in grid:
        rho = mult * problem.max_curvature
        iterations = sweep_horizon(rho, mu_min, base)
        bound = intercluster_bound(np.full(iterations, 0.4), eta)
        ratio = gap_sequence(problem, PGFLConfig(rho=rho, taus=(0.4,)), iterations, seed=seed) / bound
        peak = int(np.argmax(ratio)) + 1
        row["ratio_by_rho"][mult] = float(ratio.max())
        row["iterations_by_rho"][mult] = iterations
        row["peak_iteration_by_rho"][mult] = peak
        # A cell holds only if the ratio peaked well inside the horizon (a still-rising ratio proves nothing).
        row["status_by_rho"][mult] = ("violated" if ratio.max() > 1.0 else
                                      "holds" if peak <= 0.9 * iterations else "inconclusive")
        if i == 0:
            curves[mult] = ratio
    holding = [m for m in grid if all(row["status_by_rho"][x] == "holds" for x in grid if x >= m)]
    row["smallest_rho_over_Lmax_from_which_bound_holds"] = min(holding) if holding else f"none up to {grid[-1]}"
    return row, curves


def _paper_like_sweep(ctx: CheckContext):
    """Max_n D_n / B_n over rho for random instances (small at ci, the paper's size at thorough). The horizon of
    each rho is :func:`sweep_horizon` (the ratio peaks at n of the order of rho / mu_min); at the paper's size rho
    goes up to 25 L_max (:data:`verify.pgfl._noise_sweep.RHO_GRID_PAPER_SIZE`)."""
    if ctx.thorough:
        sizes = dict(servers=10, clients_per_server=15, d=60, clusters=3, lam=0.1, noise_variance=0.0)
        instances, base, grid = 6, 1500, RHO_GRID_PAPER_SIZE
    else:
        sizes = dict(servers=4, clients_per_server=5, d=8, clusters=3, lam=0.1, noise_variance=0.0)
        instances, base, grid = 2, 400, RHO_GRID
    seeds = ctx.seed_sequence("pgfl.theorem2.sweep").generate_state(instances)
    items = [(i, int(seed), sizes, base, grid) for i, seed in enumerate(seeds)]
    parts = ctx.executor.map(_sweep_instance, items) if ctx.executor is not None else map(_sweep_instance, items)
    table, curves = [], {}
    for row, c in parts:
        table.append(row)
        curves.update(c)
    return table, curves, base, grid


def _noisy_comparison(ctx: CheckContext) -> dict:
    """Theorem II with privacy noise (Algorithm 2): mean D_n / B_n with common vs independent noise draws."""
    runs, iterations = (30, 200) if ctx.profile == "ci" else (100, 400)
    seed = int(ctx.seed_sequence("pgfl.theorem2.noisy").generate_state(1)[0])
    problem = synthetic_regression(np.random.default_rng(seed), servers=4, clients_per_server=5, d=8, clusters=3,
                                   lam=0.1, noise_variance=0.0)
    eta = eta_cluster_distance(cluster_optima(problem))
    bound = intercluster_bound(np.full(iterations, 0.4), eta)
    out = {"runs": runs, "iterations": iterations, "seed": seed, "eta": eta, "phi0": 0.01, "zeta": 0.99, "C": 1.0,
           "max_mean_ratio": {}}
    for mult in (1.0, 10.0):
        cfg = PGFLConfig(rho=mult * problem.max_curvature, taus=(0.4,), algorithm="alg2", phi0=0.01, zeta=0.99, C=1.0)
        crn = gap_sequence(problem, cfg, iterations, seed, runs)
        independent = gap_sequence(problem, cfg, iterations, seed, runs, mixed_seed=seed + 1)
        out["max_mean_ratio"][mult] = {"common_random_numbers": float(np.max(crn / bound)),
                                       "independent_noise": float(np.max(independent / bound))}
    return out


def evaluate_noise_decomposition(params: Mapping) -> Evidence:
    r"""With common random numbers, privacy noise adds a data-independent, mean-zero response to the gap.

    For ridge the iteration is affine in (state, noise), so run by run
    :math:`g_r = g^{\xi=0} + e_r`, where :math:`g = \bar w - w`, :math:`g^{\xi=0}` is the noise-free gap and
    :math:`e_r` is the gap of the same runs (same seed) on the instance with :math:`y \equiv 0`; :math:`E e_r = 0`.
    Hence :math:`E\lVert g\rVert^2 = \lVert g^{\xi=0}\rVert^2 + E\lVert e\rVert^2 \ge \lVert g^{\xi=0}\rVert^2`: the
    noise never rescues Theorem II, and :func:`sweep_penalty`'s estimator and lower limit rest on this identity.

    ``params``: the keys of :func:`verify.pgfl._instances.build_instance` plus ``rho_factor`` (rho / L_max),
    ``taus`` (the tau schedule), ``phi0``, ``zeta``, ``C``, ``iterations``, ``runs`` and ``run_seed``.
    ``measured`` is :math:`\max|g_r - g^{\xi=0} - e_r|` over the largest model coordinate seen, in units of
    :math:`\gamma_{m}` with :math:`m = 8(d + K + S)\,n` (every rounded operation of :math:`n` iterations,
    without amplification); ``bound`` is 1. ``parameters["max_excess_over_eta"]`` is
    :math:`\max_n (D_n^{\xi=0} - B_n)/\eta`, what the property test pushes up with ``target()``.
    """
    p = dict(params)
    problem = build_instance(p)
    silent = dataclasses.replace(problem, y=tuple(np.zeros_like(v) for v in problem.y))
    iterations, runs, seed = int(p["iterations"]), int(p["runs"]), int(p["run_seed"])
    quiet = PGFLConfig(rho=float(p["rho_factor"]) * problem.max_curvature, taus=tuple(p["taus"]), algorithm="alg2")
    noisy = dataclasses.replace(quiet, phi0=float(p["phi0"]), zeta=float(p["zeta"]), C=float(p["C"]))

    def gap(instance, config, count):
        kw = dict(runs=count, observe=server_models_observer)
        bar = run_pgfl(instance, dataclasses.replace(config, taus=(0.0,)), iterations, np.random.default_rng(seed),
                       **kw).observations
        mixed = run_pgfl(instance, config, iterations, np.random.default_rng(seed), **kw).observations
        return bar - mixed, max(float(np.max(np.abs(bar))), float(np.max(np.abs(mixed))))

    exact, s0 = gap(problem, quiet, 1)
    total, s1 = gap(problem, noisy, runs)
    response, s2 = gap(silent, noisy, runs)
    error = float(np.max(np.abs(total - exact - response)))
    unit = gamma(8 * (problem.d + problem.K + problem.S) * iterations) * max(s0, s1, s2, 1e-300)
    eta = eta_cluster_distance(cluster_optima(problem))
    bound_n = np.asarray(intercluster_bound([quiet.tau(n) for n in range(1, iterations + 1)], eta))
    d_exact = np.sum(exact[:, 0] ** 2, axis=-1).max(axis=(1, 2))
    d_noisy = np.mean(np.sum(total**2, axis=-1), axis=1).max(axis=(1, 2))
    return Evidence(measured=error / unit, bound=1.0, holds=error <= unit,
                    parameters={**{k: p[k] for k in ("seed", "servers", "clients_per_server", "clusters", "d", "lam",
                                                     "rho_factor", "phi0", "zeta", "C", "iterations", "runs",
                                                     "run_seed")},
                                "tau_1": quiet.tau(1), "eta": eta, "decomposition_error": error,
                                "max_excess_over_eta": float(np.max(d_exact - bound_n)) / max(eta, 1e-300),
                                "noise_free_violated": bool(np.any(d_exact > bound_n)),
                                "noisy_mean_violated": bool(np.any(d_noisy > bound_n))})


def check_theorem2(ctx: CheckContext) -> CheckResult:
    """Exact counterexample over a grid of rho and tau, plus the paper-like sweep of rho (tau = 0.4)."""
    evidence = [evaluate_equal_optima(1.0, 3.0, 1.0, rho, tau)
                for rho in (1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3) for tau in (0.1, 0.4, 0.9)]
    table, curves, base, grid = _paper_like_sweep(ctx)
    worst = max(evidence, key=lambda e: e.measured - e.bound)
    longest = max(c.size for c in curves.values())
    figure_ratio = FigureSpec(
        name="ratio_vs_iteration", title="Theorem II: D_n / B_n (tau = 0.4, noise-free), instance 0",
        xlabel="iteration n", ylabel="D_n / B_n", xscale="log", yscale="log",
        series=tuple(Series(label=f"rho = {m:g} L_max", x=np.arange(1, curves[m].size + 1),
                            y=np.maximum(curves[m], 1e-300)) for m in grid)
        + (Series(label="bound (ratio 1)", x=(1, longest), y=(1.0, 1.0), style="dashed"),))
    figure_rho = FigureSpec(
        name="max_ratio_vs_rho", title="Theorem II: max_n D_n / B_n against rho (tau = 0.4)",
        xlabel="rho / L_max", ylabel="max_n D_n / B_n", xscale="log", yscale="log",
        series=tuple(Series(label=f"instance {row['instance']}", x=grid,
                            y=[row["ratio_by_rho"][m] for m in grid], style="points") for row in table)
        + (Series(label="bound (ratio 1)", x=(grid[0], grid[-1]), y=(1.0, 1.0), style="dashed"),))
    violated = sum(not e.holds for e in evidence)
    if violated == 0:
        raise AssertionError("the equal-optima instance no longer violates Theorem II: check the implementation")
    _require_agreement(evidence)
    scale = SWEEP_SCALES[ctx.profile]
    sweep_seeds = ctx.seed_sequence("pgfl.theorem2.noise_sweep").generate_state(2)
    sweep = noise_sweep(scale, int(sweep_seeds[0]), int(sweep_seeds[1]), executor=ctx.executor)
    sweep_summary = "; ".join(f"tau = {r['tau']:g}: {r['noiseless']} / {r['privacy_noise']}"
                              for r in sweep["smallest_rho"])
    sweep_points = [Evidence(measured=float(row["ratio_by_rho"][m]), bound=1.0,
                             holds=row["status_by_rho"][m] != "violated",
                             parameters={"instance": row["instance"], "rho_over_Lmax": m, "tau": 0.4,
                                         "status": row["status_by_rho"][m],
                                         **({HARD_POINT: "largest rho tried (the theorem's 'sufficiently large rho')"}
                                            if m == grid[-1] else {})})
                    for row in table for m in grid]
    result = CheckResult(
        claim_id="pgfl.theorem2", verdict=Verdict.REFUTED,
        summary=(f"eta = 0 instance violates B_n at every rho in 1e-2..1e3 and tau in {{0.1, 0.4, 0.9}} "
                 f"({violated}/{len(evidence)}); paper-like sweep: "
                 + "; ".join(f"instance {r['instance']}: bound holds from rho/L_max = "
                             f"{r['smallest_rho_over_Lmax_from_which_bound_holds']}" for r in table)
                 + f"; tau x rho sweep (Algorithm 2), bound holds in expectation from rho/L_max = noise-free / with "
                   f"privacy noise: {sweep_summary}"),
        quantity="D_1 = max_{s,q} ||w_bar - w||^2 against B_1 = tau eta (eta = 0)",
        measured=worst.measured, bound=worst.bound, margin=worst.bound - worst.measured,
        counterexample=dict(worst.parameters), corrected_claim=None, seed=ctx.seed,
        monte_carlo=MonteCarlo(n=min(r["runs"] for r in sweep["table"]), alpha=RECORDED_ALPHA, seed=ctx.seed),
        figures=(figure_ratio, figure_rho) + noise_sweep_figures(sweep, scale),
        details={"smallest_rho_table": table, "base_iterations": base, "rho_grid_over_Lmax": list(grid),
                 "horizon_rule": "max(base, rho / mu_min) iterations per rho (sweep_horizon); a cell with ratio <= 1 "
                                 "holds only if the ratio peaked within 90 % of the horizon, else inconclusive",
                 "with_privacy_noise (Algorithm 2, tau = 0.4; mean over runs; rho as multiple of L_max)":
                     _noisy_comparison(ctx),
                 "noise_sweep": {
                     "table": sweep["table"], "columns": list(SWEEP_COLUMNS),
                     "smallest_rho_over_Lmax_from_which_bound_holds_in_expectation": sweep["smallest_rho"],
                     "instance": sweep["instance"], "privacy": sweep["privacy"], "taus": list(scale.taus),
                     "rho_grid_over_Lmax": list(scale.rho_grid), "alpha": sweep["alpha"],
                     "alpha_per_cell": sweep["alpha_per_cell"],
                     "algorithm": "Algorithm 2 (dual_ref = local_aggregate), full participation; noise-free column "
                                  "= the same algorithm with xi = 0",
                     "coupling": "common random numbers: the tau = 0 run and each tau-run share data, "
                                 "initialisation, scheduling and noise draws, run by run",
                     "estimator": "E||g||^2 = ||g(xi=0)||^2 + E||g - g(xi=0)||^2 (affine iteration, mean-zero noise); "
                                  "Student-t limits, Bonferroni over cells, recorded n, (s, q) and sides; lower limit "
                                  ">= ||g(xi=0)||^2 (Jensen, exact)",
                     "status": "violated: lower limit of max_{s,q} E / B_n > 1 at some n; holds: upper limit <= 1 at "
                               "every recorded n and the ratio peaked inside the horizon; else inconclusive",
                     "horizon_rule": f"max({scale.base_iterations}, ceil({scale.horizon_factor:g} rho / mu_min)) "
                                     f"iterations; every n <= {scale.dense_iterations} recorded, then about "
                                     f"{scale.dense_iterations} more evenly spaced",
                 }})
    # slack ratios: the eta = 0 points have B_n = 0 (no ratio, violated at every rho); the paper-like sweep's
    # max_n D_n / B_n per instance and rho (tau = 0.4) rates the bound where eta > 0
    return declare_form(result, "bound", tightness=bound_tightness(evidence + sweep_points))


def _require_agreement(evidence) -> None:
    """The exact gap must match the simulated one wherever it is resolvable (else the harness, not the paper, is
    wrong)."""
    bad = [e.parameters for e in evidence if not e.parameters["closed_form_agrees"]]
    if bad:
        raise AssertionError(f"simulated D_n disagrees with the closed form on the equal-optima instance: {bad[:3]}")


def evaluate_corollary_identity(seed: int, n: int, tau: float, rho_mult: float, *, noise: bool = False) -> Evidence:
    r"""With tau^(i) = 0 for i < n: w_bar - w = tau (w_hat_q - mean_{r != q} w_hat_r) at iteration n, exactly."""
    problem = synthetic_regression(np.random.default_rng(seed), servers=3, clients_per_server=4, d=3, clusters=3,
                                   lam=0.1)
    taus = tuple([0.0] * (n - 1) + [tau])
    extra = dict(algorithm="alg2", phi0=0.5, zeta=0.99, C=0.1) if noise else {}
    cfg = PGFLConfig(rho=rho_mult * problem.max_curvature, taus=taus, **extra)
    ref = PGFLConfig(**{**cfg.__dict__, "taus": (0.0,)})
    bar = run_pgfl(problem, ref, n, np.random.default_rng(seed)).state
    mixed = run_pgfl(problem, cfg, n, np.random.default_rng(seed)).state
    hat = mixed.w_hat[0]
    Q = problem.n_clusters
    predicted = tau * (hat - (hat.sum(axis=1, keepdims=True) - hat) / (Q - 1))
    gap = bar.w_servers[0] - mixed.w_servers[0]
    scale = max(float(np.max(np.abs(hat))), 1e-300)
    err = float(np.max(np.abs(gap - predicted))) / (gamma(16) * scale)
    d_n = float(np.max(np.sum(gap**2, axis=-1)))
    spread = float(np.max(np.sum((hat[:, :, None, :] - hat[:, None, :, :]) ** 2, axis=-1)))
    within = d_n <= tau**2 * spread * (1 + gamma(16))
    return Evidence(measured=err, bound=1.0, holds=err <= 1.0 and within,
                    parameters={"seed": seed, "n": n, "tau": tau, "rho_mult": rho_mult, "noise": noise, "D_n": d_n,
                                "tau2_spread": tau**2 * spread})


#: The Corollary's points on the equal-optima instance: iterations n (n >= 2: the hypothesis is not vacuous), rho, tau.
COROLLARY_GRID = {"n": (1, 2, 5, 20), "rho": (1e-1, 1.0, 1e2), "tau": (0.1, 0.9)}


def evaluate_corollary_paper_like(seed: int, tau: float, rho_mult: float, n: int) -> Evidence:
    """The Corollary on a paper-like regression instance (S = 4, 5 clients per server, d = 8, Q = 3, lambda = 0.1,
    gamma_q ~ U(-0.15, 0.15), noise-free): tau^(i) = 0 for i < n, tau^(n) = tau; D_n against tau eta."""
    problem = synthetic_regression(np.random.default_rng(seed), servers=4, clients_per_server=5, d=8, clusters=3,
                                   lam=0.1, noise_variance=0.0)
    eta = eta_cluster_distance(cluster_optima(problem))
    taus = (0.0,) * (n - 1) + (tau,)
    dn = float(gap_sequence(problem, PGFLConfig(rho=rho_mult * problem.max_curvature, taus=taus), n, seed=seed)[-1])
    bound = float(corollary_single_step_bound(tau, eta))
    return Evidence(measured=dn, bound=bound, holds=dn <= bound,
                    parameters={"instance_seed": seed, "tau": tau, "rho_over_Lmax": rho_mult, "n": n, "eta": eta,
                                "D_n": dn, "ratio": dn / bound if bound > 0 else None,
                                **({HARD_POINT: "n = 1 (no tau = 0 steps before the mixing step)"} if n == 1 else {})})


def check_corollary(ctx: CheckContext) -> CheckResult:
    """The Corollary on the equal-optima instance at n = 1 and at n = 2, 5, 20 (the hypothesis tau^(i) = 0 for i < n
    then holds non-vacuously), exact gaps; and on paper-like instances (rated, where eta > 0)."""
    evidence = [evaluate_equal_optima(1.0, 3.0, 1.0, rho, tau, n)
                for n in COROLLARY_GRID["n"] for rho in COROLLARY_GRID["rho"] for tau in COROLLARY_GRID["tau"]]
    _require_agreement(evidence)
    seeds = ctx.seed_sequence("pgfl.corollary.paper_like").generate_state(2 if ctx.thorough else 1)
    evidence += [evaluate_corollary_paper_like(int(seed), tau, rho_mult, n) for seed in seeds
                 for tau in (0.4, 0.9) for rho_mult in (0.25, 1.0) for n in (1, 400)]
    taus = np.linspace(0.05, 0.95, 10)
    figure = FigureSpec(
        name="single_step_gap", title="Corollary on the eta = 0 instance (bound tau eta = 0): D_n after n - 1 steps "
                                      "of tau = 0, rho = 1", xlabel="tau", ylabel="D_n", yscale="log",
        series=tuple(Series(label=f"n = {n}", x=taus, style="points",
                            y=[float(exact_single_step_gap(1.0, 3.0, 1.0, 1.0, float(t), n)) for t in taus])
                     for n in (1, 2, 5)))
    result = result_from_evidence(
        "pgfl.corollary", evidence, ctx=ctx, quantity="D_n = max_{s,q} ||w_bar - w||^2 against tau^(n) eta",
        what="D_n <= tau^(n) eta when tau^(i) = 0 for i < n", figures=[figure],
        corrected_claim="pgfl.corollary_identity",
        details={"equal_optima_grid": COROLLARY_GRID,
                 "equal_optima_violations_by_n": {n: sum(not e.holds for e in evidence if e.parameters.get("a1")
                                                         is not None and e.parameters["n"] == n)
                                                  for n in COROLLARY_GRID["n"]},
                 "paper_like_max_ratio": max(e.parameters["ratio"] for e in evidence
                                             if e.parameters.get("ratio") is not None)})
    failing = [e for e in evidence if not e.holds and e.parameters.get("a1") is not None and e.parameters["resolvable"]]
    if not failing:
        return result
    chosen = max(failing, key=lambda e: (e.parameters["n"], e.measured))
    return report_counterexample(result, chosen, f"the equal-optima instance at n = {chosen.parameters['n']}, where "
                                                 "tau^(i) = 0 for i < n holds non-vacuously")


def check_corollary_identity(ctx: CheckContext) -> CheckResult:
    rng = np.random.default_rng(ctx.seed_sequence("pgfl.corollary_identity").generate_state(1)[0])
    count = 6 if ctx.profile == "ci" else 40
    evidence = [evaluate_corollary_identity(int(rng.integers(1 << 30)), int(rng.integers(1, 60)),
                                            float(rng.uniform(0.01, 1.0)), float(rng.uniform(0.1, 2.0)),
                                            noise=bool(i % 2)) for i in range(count)]
    taus = np.linspace(0.05, 1.0, 12)
    pts = [evaluate_corollary_identity(7, 40, float(t), 0.5) for t in taus]
    figure = FigureSpec(
        name="quadratic_in_tau", title="Single inter-cluster step after 39 steps of tau = 0: D_n vs tau",
        xlabel="tau_n", ylabel="D_n", xscale="log", yscale="log",
        series=(Series(label="D_n (simulation)", x=taus, y=[p.parameters["D_n"] for p in pts], style="points"),
                Series(label="tau^2 max_{q,r} ||w_hat_q - w_hat_r||^2", x=taus,
                       y=[p.parameters["tau2_spread"] for p in pts])))
    return result_from_evidence("pgfl.corollary_identity", evidence, ctx=ctx,
                                quantity="max |gap - tau (w_hat_q - mean_r w_hat_r)| / rounding bound",
                                what="w_bar - w = tau (w_hat_q - mean_{r != q} w_hat_r)", figures=[figure],
                                form="identity",
                                form_reason="an equality on the algorithm's iterates, checked to rounding")


def _reproduce_equal_optima(counterexample) -> Evidence:
    p = counterexample
    return evaluate_equal_optima(p["a1"], p["a2"], p["w0"], p["rho"], p["tau"], int(p.get("n", 1)))


#: Theorem II in seed 000 and the thesis (shared with :mod:`verify.pgfl.theorem2_limit`).
THEOREM2_CITATIONS = (cite(label="Theorem II", equation="(27)-(28)", lines="258-324"),
            cite(label="Theorem 5.2", equation="(5.27)-(5.28)", seed=SEED_THESIS))

CLAIMS = (
    Claim(
        id="pgfl.theorem2",
        title="Theorem II: inter-cluster learning moves the models by at most B_n, for sufficiently large rho",
        citations=THEOREM2_CITATIONS,
        statement=("Given a sufficiently large penalty rho, for all iterations n, servers s and clusters q: "
                   "E||w_bar_{s,(q)}^(n) - w_{s,(q)}^(n)||^2 <= sum_{i=1}^n (prod_{j=i+1}^n (1 - tau_j)) tau_i eta, "
                   "with w_bar the tau = 0 run and eta = max_{q,r} ||w*_q - w*_r||^2."),
        hypotheses=("Assumption 1 (convex, smooth f_k)", "rho sufficiently large", "common initialisation w = 0",
                    "expectation over privacy and observation noise"),
        check=check_theorem2, expected=Verdict.REFUTED,
        reason=("Two clusters with equal optima (eta = 0) but different curvatures: D_1 = tau^2 w0^2 "
                "(2a1/(2a1+rho) - 2a2/(2a2+rho))^2 > 0 for every rho > 0 and tau in (0, 1). Proof step (iii) "
                "(seed 000 eqs. (31), (38)) compares transient iterates with a constant built from optima. At the "
                "paper's size the bound fails up to 25 L_max, the largest penalty tried there "
                "(docs/papers/pgfl.md#erratum-r-a; max_n D_n / B_n tends to a rho-independent limit, which runs up "
                "to 100 L_max showed reached "
                "within 1 % at 25 L_max on every instance and tau), on most instances (details: smallest-rho table). "
                "Privacy noise cannot rescue it: with common random numbers the ridge iteration gives "
                "E D_n >= D_n(xi = 0), and the tau x rho sweep with the paper's phi0 = 0.001, zeta = 0.99 finds "
                "violations in expectation up to the largest rho tried (details: noise_sweep). The eta = 0 instance "
                "meets the theorem's hypotheses as printed (Assumption 1, any rho); D_1 is computed in exact rational "
                "arithmetic and agrees with the simulation. Slack ratios where eta > 0 (tightness): the paper-like "
                "sweep's max_n D_n / B_n per instance and rho."),
        severity="false",
        uncorrected_because=("no finite-n bound in terms of eta can hold (eta = 0 with D_1 > 0) and no bound with the "
                             "cluster Hessians has been derived (for large rho the gap follows a rho-independent "
                             "transient limit); what fedcheck checks instead is the first-step identity "
                             "pgfl.corollary_identity and the limit identity pgfl.theorem2_limit_identity"),
        reproduce=_reproduce_equal_optima,
    ),
    Claim(
        id="pgfl.corollary",
        title="Corollary: a single step of inter-cluster learning moves the models by at most tau_n eta",
        citations=(cite(label="Corollary", equation="(40)", lines="326-330"),
                   cite(label="Corollary to Theorem 5.2", equation="(5.29)", seed=SEED_THESIS)),
        statement=("If tau^(i) = 0 for all i < n and tau^(n) != 0, then "
                   "E||w_bar_{s,(q)}^(n) - w_{s,(q)}^(n)||^2 <= tau^(n) eta."),
        hypotheses=("tau^(i) = 0 for i < n", "tau^(n) in (0, 1)"),
        check=check_corollary, expected=Verdict.REFUTED,
        reason=("On the equal-optima instance (eta = 0, a1 = 1, a2 = 3, w0 = 1; Assumption 1 holds) the tau = 0 run is "
                "w_hat_q^(n) = w0 (1 - r_q^n), r_q = rho/(2 a_q + rho), so one step of tau at iteration n gives "
                "D_n = tau^2 w0^2 (r_2^n - r_1^n)^2 > 0 = tau eta at every n, not only at n = 1 where the hypothesis "
                "'tau^(i) = 0 for i < n' is vacuous: violated at n = 1, 2, 5 and 20 for rho in {0.1, 1, 100} and "
                "tau in {0.1, 0.9} (exact rational arithmetic; the simulation agrees wherever the gap is above its "
                "rounding). The reported counterexample is at n = 20. On paper-like instances after 399 steps of "
                "tau = 0 it holds (details: paper_like_max_ratio); the bound fails in the transient, where the "
                "clusters' different curvatures separate the tau = 0 iterates although their optima coincide."),
        severity="false",
        reproduce=_reproduce_equal_optima, corrected_by="pgfl.corollary_identity",
    ),
    Claim(
        id="pgfl.corollary_identity",
        title="Corrected Corollary: a single step moves the models by exactly tau_n times the cluster spread of w_hat",
        citations=(cite(label="Corollary", equation="(40)"),
                   cite(label="inter-cluster step", equation="(10)")),
        statement=("If tau^(i) = 0 for i < n, then w_bar^(n) - w^(n) = tau^(n) (w_hat_q^(n) - (1/(Q-1)) sum_{r != q} "
                   "w_hat_r^(n)) at every server (with or without privacy noise, common random numbers), hence "
                   "D_n <= (tau^(n))^2 max_{q,r} ||w_hat_q^(n) - w_hat_r^(n)||^2."),
        hypotheses=("tau^(i) = 0 for i < n", "both runs share data, initialisation and noise draws"),
        check=check_corollary_identity, expected=Verdict.CONFIRMED,
        reason="Both runs coincide up to step n - 1; step (10) then mixes the common w_hat. Checked to rounding.",
        corrects="pgfl.corollary",
    ),
)
