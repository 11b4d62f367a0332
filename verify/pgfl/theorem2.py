r"""PGFL Theorem II and its Corollary on the running algorithm (common random numbers).

:math:`D_n = \max_{s,q}\lVert\bar w_{s,(q)}^{(n)} - w_{s,(q)}^{(n)}\rVert^2`, where :math:`\bar w` is the
:math:`\tau \equiv 0` run and both runs share data, initialisation, scheduling and noise draws.
Theorem II claims :math:`D_n \le B_n = \eta(1 - \prod_{j\le n}(1-\tau^{(j)}))` for all :math:`n` once
:math:`\rho` is large enough.

Findings:

* **Exact counterexample for every** :math:`\rho > 0` (spec pgfl.md, Review note R-a): one server, two
  clusters with one client each, :math:`f_q(w) = a_q(w - w_0)^2`, :math:`a_1 \ne a_2`. Both optima are
  :math:`w_0`, so :math:`\eta = 0` and :math:`B_n \equiv 0`, but
  :math:`D_1 = \tau^2 w_0^2 (2a_1/(2a_1+\rho) - 2a_2/(2a_2+\rho))^2 > 0`. The same instance refutes the
  Corollary (its hypothesis is vacuous at :math:`n = 1`).
* **The limit fails too** (found by fedcheck, not in the spec): with anisotropic cluster Hessians the
  :math:`\tau`-run's fixed point is pulled toward the Hessian-weighted pooled optimum, and
  :math:`\lim_n D_n` exceeds :math:`\eta` by two orders of magnitude (one server, two clusters, d = 2).
* **Corrected Corollary** (an identity, checked on the algorithm): if :math:`\tau^{(i)} = 0` for
  :math:`i < n`, then :math:`\bar w^{(n)}_{s,(q)} - w^{(n)}_{s,(q)} = \tau^{(n)}\bigl(\hat w_{s,(q)}^{(n)} -
  \tfrac{1}{Q-1}\sum_{r\ne q}\hat w_{s,(r)}^{(n)}\bigr)`, so :math:`D_n \le (\tau^{(n)})^2 \max_{s,q,r}
  \lVert\hat w_{s,(q)}^{(n)} - \hat w_{s,(r)}^{(n)}\rVert^2`: quadratic in :math:`\tau^{(n)}` and measured
  on the iterates :math:`\hat w`, not on the optima.
"""

from __future__ import annotations

import math

import numpy as np

from reference_impl.pgfl import (
    PGFLConfig,
    PGFLProblem,
    cluster_optima,
    eta_cluster_distance,
    fixed_point,
    run_pgfl,
    server_models_observer,
    synthetic_regression,
)
from theory.bounds import intercluster_bound
from verify.evidence import result_from_evidence
from verify.records import CheckContext, CheckResult, Citation, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import gamma

__all__ = [
    "CLAIMS",
    "anisotropic_instance",
    "check_corollary",
    "check_corollary_identity",
    "check_steady_state",
    "check_theorem2",
    "equal_optima_instance",
    "evaluate_corollary_identity",
    "evaluate_equal_optima",
    "evaluate_steady_state",
    "gap_sequence",
]

SEED_A = "000_133b71fd0aa99eb4.txt"
SEED_THESIS = "004_180cd372987d137b.txt"
#: Penalties swept, as multiples of L_max (spec R2.3 and Review note R-a go up to 25 L_max; we go further).
RHO_GRID = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 100.0)


def _sqrtm_psd(H: np.ndarray) -> np.ndarray:
    vals, vecs = np.linalg.eigh(H)
    return (vecs * np.sqrt(np.clip(vals, 0.0, None))) @ vecs.T


def _single_server(hessians, optima) -> PGFLProblem:
    """One server, one client per cluster, lambda = 0, f_q(w) = (w - w_q)^T H_q (w - w_q) / 2 (Hessian H_q)."""
    hessians = [np.atleast_2d(np.asarray(h, dtype=np.float64)) for h in hessians]
    optima = [np.atleast_1d(np.asarray(w, dtype=np.float64)) for w in optima]
    d = hessians[0].shape[0]
    # ridge client loss (1/D)||y - X w||^2 has data Hessian (2/D) X^T X = H when X = sqrt(D/2) H^(1/2)
    X = tuple(math.sqrt(d / 2.0) * _sqrtm_psd(h) for h in hessians)
    y = tuple(x @ w for x, w in zip(X, optima))
    Q = len(hessians)
    return PGFLProblem(adjacency=np.zeros((1, 1), dtype=bool), client_server=np.zeros(Q, dtype=np.int64),
                       client_cluster=np.arange(Q), n_clusters=Q, X=X, y=y, lam=0.0)


