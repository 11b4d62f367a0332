r"""Algorithm 1 (as reconstructed) converges to the GTV optimum, and the KKT relation (25) (refuted).

Evidence (docs/papers/gtv.md): random SBM instances 2 x 6 nodes (thorough: 2 x 8), d = 4,
m_i ∈ {2, 6} (below and above d), weights U[0.3, 2], λ log-uniform in [1e-2, 1], for each penalty (nLasso,
ℓ1, MOCHA, ½vᵀQv with a rank-2 Q) with the squared loss, and nLasso with the logistic loss. Algorithm 1
runs from zero with θ = 1 (the seed's steps; θ = 30 for the rank-deficient Q, whose null directions couple
only through the losses) to the relative fixed-point residual ``GTV_ALG1_TOL`` (R4, docs/papers/gtv.md#review-r4). Per
instance:

* objective: :math:`P(\hat w_{\rm Alg1}) - P(w_{\rm CVXPY}) \le \mathrm{tol}\,(1 + |P(w_{\rm CVXPY})|)`, tol the
  Clarabel tolerance at which CVXPY reported 'optimal', both objectives evaluated by
  :func:`theory.gtv.primal_objective` (one-sided: Algorithm 1 may beat the solver; it runs to GTV_ALG1_TOL/100
  so that its own error is negligible);
* KKT: node and edge residuals (:func:`theory.gtv.kkt_residuals`, computed with the *true* operators) below
  :math:`(1 + \lVert D\rVert\max(\tau,\sigma))` times the final fixed-point residual plus rounding -- the bound the
  fixed-point residual implies for an exact implementation (Goldstein et al. 2015 residuals, prox nonexpansive).

``measured`` is the larger of the two ratios, bound 1. CVXPY's own primal and dual (27) must agree (strong
duality (22)) for the instance to count as certified ground truth.
"""

from __future__ import annotations

import math

import numpy as np
from threadpoolctl import threadpool_limits

from reference_impl.gtv import run_algorithm1, solve_gtv_cvxpy, solve_gtv_dual_cvxpy
from theory._rounding import gamma
from theory.gtv import edge_differences, kkt_residuals, loss_gradients, primal_objective
from verify.evidence import result_from_evidence, sample_evidence
from verify.gtv import cite
from verify.gtv._instances import convergence_case
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import CLARABEL_TOL, GTV_ALG1_TOL

__all__ = ["CLAIMS", "PENALTY_CASES", "check_algorithm1", "check_kkt_25", "check_kkt_25_corrected",
           "evaluate_convergence", "evaluate_kkt_25", "sample_case"]

#: (penalty, loss) combinations checked.
PENALTY_CASES = (("l2", "squared"), ("l1", "squared"), ("mocha", "squared"), ("quad", "squared"), ("l2", "logistic"))
_PROFILE = {"ci": {"per_case": 1, "size": 6}, "thorough": {"per_case": 6, "size": 8}}
MAX_ITERATIONS = 60_000
#: Residual tolerance of Algorithm 1 in this check: GTV_ALG1_TOL / 100, so that Algorithm 1's own objective error
#: (of the order of the residual) is negligible against the CVXPY tolerance it is compared with.
ALG1_TOL = GTV_ALG1_TOL / 100


def sample_case(rng: np.random.Generator, penalty: str, loss: str, size: int = 6) -> dict:
    return {"penalty": penalty, "loss": loss, "seed": int(rng.integers(2**31)), "m": int(rng.choice([2, 6])),
            "lam": float(10.0 ** rng.uniform(-2, 0)), "size": size}


def _theta(p: dict) -> float:
    return 30.0 if p["penalty"] == "quad" else 1.0


def _kkt_bound(inst, run) -> float:
    """Node/edge KKT residual implied by the final fixed-point residual, plus the rounding of the residual itself."""
    norm_D = math.sqrt(2.0 * inst.degree.max())          # ||D||^2 = lambda_max(Laplacian) <= 2 max degree
    implied = (1.0 + norm_D * max(run.tau.max(), run.sigma.max())) * run.residuals[-1] + run.meta["pu_residual"]
    size = (np.abs(inst.incidence.T @ run.u).max() + np.abs(loss_gradients(inst, run.w)).max()
            + np.abs(run.u).max() + np.abs(edge_differences(inst, run.w)).max())
    return float(implied + gamma(8 * (int(inst.degree.max()) + inst.d)) * size)


