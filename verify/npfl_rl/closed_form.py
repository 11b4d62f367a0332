r"""The closed-form primal step (6.11) is the exact argmin of the local subproblem (6.5) (docs/papers/npfl_rl.md#k1).

The corrected (6.11) (docs/papers/npfl_rl.md#closed-form: :math:`\rho|N_k\cap C_{(q)}|`, the "+" restored,
:math:`\omega_k a` on the diagonal) is compared, client by client, with the CVXPY/Clarabel argmin of the corrected
(6.5) (norm of each difference, docs/papers/npfl_rl.md#erratum-d2) written from the raw data. The printed (6.11)
(:math:`\rho|N_k|`, docs/papers/npfl_rl.md#erratum-d3, and :math:`+\tau_k` on the diagonal) is compared with the same
argmin. States :math:`w^{(n-1)}, \gamma^{(n-1)}` are random; clients without same-cluster neighbours and with missing
clusters (docs/papers/npfl_rl.md#choice-empty-cluster) occur by construction of the sparse instances. Every claim
here is an identity (a closed form against a solver's argmin), decided to the solver's tolerance.
"""

from __future__ import annotations

import numpy as np

from reference_impl.npfl_rl import NPFLConfig, npfl_primal_map
from theory.npfl_rl import npfl_primal_closed_form
from verify.evidence import result_from_evidence, sample_evidence, with_minimal_counterexample
from verify.npfl_rl import cite
from verify.npfl_rl._common import paper_point, problem_from, random_settings
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import CLARABEL_TOL, NPFL_CVXPY_RTOL

__all__ = ["CLAIMS", "PAPER_POINT", "argmin_cvxpy", "check_closed_form", "check_closed_form_printed",
           "check_subproblem_printed", "evaluate_closed_form", "reproduce_printed", "reproduce_printed_objective"]

#: The paper's size, instance replicate 0 (docs/papers/npfl_rl.md#instance-i0), rho = 3, a = 0.05 (fedcheck's tau0),
#: four clients of different kinds.
PAPER_POINT = {**paper_point(0), "rho": 3.0, "a": 0.05, "state_seed": 1, "max_clients": 4}
_PROFILE = {"ci": {"batches": 2, "per_batch": 2}, "thorough": {"batches": 8, "per_batch": 5}}
_A_VALUES = (0.0, 0.05, 0.3, 1.0)


def argmin_cvxpy(problem, k: int, w_prev, gamma, rho: float, a: float, convention: str = "E0", *,
                 printed_objective: bool = False) -> np.ndarray:
    """CVXPY/Clarabel argmin of the corrected (6.5) of client ``k`` (written from the raw data).

    ``printed_objective``: the inter-cluster term as printed in (6.4)/(6.5), the squared norm of the *sum*
    ||(a/(Q-1)) sum_r (w^_{k,r} - w)||^2 (missing clusters dropped), instead of the sum of squared norms
    (docs/papers/npfl_rl.md#erratum-d2).
    """
    import cvxpy as cp

    q = problem.labels[k]
    lam_q = problem.lam / np.sum(problem.labels == q)
    omega, _ = problem.inter_cluster_weights(convention)
    w = cp.Variable(problem.d)
    obj = cp.sum_squares(problem.y[k] - problem.X[k] @ w) / problem.D[k] + lam_q * cp.sum_squares(w) + w @ gamma[k]
    for nb in np.flatnonzero(problem.same_cluster_adjacency[k]):
        obj = obj + rho * cp.sum_squares(w - (w_prev[k] + w_prev[nb]) / 2.0)
    inter = []
    for r in range(problem.Q):
        members = np.flatnonzero(problem.adjacency[k] & (problem.labels == r))
        if r != q and members.size and omega[k, r] > 0:
            inter.append(omega[k, r] * (w_prev[members].mean(axis=0) - w))
            if not printed_objective:
                obj = obj + a * omega[k, r] * cp.sum_squares(w_prev[members].mean(axis=0) - w)
    if printed_objective and inter:
        obj = obj + cp.sum_squares(a * sum(inter))
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=CLARABEL_TOL, tol_gap_rel=CLARABEL_TOL, tol_feas=CLARABEL_TOL,
               max_iter=500)
    if prob.status != cp.OPTIMAL or w.value is None:
        raise ArithmeticError(f"CVXPY/Clarabel solve of client {k}'s subproblem (6.5) ended with {prob.status!r}")
    return np.asarray(w.value)


def _clients(problem, max_clients: int | None) -> np.ndarray:
    """All clients, or up to ``max_clients`` of distinct kinds (missing cluster, no same-cluster neighbour, ...)."""
    if max_clients is None or max_clients >= problem.K:
        return np.arange(problem.K)
    omega, _ = problem.inter_cluster_weights("E0")
    kinds = (omega.sum(axis=1) * 10).round().astype(int) * 100 + np.minimum(problem.same_cluster_adjacency.sum(1), 1)
    _, first = np.unique(kinds, return_index=True)
    rest = np.setdiff1d(np.arange(problem.K), first)
    return np.concatenate([first, rest])[:max_clients]