def equal_optima_instance(a1: float, a2: float, w0: float) -> PGFLProblem:
    """Review note R-a: S = 1, Q = 2, d = 1, f_q(w) = a_q (w - w0)^2 (Hessian 2 a_q; both optima w0, eta = 0)."""
    return _single_server([[[2.0 * a1]], [[2.0 * a2]]], [[w0], [w0]])


def anisotropic_instance() -> PGFLProblem:
    """S = 1, Q = 2, d = 2: cluster Hessians for which ||(H_1+H_2)^{-1} H_2|| = 12.4 (found by random search)."""
    H1 = np.array([[8.84737261, -0.0476630268], [-0.0476630268, 0.00276185202]])
    H2 = np.array([[3.50001744, -0.20463609], [-0.20463609, 0.01312955]])
    _, _, vt = np.linalg.svd(np.linalg.solve(H1 + H2, H2))
    return _single_server([H1, H2], [vt[0], np.zeros(2)])


def gap_sequence(problem: PGFLProblem, config: PGFLConfig, iterations: int, seed: int, runs: int = 1, *,
                 mixed_seed: int | None = None):
    """D_n (mean over runs of max_{s,q} squared gap) for n = 1..iterations.

    Common random numbers by default; ``mixed_seed`` gives the tau-run its own draws (independent noise).
    """
    reference = PGFLConfig(**{**config.__dict__, "taus": (0.0,)})
    kw = dict(runs=runs, observe=server_models_observer)
    bar = run_pgfl(problem, reference, iterations, np.random.default_rng(seed), **kw).observations
    other = seed if mixed_seed is None else mixed_seed
    mixed = run_pgfl(problem, config, iterations, np.random.default_rng(other), **kw).observations
    gaps = np.sum((bar - mixed) ** 2, axis=-1)                                # (N, R, S, Q)
    return gaps.mean(axis=1).max(axis=(1, 2))


def evaluate_equal_optima(a1: float, a2: float, w0: float, rho: float, tau: float) -> Evidence:
    """One iteration of the equal-optima instance: D_1 > B_1 = 0 is a violation (cross-checked in closed form)."""
    problem = equal_optima_instance(a1, a2, w0)
    eta = eta_cluster_distance(cluster_optima(problem))
    d1 = float(gap_sequence(problem, PGFLConfig(rho=rho, taus=(tau,)), 1, seed=0)[0])
    bound = float(intercluster_bound([tau], eta)[0])
    hat1, hat2 = 2 * a1 * w0 / (2 * a1 + rho), 2 * a2 * w0 / (2 * a2 + rho)
    predicted = tau**2 * (hat1 - hat2) ** 2
    # D_1 squares w_bar - w = hat_q - ((1 - tau) hat_q + tau hat_r), a difference of O(|hat|) numbers equal
    # to tau (hat_q - hat_r): relative error 2 (|hat1| + |hat2|) / (tau |hat1 - hat2|) times the ~32 rounded
    # operations behind each hat (client solve, aggregation, mixing).
    condition = 2.0 * (abs(hat1) + abs(hat2)) / max(tau * abs(hat1 - hat2), 1e-300)
    agrees = abs(d1 - predicted) <= gamma(32) * condition * max(predicted, abs(d1)) + 1e-300
    return Evidence(measured=d1, bound=bound, holds=d1 <= bound,
                    parameters={"a1": a1, "a2": a2, "w0": w0, "rho": rho, "tau": tau, "eta": eta,
                                "D_1": d1, "D_1_closed_form": predicted, "closed_form_agrees": bool(agrees)})


def _horizon(base: int, rho_mult: float) -> int:
    """Iterations for a penalty rho = rho_mult L_max: the peak of D_n / B_n moves to n proportional to rho
    (spec pgfl.md, Review note R-a), so the horizon grows with rho (60 iterations per unit of rho / L_max)."""
    return max(base, int(math.ceil(60.0 * rho_mult)))