def evaluate_convergence(p: dict, *, dual_update_fn=None, solver_tol: float = CLARABEL_TOL) -> Evidence:
    """Algorithm 1 vs CVXPY on one instance (see the module docstring); bound 1."""
    inst = convergence_case(p)
    with threadpool_limits(limits=1, user_api="blas"):
        run = run_algorithm1(inst, theta=_theta(p), max_iterations=MAX_ITERATIONS, tol=ALG1_TOL,
                             dual_update_fn=dual_update_fn, record_every=0)
        ref = solve_gtv_cvxpy(inst, solver_tol=solver_tol)
        P = primal_objective(inst, run.w)
        P_ref = primal_objective(inst, ref.w)             # the objective at the solver's point: >= the optimum
        excess = (P - P_ref) / (1.0 + abs(P_ref))
        node, edge = kkt_residuals(inst, run.w, run.u)
        kkt_bound = _kkt_bound(inst, run)
        dual_gap = None
        if inst.loss == "squared":
            dual = solve_gtv_dual_cvxpy(inst, solver_tol=solver_tol)
            dual_gap = abs(ref.value - dual.value) / (1.0 + abs(ref.value))
    measured = max(excess / ref.solver_tol, node / kkt_bound, edge / kkt_bound)
    k = np.unique(np.geomspace(1, run.iterations, 40).astype(int))
    holds = bool(run.converged and measured <= 1.0)
    return Evidence(measured=float(measured), bound=1.0, holds=holds,
                    parameters={**p, **inst.summary(), "iterations": run.iterations, "converged": run.converged,
                                "objective_alg1": P, "objective_cvxpy": ref.value, "objective_at_cvxpy_w": P_ref,
                                "relative_excess": float(excess), "solver_tol": ref.solver_tol,
                                "kkt_node": node, "kkt_edge": edge, "kkt_bound": kkt_bound,
                                "cvxpy_primal_dual_gap": dual_gap, "theta": _theta(p),
                                "residual_curve": [k.tolist(), (run.residuals[k - 1] / run.residual_scale).tolist()]})


def _batch(rng, per_case, size, dual_update_fn):
    out = []
    for penalty, loss in PENALTY_CASES:
        for _ in range(per_case):
            out.append(evaluate_convergence(sample_case(rng, penalty, loss, size), dual_update_fn=dual_update_fn))
    return out


def _curves_figure(evidence) -> FigureSpec:
    series, seen = [], set()
    for e in evidence:
        key = (e.parameters["penalty"], e.parameters["loss"])
        if key in seen:
            continue
        seen.add(key)
        k, r = e.parameters["residual_curve"]
        series.append(Series(label=f"{key[0]} / {key[1]}", x=k, y=np.maximum(r, 1e-300)))
    series.append(Series(label="stopping tolerance", x=(1, MAX_ITERATIONS), y=(ALG1_TOL, ALG1_TOL), style="dashed"))
    return FigureSpec(name="alg1_residuals",
                      title="Algorithm 1: relative fixed-point residual (R4, docs/papers/gtv.md#review-r4) per penalty",
                      xlabel="iteration k", ylabel="residual / max(1, ||grad f(0)||)", series=tuple(series),
                      xscale="log", yscale="log")


def check_algorithm1(ctx: CheckContext, *, dual_update_fn=None) -> CheckResult:
    prof = _PROFILE[ctx.profile]
    evidence = sample_evidence(ctx, "gtv.algorithm1_convergence", _batch, 1,
                               (prof["per_case"], prof["size"], dual_update_fn))
    excess = [e.parameters["relative_excess"] for e in evidence]
    gaps = [e.parameters["cvxpy_primal_dual_gap"] for e in evidence
            if e.parameters["cvxpy_primal_dual_gap"] is not None]
    fig = FigureSpec(name="alg1_vs_cvxpy", title="Algorithm 1 objective minus CVXPY optimum (relative)",
                     xlabel="instance", ylabel="(P_alg1 - P_cvxpy) / (1 + |P_cvxpy|)",
                     series=(Series(label="measured", x=range(len(excess)), y=excess, style="points"),
                             Series(label="CVXPY tolerance used", x=range(len(excess)),
                                    y=[e.parameters["solver_tol"] for e in evidence], style="dashed")),
                     yscale="symlog")
    return result_from_evidence(
        "gtv.algorithm1_convergence", evidence, ctx=ctx, form="identity",
        form_reason="convergence to the CVXPY optimum, decided against the solver tolerance and KKT residual bounds",
        quantity="max(objective excess / solver tol, KKT residual / residual-implied bound)",
        what="Algorithm 1 reaches the CVXPY optimum (objective and KKT)",
        figures=[fig, _curves_figure(evidence)],
        details={"max_relative_excess": max(excess), "min_relative_excess": min(excess),
                 "max_cvxpy_strong_duality_gap": max(gaps), "max_iterations_used": max(e.parameters["iterations"]
                                                                                     for e in evidence)})