def evaluate_closed_form(settings: dict, variant: str = "corrected") -> Evidence:
    """Largest relative l2 distance between (6.11) (``variant``) and the CVXPY argmin, over the clients, / tolerance."""
    problem = problem_from(settings)
    rng = np.random.default_rng(settings["state_seed"])
    w_prev = rng.normal(size=(problem.K, problem.d))
    gamma = rng.normal(size=(problem.K, problem.d))
    rho, a = float(settings["rho"]), float(settings["a"])
    pm = npfl_primal_map(problem, NPFLConfig(rho=rho), w_prev, gamma)
    aa = np.full(problem.K, a)
    if variant in ("corrected", "printed_objective"):
        P = npfl_primal_closed_form(problem.H, problem.b, pm.m, pm.s, pm.c, pm.omega, aa)
    else:  # printed (6.11): rho|N_k| and + tau_k on the diagonal (docs/papers/npfl_rl.md#erratum-d3)
        c_printed = problem.lam / problem.cluster_sizes + rho * problem.adjacency.sum(axis=1)
        P = npfl_primal_closed_form(problem.H, problem.b, pm.m, pm.s, c_printed, np.ones(problem.K), aa)
    errors = {}
    for k in _clients(problem, settings.get("max_clients")):
        ref = argmin_cvxpy(problem, int(k), w_prev, gamma, rho, a, printed_objective=variant == "printed_objective")
        errors[int(k)] = float(np.linalg.norm(P[k] - ref) / max(np.linalg.norm(ref), 1e-300))
    worst = max(errors.values())
    return Evidence(measured=worst / NPFL_CVXPY_RTOL, bound=1.0, holds=bool(worst <= NPFL_CVXPY_RTOL),
                    parameters={**settings, "variant": variant, "relative_errors": errors})


def reproduce_printed(counterexample) -> Evidence:
    settings = {k: v for k, v in dict(counterexample).items() if k not in ("variant", "relative_errors")}
    return evaluate_closed_form(settings, "printed")


def reproduce_printed_objective(counterexample) -> Evidence:
    settings = {k: v for k, v in dict(counterexample).items() if k not in ("variant", "relative_errors")}
    return evaluate_closed_form(settings, "printed_objective")


def _batch(rng: np.random.Generator, count: int, variant: str) -> list[Evidence]:
    out = []
    a_values = (0.05, 0.3) if variant == "printed_objective" else _A_VALUES  # the printed objective is matched at 0
    for _ in range(count):
        s = {**random_settings(rng), "rho": float(10 ** rng.uniform(-1, 1)), "a": float(rng.choice(a_values)),
             "state_seed": int(rng.integers(2**31))}
        out.append(evaluate_closed_form(s, variant))
    return out


def _figure(by_variant: dict) -> FigureSpec:
    series = []
    for variant, evidence in by_variant.items():
        errs = [v for e in evidence for v in e.parameters["relative_errors"].values()]
        series.append(Series(label=f"(6.11) {variant}", x=np.arange(len(errs)), y=np.maximum(errs, 1e-17),
                             style="points", group=variant))
    n = max(len(s.x) for s in series)
    series.append(Series(label="tolerance NPFL_CVXPY_RTOL", x=(0, n - 1), y=(NPFL_CVXPY_RTOL,) * 2, style="dashed"))
    return FigureSpec(name="closed_form_vs_cvxpy", title="(6.11) vs the CVXPY argmin of (6.5), every checked client",
                      xlabel="client (all checked points)", ylabel="relative l2 error", yscale="log",
                      series=tuple(series))


def _check(ctx: CheckContext, claim_id: str, variant: str, corrected_claim=None) -> CheckResult:
    p = _PROFILE[ctx.profile]
    evidence = [evaluate_closed_form(PAPER_POINT, variant)]
    evidence += sample_evidence(ctx, claim_id, _batch, p["batches"], (p["per_batch"], variant))
    result = result_from_evidence(claim_id, evidence, ctx=ctx, quantity="max relative error / NPFL_CVXPY_RTOL",
                                  what=f"{variant} (6.11) = CVXPY argmin of (6.5)",
                                  figures=[_figure({variant: evidence})], corrected_claim=corrected_claim,
                                  details={"worst_relative_error": max(e.measured for e in evidence) * NPFL_CVXPY_RTOL},
                                  form="identity",
                                  form_reason=("a closed form against the CVXPY/Clarabel argmin, to the solver's "
                                               "tolerance: an equality, no slack to measure"))
    return with_minimal_counterexample(result, evidence, lambda e: e.parameters["K"] * e.parameters["d"], "K x d")


def check_closed_form(ctx: CheckContext) -> CheckResult:
    return _check(ctx, "npfl_rl.closed_form", "corrected")


def check_closed_form_printed(ctx: CheckContext) -> CheckResult:
    return _check(ctx, "npfl_rl.closed_form_printed", "printed", "npfl_rl.closed_form")