def _paper_like_sweep(ctx: CheckContext):
    """Max_n D_n / B_n over rho for random instances (small at ci, the paper's size at thorough)."""
    if ctx.thorough:
        sizes = dict(servers=10, clients_per_server=15, d=60, clusters=3, lam=0.1, noise_variance=0.0)
        instances, base = 6, 1500
    else:
        sizes = dict(servers=4, clients_per_server=5, d=8, clusters=3, lam=0.1, noise_variance=0.0)
        instances, base = 2, 400
    seeds = ctx.seed_sequence("pgfl.theorem2.sweep").generate_state(instances)
    table, curves = [], {}
    for i, seed in enumerate(seeds):
        problem = synthetic_regression(np.random.default_rng(int(seed)), **sizes)
        eta = eta_cluster_distance(cluster_optima(problem))
        row = {"instance": i, "seed": int(seed), "eta": eta, "ratio_by_rho": {}, "iterations_by_rho": {}}
        for mult in RHO_GRID:
            iterations = _horizon(base, mult)
            bound = intercluster_bound(np.full(iterations, 0.4), eta)
            gaps = gap_sequence(problem, PGFLConfig(rho=mult * problem.max_curvature, taus=(0.4,)), iterations,
                                seed=int(seed))
            ratio = gaps / bound
            row["ratio_by_rho"][mult] = float(ratio.max())
            row["iterations_by_rho"][mult] = iterations
            if i == 0:
                curves[mult] = ratio
        holding = [m for m in RHO_GRID if all(row["ratio_by_rho"][x] <= 1.0 for x in RHO_GRID if x >= m)]
        row["smallest_rho_over_Lmax_from_which_bound_holds"] = min(holding) if holding else f"none up to {RHO_GRID[-1]}"
        table.append(row)
    return table, curves, base


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


def check_theorem2(ctx: CheckContext) -> CheckResult:
    """Exact counterexample over a grid of rho and tau, plus the paper-like sweep of rho (tau = 0.4)."""
    evidence = [evaluate_equal_optima(1.0, 3.0, 1.0, rho, tau)
                for rho in (1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3) for tau in (0.1, 0.4, 0.9)]
    table, curves, base = _paper_like_sweep(ctx)
    worst = max(evidence, key=lambda e: e.measured - e.bound)
    longest = max(c.size for c in curves.values())
    figure_ratio = FigureSpec(
        name="ratio_vs_iteration", title="Theorem II: D_n / B_n (tau = 0.4, noise-free), instance 0",
        xlabel="iteration n", ylabel="D_n / B_n", xscale="log", yscale="log",
        series=tuple(Series(label=f"rho = {m:g} L_max", x=np.arange(1, curves[m].size + 1),
                            y=np.maximum(curves[m], 1e-300)) for m in RHO_GRID)
        + (Series(label="bound (ratio 1)", x=(1, longest), y=(1.0, 1.0), style="dashed"),))
    figure_rho = FigureSpec(
        name="max_ratio_vs_rho", title="Theorem II: max_n D_n / B_n against rho (tau = 0.4)",
        xlabel="rho / L_max", ylabel="max_n D_n / B_n", xscale="log", yscale="log",
        series=tuple(Series(label=f"instance {row['instance']}", x=RHO_GRID,
                            y=[row["ratio_by_rho"][m] for m in RHO_GRID], style="points") for row in table)
        + (Series(label="bound (ratio 1)", x=(RHO_GRID[0], RHO_GRID[-1]), y=(1.0, 1.0), style="dashed"),))
    violated = sum(not e.holds for e in evidence)
    if violated == 0:
        raise AssertionError("the equal-optima instance no longer violates Theorem II: check the implementation")
    return CheckResult(
        claim_id="pgfl.theorem2", verdict=Verdict.REFUTED,
        summary=(f"eta = 0 instance violates B_n at every rho in 1e-2..1e3 and tau in {{0.1, 0.4, 0.9}} "
                 f"({violated}/{len(evidence)}); paper-like sweep: "
                 + "; ".join(f"instance {r['instance']}: bound holds from rho/L_max = "
                             f"{r['smallest_rho_over_Lmax_from_which_bound_holds']}" for r in table)),
        quantity="D_1 = max_{s,q} ||w_bar - w||^2 against B_1 = tau eta (eta = 0)",
        measured=worst.measured, bound=worst.bound, margin=worst.bound - worst.measured,
        counterexample=dict(worst.parameters), corrected_claim=None, seed=ctx.seed,
        figures=(figure_ratio, figure_rho),
        details={"smallest_rho_table": table, "base_iterations": base, "rho_grid_over_Lmax": list(RHO_GRID),
                 "horizon_rule": "max(base, 60 rho/L_max) iterations per rho",
                 "with_privacy_noise (Algorithm 2, tau = 0.4; mean over runs; rho as multiple of L_max)":
                     _noisy_comparison(ctx)})