# --- (25) as printed (factor lam A_e) vs corrected ------------------------------------------------------
def evaluate_kkt_25(p: dict, *, corrected: bool) -> Evidence:
    r"""MOCHA penalty: (25) says :math:`D\hat w \in \lambda A_e\partial\phi^*(\hat u/(\lambda A_e))`, i.e.
    :math:`\hat u = D\hat w` as printed, :math:`\hat u = \lambda A_e D\hat w` corrected.

    ``measured``: :math:`\max_e\lVert\hat u^{(e)} - \text{predicted}\rVert` at Algorithm 1's converged pair; bound:
    its accuracy, :math:`(1 + \max_e\lambda A_e)` times the edge-KKT bound the final residual implies (the MOCHA
    natural residual is :math:`(u - \lambda A D w)/(1 + \lambda A)`). The CVXPY dual optimum is recorded as the
    independent second method (its distance to the prediction, ``err_cvxpy_dual``)."""
    inst = convergence_case({**p, "penalty": "mocha", "loss": "squared"})
    with threadpool_limits(limits=1, user_api="blas"):
        run = run_algorithm1(inst, theta=1.0, max_iterations=MAX_ITERATIONS, tol=ALG1_TOL, record_every=0)
        dual = solve_gtv_dual_cvxpy(inst, solver_tol=CLARABEL_TOL)
        bound = (1.0 + float((inst.lam * inst.A).max())) * _kkt_bound(inst, run)
    cap = (inst.lam * inst.A)[:, None] if corrected else 1.0
    predicted = cap * edge_differences(inst, run.w)
    err_alg = float(np.linalg.norm(run.u - predicted, axis=1).max())
    err_cvx = float(np.linalg.norm(dual.u - predicted, axis=1).max())
    return Evidence(measured=err_alg, bound=bound, holds=bool(run.converged and err_alg <= bound),
                    parameters={**p, "penalty": "mocha", "loss": "squared", "corrected": corrected,
                                "err_alg1_dual": err_alg, "err_cvxpy_dual": err_cvx,
                                "cvxpy_solver_tol": dual.solver_tol,
                                "lam_A_range": [float((inst.lam * inst.A).min()), float((inst.lam * inst.A).max())]})


def _kkt_batch(rng, n, corrected):
    return [evaluate_kkt_25(sample_case(rng, "mocha", "squared"), corrected=corrected) for _ in range(n)]


def _kkt_check(ctx: CheckContext, claim_id: str, corrected: bool) -> CheckResult:
    n = 2 if ctx.profile == "ci" else 8
    evidence = sample_evidence(ctx, claim_id, _kkt_batch, 1, (n, corrected))
    fig = FigureSpec(name="mocha_flow_relation", title="MOCHA optimum: ||u - c D w||_max for c = 1 (printed) and lam A "
                                                       "(corrected)",
                     xlabel="instance", ylabel="max_e ||u_e - prediction||",
                     series=(Series(label="corrected (lam A_e D w)" if corrected else "printed (D w)",
                                    x=range(len(evidence)), y=[max(e.measured, 1e-17) for e in evidence],
                                    style="points"),
                             Series(label="solver accuracy bound", x=range(len(evidence)),
                                    y=[e.bound for e in evidence], style="dashed")), yscale="log")
    return result_from_evidence(claim_id, evidence, ctx=ctx, quantity="max_e ||u_e - predicted u_e||",
                                form="identity", form_reason=("the KKT relation (25) at the solution, checked "
                                                              "against a solver-derived tolerance"),
                                what="(25) " + ("corrected" if corrected else "as printed") + " at the MOCHA optimum",
                                figures=[fig], corrected_claim=None if corrected else "gtv.kkt_25_corrected")