def check_subproblem_printed(ctx: CheckContext) -> CheckResult:
    return _check(ctx, "npfl_rl.subproblem_printed", "printed_objective")


_CITATIONS = (cite("Thesis Chapter 6, eqs. (6.5) and (6.11)", "(6.5), (6.11)", "1637-1638, 1689-1690"),
              cite("Publication 7, eqs. (5) and (11)", "(5), (11)", "3489-3490, 3539-3540"))

CLAIMS = (
    Claim(
        id="npfl_rl.subproblem_printed",
        title="(6.11) is the argmin of the subproblem (6.5) as printed: ||(tau_k/(Q-1)) sum_r (w^_{k,r} - w)||^2",
        citations=(cite("Thesis Chapter 6, eqs. (6.4)-(6.5) and (6.11)", "(6.4), (6.5), (6.11)",
                        "1630-1638, 1689-1690"),
                   cite("Publication 7, eqs. (4)-(5) and (11)", "(4), (5), (11)", "3482-3490, 3539-3540")),
        statement=("The closed form (6.11), linear in tau_k, is the minimiser of (6.5) with the inter-cluster term as "
                   "printed, the squared norm of the sum ||(tau_k/(Q-1)) sum_{r != q}(w^_{k,(r)} - w)||^2."),
        hypotheses=("ridge (6.10)", "0 < tau_k < 1 (the paper's range; here 0.05 and 0.3)",
                    "(6.11) with the corrections of docs/papers/npfl_rl.md#erratum-d3 and #erratum-d4 "
                    "(rho|N_k cap C_q|, '+')"),
        check=check_subproblem_printed,
        expected=Verdict.REFUTED,
        reason=("The printed norm-of-sum term has gradient 2 tau^2 omega (omega w - m), quadratic in tau; (6.11) is "
                "linear in tau, the argmin of the sum of squared norms (6.1)/(6.2) "
                "(docs/papers/npfl_rl.md#erratum-d2). They agree only at tau = 0 and tau = 1/omega_k; at tau = 0.05 "
                "or 0.3 the relative error is 0.2-0.8 at the worst client. The corrected reading is the one "
                "npfl_rl.closed_form confirms."),
        reproduce=reproduce_printed_objective,
        severity="typo",
    ),
    Claim(
        id="npfl_rl.closed_form_printed",
        title="Closed form (6.11) as printed: rho|N_k| and +tau_k on the diagonal",
        citations=_CITATIONS,
        statement=("For ridge regression the primal update (6.5) is w_k = (X_k^T X_k/D_k + (lambda/|C_q| + rho|N_k| + "
                   "tau_k) I)^{-1}(X_k^T y_k/D_k + tau_k/(Q-1) sum_r w^_{k,r} + rho/2 sum_{l in N_k cap C_q}"
                   "(w_k + w_l) - gamma_k/2)."),
        hypotheses=("ridge loss and regulariser (6.10)",
                    "corrected (6.5): norm of each difference (docs/papers/npfl_rl.md#erratum-d2)",
                    "missing clusters dropped with weight 1/(Q-1) (docs/papers/npfl_rl.md#choice-empty-cluster)"),
        check=check_closed_form_printed,
        expected=Verdict.REFUTED,
        reason=("The consensus sum of (6.5) runs over N_k cap C_q only, so the diagonal must carry rho|N_k cap C_q| "
                "(docs/papers/npfl_rl.md#erratum-d3), and with a missing cluster the inter-cluster weight is "
                "omega_k < 1, not 1: the printed form is off by O(0.1-1) relative at every client with a neighbour in "
                "another cluster."),
        reproduce=reproduce_printed,
        corrected_by="npfl_rl.closed_form",
        severity="correction_as_useful",
    ),
    Claim(
        id="npfl_rl.closed_form",
        title="Closed form (6.11) corrected: rho|N_k cap C_q|, omega_k tau_k, '+' restored",
        citations=_CITATIONS,
        statement=("Corrected statement: with c_k = lambda/|C_q| + rho|N_k cap C_q|, m_k = sum_r omega_{k,r} w^_{k,r} "
                   "and s_k = rho/2 sum_{l in N_k cap C_q}(w_k + w_l) - gamma_k/2, the argmin of (6.5) is "
                   "(H_k + (c_k + omega_k a) I)^{-1}(b_k + a m_k + s_k) for every a >= 0."),
        hypotheses=("ridge loss and regulariser (6.10)", "corrected (6.5) (docs/papers/npfl_rl.md#erratum-d2)",
                    "a >= 0", "empty N_k^(r) dropped (docs/papers/npfl_rl.md#choice-empty-cluster)"),
        check=check_closed_form,
        expected=Verdict.CONFIRMED,
        reason=("Equal to the CVXPY/Clarabel argmin written from the raw data to <= 1e-8 relative at every client "
                "(all kinds: missing clusters, no same-cluster neighbour), at the paper's size and on random sparse "
                "instances with rho in [0.1, 10] and a in {0, 0.05, 0.3, 1}."),
        corrects="npfl_rl.closed_form_printed",
    ),
)