def evaluate_steady_state(rho: float, tau: float, iterations: int = 3000) -> Evidence:
    """lim_n D_n / eta on the anisotropic instance, from the two runs' exact fixed points.

    Both iterations are affine with spectral radius < 1 (asserted), so the limit of D_n is the squared gap
    of the fixed points; ``iterations`` of simulation must approach that limit (cross-check).
    """
    problem = anisotropic_instance()
    eta = eta_cluster_distance(cluster_optima(problem))
    cfg = PGFLConfig(rho=rho, taus=(tau,))
    mixed, res_mixed, r_mixed = fixed_point(problem, cfg)
    bar, res_bar, r_bar = fixed_point(problem, PGFLConfig(rho=rho))
    if max(r_mixed, r_bar) >= 1.0:
        raise ArithmeticError(f"iteration not contractive (r(T) = {max(r_mixed, r_bar):.4g}): no limit to compare")
    limit = float(np.max(np.sum((bar - mixed) ** 2, axis=-1)))
    simulated = float(gap_sequence(problem, cfg, iterations, seed=0)[-1])
    return Evidence(measured=limit, bound=eta, holds=limit <= eta,
                    parameters={"rho": rho, "tau": tau, "iterations": iterations, "eta": eta, "D_limit": limit,
                                "D_simulated_at_iterations": simulated, "spectral_radius": max(r_mixed, r_bar),
                                "fixed_point_residual": max(res_mixed, res_bar), "instance": "anisotropic_instance()"})


def check_steady_state(ctx: CheckContext) -> CheckResult:
    """The weaker statement lim sup_n D_n <= eta (constant tau, noise-free)."""
    L = anisotropic_instance().max_curvature
    evidence = [evaluate_steady_state(m * L, tau) for m in (0.1, 0.5, 1.0) for tau in (0.1, 0.4)]
    figure = FigureSpec(
        name="limit_over_eta", title="lim D_n / eta on a two-cluster instance with anisotropic Hessians",
        xlabel="rho / L_max", ylabel="lim_n D_n / eta", xscale="log", yscale="log",
        series=tuple(Series(label=f"tau = {tau:g}", x=(0.1, 0.5, 1.0), style="points",
                            y=[e.measured / e.bound for e in evidence if e.parameters["tau"] == tau]) for tau in (0.1, 0.4))
        + (Series(label="Theorem II limit (ratio 1)", x=(0.1, 1.0), y=(1.0, 1.0), style="dashed"),))
    return result_from_evidence("pgfl.theorem2_steady_state", evidence, ctx=ctx,
                                quantity="lim_n D_n against eta", what="lim_n D_n <= eta", figures=[figure])


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


def check_corollary(ctx: CheckContext) -> CheckResult:
    """The Corollary at n = 1 on the equal-optima instance (hypothesis tau^(i) = 0, i < 1, is vacuous)."""
    evidence = [evaluate_equal_optima(1.0, 3.0, 1.0, rho, tau) for rho in (1e-1, 1.0, 1e2) for tau in (0.1, 0.9)]
    worst = max(evidence, key=lambda e: e.measured - e.bound)
    taus = np.linspace(0.05, 0.95, 10)
    figure = FigureSpec(
        name="single_step_gap", title="Corollary at n = 1, eta = 0 (bound tau eta = 0)", xlabel="tau",
        ylabel="D_1", yscale="log",
        series=tuple(Series(label=f"rho = {rho:g}", x=taus, style="points",
                            y=[evaluate_equal_optima(1.0, 3.0, 1.0, rho, float(t)).measured for t in taus])
                     for rho in (0.1, 1.0, 10.0)))
    return CheckResult(
        claim_id="pgfl.corollary", verdict=Verdict.REFUTED if not worst.holds else Verdict.CONFIRMED,
        summary=f"D_1 = {worst.measured:.4g} > tau eta = 0 on the equal-optima instance (every rho, tau tried)",
        quantity="D_1 against tau_1 eta", measured=worst.measured, bound=worst.bound,
        margin=worst.bound - worst.measured, counterexample=None if worst.holds else dict(worst.parameters),
        corrected_claim="pgfl.corollary_identity", seed=ctx.seed, figures=(figure,))


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
                                what="w_bar - w = tau (w_hat_q - mean_{r != q} w_hat_r)", figures=[figure])


def _reproduce_equal_optima(counterexample) -> Evidence:
    p = counterexample
    return evaluate_equal_optima(p["a1"], p["a2"], p["w0"], p["rho"], p["tau"])


def _reproduce_steady_state(counterexample) -> Evidence:
    return evaluate_steady_state(counterexample["rho"], counterexample["tau"], counterexample["iterations"])


_CITE_T2 = (Citation(seed=SEED_A, label="Theorem II", equation="(27)-(28)", lines="258-324"),
            Citation(seed=SEED_THESIS, label="Theorem 5.2", equation="(5.27)-(5.28)"))