def check_kkt_25(ctx: CheckContext) -> CheckResult:
    return _kkt_check(ctx, "gtv.kkt_25", corrected=False)


def check_kkt_25_corrected(ctx: CheckContext) -> CheckResult:
    return _kkt_check(ctx, "gtv.kkt_25_corrected", corrected=True)


def _reproduce_kkt_25(counterexample) -> Evidence:
    p = {k: counterexample[k] for k in ("seed", "m", "lam", "size")}
    return evaluate_kkt_25(p, corrected=False)


CLAIMS = (
    Claim(
        id="gtv.algorithm1_convergence",
        title="Algorithm 1 (consistent reading) converges to a GTV minimiser for every penalty",
        citations=(cite("Algorithm 1 and Section IV", lines="37-63, 455-475"),
                   cite("primal-dual method, convergence", equation="(32)-(34)", lines="425-475")),
        statement=("Algorithm 1 (Chambolle-Pock with tau_i = 1/|N^(i)|, sigma_e = 1/2, step 7 read as "
                   "u + sigma D(2 w_{k+1} - w_k), step 8 applied to the dual variable) converges to a solution of "
                   "the GTV minimisation (16) for convex L_i and convex phi: nLasso, l1, MOCHA and 1/2 v^T Q v; "
                   "squared and logistic losses."),
        hypotheses=("L_i convex (squared error or logistic with ridge 0.01)", "phi convex", "no isolated nodes",
                    "step sizes with ||Sigma^1/2 D T^1/2||^2 <= 1 (theta = 1; theta = 30 for rank-deficient Q)"),
        check=check_algorithm1,
        expected=Verdict.CONFIRMED,
        reason=("On every sampled instance Algorithm 1 stopped by the R4 (docs/papers/gtv.md#review-r4) residual, its "
                "objective is not above the CVXPY optimum beyond the Clarabel tolerance (it is usually below by ~1e-10 "
                "relative), and its node and edge KKT residuals stay within the bound the final residual implies; "
                "CVXPY primal and dual agree."),
    ),
    Claim(
        id="gtv.kkt_25",
        title="Node-wise optimality condition (25) as printed (factor lam A_e)",
        citations=(cite("optimality conditions", equation="(25)", lines="365-370"),),
        statement=("A primal-dual optimal pair satisfies w^(e+) - w^(e-) in lam A_e d phi*(u^(e)/(lam A_e)) for every "
                   "edge; for MOCHA (phi = 1/2||.||^2) this says u^(e) = w^(e+) - w^(e-)."),
        hypotheses=("MOCHA penalty", "squared loss", "weights U[0.3, 2], lam in [1e-2, 1] (so lam A_e != 1)"),
        check=check_kkt_25,
        expected=Verdict.REFUTED,
        reason=("the chain rule gives d[lam A phi*(./(lam A))](u) = d phi*(u/(lam A)); at the MOCHA optimum "
                "(Algorithm 1 and the CVXPY dual agree) u = lam A_e D w, so u = D w is off by a factor lam A_e."),
        reproduce=_reproduce_kkt_25,
        corrected_by="gtv.kkt_25_corrected",
        severity="typo",  # a spurious factor; the paper uses (28) (norm penalties), where the factor is harmless
    ),
    Claim(
        id="gtv.kkt_25_corrected",
        title="Optimality condition (25) without the spurious factor: MOCHA flow u = lam A_e D w",
        citations=(cite("optimality conditions", equation="(25)", lines="365-370"),),
        statement=("A primal-dual optimal pair satisfies w^(e+) - w^(e-) in d phi*(u^(e)/(lam A_e)); for MOCHA, "
                   "u^(e) = lam A_e (w^(e+) - w^(e-))."),
        hypotheses=("MOCHA penalty", "squared loss"),
        check=check_kkt_25_corrected,
        expected=Verdict.CONFIRMED,
        reason="Holds at the optimum to the solver accuracy (Algorithm 1 to ~1e-12, CVXPY dual to ~1e-8).",
        corrects="gtv.kkt_25",
    ),
)