CLAIMS = (
    Claim(
        id="pgfl.theorem2", paper="pgfl",
        title="Theorem II: inter-cluster learning moves the models by at most B_n, for sufficiently large rho",
        citations=_CITE_T2,
        statement=("Given a sufficiently large penalty rho, for all iterations n, servers s and clusters q: "
                   "E||w_bar_{s,(q)}^(n) - w_{s,(q)}^(n)||^2 <= sum_{i=1}^n (prod_{j=i+1}^n (1 - tau_j)) tau_i eta, "
                   "with w_bar the tau = 0 run and eta = max_{q,r} ||w*_q - w*_r||^2."),
        hypotheses=("Assumption 1 (convex, smooth f_k)", "rho sufficiently large", "common initialisation w = 0",
                    "expectation over privacy and observation noise"),
        check=check_theorem2, expected=Verdict.REFUTED,
        reason=("Two clusters with equal optima (eta = 0) but different curvatures: D_1 = tau^2 w0^2 "
                "(2a1/(2a1+rho) - 2a2/(2a2+rho))^2 > 0 for every rho > 0 and tau in (0, 1). Proof step (iii) "
                "(seed 000 eqs. (31), (38)) compares transient iterates with a constant built from optima. At the "
                "paper's size the bound fails up to 100 L_max on most instances (details: smallest-rho table)."),
        reproduce=_reproduce_equal_optima,
    ),
    Claim(
        id="pgfl.theorem2_steady_state", paper="pgfl",
        title="Weaker reading of Theorem II: the bound holds in the limit n -> infinity",
        citations=_CITE_T2,
        statement=("For constant tau and no noise, lim_n E||w_bar_{s,(q)}^(n) - w_{s,(q)}^(n)||^2 <= eta "
                   "(the limit of B_n)."),
        hypotheses=("constant tau in (0, 1)", "noise-free", "rho in [0.1, 1] L_max", "S = 1"),
        check=check_steady_state, expected=Verdict.REFUTED,
        reason=("With anisotropic cluster Hessians the tau-run's fixed point is pulled toward the Hessian-weighted "
                "pooled optimum (H_1 + H_2)^{-1}(H_1 w_1 + H_2 w_2), which can lie far outside the segment between "
                "the optima: lim D_n / eta up to ~140 on a 2-D instance. Found by fedcheck; not in the spec."),
        reproduce=_reproduce_steady_state,
    ),
    Claim(
        id="pgfl.corollary", paper="pgfl",
        title="Corollary: a single step of inter-cluster learning moves the models by at most tau_n eta",
        citations=(Citation(seed=SEED_A, label="Corollary", equation="(40)", lines="326-330"),
                   Citation(seed=SEED_THESIS, label="Corollary to Theorem 5.2", equation="(5.29)")),
        statement=("If tau^(i) = 0 for all i < n and tau^(n) != 0, then "
                   "E||w_bar_{s,(q)}^(n) - w_{s,(q)}^(n)||^2 <= tau^(n) eta."),
        hypotheses=("tau^(i) = 0 for i < n", "tau^(n) in (0, 1)"),
        check=check_corollary, expected=Verdict.REFUTED,
        reason="At n = 1 the hypothesis is vacuous and the equal-optima instance (eta = 0) has D_1 > 0.",
        reproduce=_reproduce_equal_optima, corrected_by="pgfl.corollary_identity",
    ),
    Claim(
        id="pgfl.corollary_identity", paper="pgfl",
        title="Corrected Corollary: a single step moves the models by exactly tau_n times the cluster spread of w_hat",
        citations=(Citation(seed=SEED_A, label="Corollary", equation="(40)"),
                   Citation(seed=SEED_A, label="inter-cluster step", equation="(10)")),
        statement=("If tau^(i) = 0 for i < n, then w_bar^(n) - w^(n) = tau^(n) (w_hat_q^(n) - (1/(Q-1)) sum_{r != q} "
                   "w_hat_r^(n)) at every server (with or without privacy noise, common random numbers), hence "
                   "D_n <= (tau^(n))^2 max_{q,r} ||w_hat_q^(n) - w_hat_r^(n)||^2."),
        hypotheses=("tau^(i) = 0 for i < n", "both runs share data, initialisation and noise draws"),
        check=check_corollary_identity, expected=Verdict.CONFIRMED,
        reason="Both runs coincide up to step n - 1; step (10) then mixes the common w_hat. Checked to rounding.",
        corrects="pgfl.corollary",
    ),
)
