r"""NPFL with fixed :math:`\tau_k \ge 0` converges to the coupled (Nash) fixed point (docs/papers/npfl_rl.md#k4,
docs/papers/npfl_rl.md#erratum-d14).

General case: one unknown :math:`w_c` per component of :math:`G_q`, the stacked linear system of
:func:`reference_impl.npfl_rl.coupled_fixed_point` (certified by its residual). Symmetric case (every :math:`G_q`
connected, every :math:`N_k^{(r)}` non-empty): the same point is the CVXPY argmin of
:math:`\sum_q\Phi_q(w_q)/T_q + \frac{1}{Q-1}\sum_{q<r}\|w_q - w_r\|^2`, :math:`T_q = \sum_{k\in C_{(q)}}\tau_k`.

The centralised problem (6.1) with the *same* :math:`\tau` (read as a coupled system, one stationarity condition per
cluster) is not the limit; (6.1) with :math:`|C_{(q)}|\tau` is. Convergence to the fixed point is a decision (the run
reaches the certified point within the convergence tolerance); the limit of (6.1) with the same tau is an identity.
"""

from __future__ import annotations

import numpy as np

from reference_impl.npfl_rl import NPFLConfig, coupled_fixed_point, run_npfl, symmetric_fixed_point_cvxpy
from verify.evidence import result_from_evidence, sample_evidence, with_minimal_counterexample
from verify.npfl_rl import cite
from verify.npfl_rl._common import paper_point, problem_from, random_settings
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import NPFL_CONVERGED_RTOL, NPFL_CVXPY_RTOL

__all__ = ["CLAIMS", "check_centralised_raw_tau", "check_fixed_point", "evaluate_centralised_raw_tau",
           "evaluate_fixed_point", "reproduce_raw_tau", "taus_from"]

N_ITER = 2000
_PROFILE = {"ci": {"seeds": (0,), "batches": 1, "per_batch": 2},
            "thorough": {"seeds": tuple(range(4)), "batches": 5, "per_batch": 4}}


def taus_from(settings: dict, K: int) -> np.ndarray:
    """Client-specific fixed tau_k: U(0, tau_hi) from ``tau_seed``, or the constant ``tau`` when given."""
    if "tau" in settings:
        return np.full(K, float(settings["tau"]))
    return np.random.default_rng(int(settings["tau_seed"])).uniform(0.0, float(settings["tau_hi"]), K)


def evaluate_fixed_point(settings: dict) -> Evidence:
    """Relative squared distance of w^(N) to the stacked fixed point / NPFL_CONVERGED_RTOL (and, in the symmetric
    case, CVXPY vs the stacked system / NPFL_CVXPY_RTOL); the larger ratio."""
    problem = problem_from(settings)
    tau = taus_from(settings, problem.K)
    fp = coupled_fixed_point(problem, tau)
    run = run_npfl(problem, NPFLConfig(rho=3.0), N_ITER, reference=fp.w, tau_init=tau)
    err = float(run.reference_error[0, -1]) if np.isfinite(run.reference_error[0, -1]) else float("inf")
    ratios = {"run_vs_stacked": err / NPFL_CONVERGED_RTOL, "stacked_residual": fp.certificate / NPFL_CVXPY_RTOL}
    extra = {}
    if settings.get("symmetric"):
        cv = symmetric_fixed_point_cvxpy(problem, tau)
        agree = float(np.linalg.norm(cv.w - fp.w) / np.linalg.norm(fp.w))
        ratios["cvxpy_vs_stacked"] = agree / NPFL_CVXPY_RTOL
        extra = {"cvxpy_vs_stacked": agree, "cvxpy_stationarity": cv.certificate}
    measured = max(ratios.values())
    grid = np.unique(np.geomspace(1, N_ITER, 40).astype(int))
    return Evidence(measured=measured, bound=1.0, holds=bool(measured <= 1.0),
                    parameters={**settings, "error": err, "ratios": ratios, **extra, "curve_n": grid.tolist(),
                                "curve": [float(min(run.reference_error[0, n], 1e300)) for n in grid]})


def evaluate_centralised_raw_tau(settings: dict) -> Evidence:
    """Distance of the NPFL limit (tau_k = tau) to the coupled (6.1) with the same tau (T_q = tau), relative squared,
    / NPFL_CONVERGED_RTOL; also records the distance to (6.1) with |C_q| tau (the corrected reading)."""
    problem = problem_from(settings)
    tau = float(settings["tau"])
    raw = symmetric_fixed_point_cvxpy(problem, tau / problem.cluster_sizes)  # T_q = tau: (6.1) with the raw tau
    scaled = symmetric_fixed_point_cvxpy(problem, np.full(problem.K, tau))  # T_q = |C_q| tau
    run = run_npfl(problem, NPFLConfig(rho=3.0, tau0=tau), N_ITER, reference=raw.w)
    err = float(run.reference_error[0, -1])
    to_scaled = float(np.sum((run.w[0] - scaled.w) ** 2) / np.sum(scaled.w ** 2))
    return Evidence(measured=err / NPFL_CONVERGED_RTOL, bound=1.0, holds=bool(err <= NPFL_CONVERGED_RTOL),
                    parameters={**settings, "error_raw_tau": err, "error_scaled_tau": to_scaled})


def reproduce_raw_tau(counterexample) -> Evidence:
    return evaluate_centralised_raw_tau({k: v for k, v in dict(counterexample).items()
                                         if k not in ("error_raw_tau", "error_scaled_tau")})


def _batch(rng: np.random.Generator, count: int) -> list[Evidence]:
    out = []
    for i in range(count):
        s = random_settings(rng, symmetric=bool(i % 2))
        out.append(evaluate_fixed_point({**s, "tau_seed": int(rng.integers(2**31)),
                                         "tau_hi": float(rng.choice([0.1, 1.0, 5.0]))}))
    return out


def _raw_batch(rng: np.random.Generator, count: int) -> list[Evidence]:
    return [evaluate_centralised_raw_tau({**random_settings(rng, symmetric=True),
                                          "tau": float(rng.choice([0.05, 0.2, 1.0]))}) for _ in range(count)]


def _figure(evidence: list[Evidence]) -> FigureSpec:
    series = tuple(Series(label=f"K={e.parameters['K']}, d={e.parameters['d']}"
                          f"{' (symmetric)' if e.parameters.get('symmetric') else ''}",
                          x=e.parameters["curve_n"], y=np.maximum(e.parameters["curve"], 1e-35)) for e in evidence[:4])
    series += (Series(label="NPFL_CONVERGED_RTOL", x=(1, N_ITER), y=(NPFL_CONVERGED_RTOL,) * 2, style="dashed"),)
    return FigureSpec(name="fixed_point_convergence", title="NPFL with fixed tau_k vs the stacked coupled fixed point",
                      xlabel="iteration n", ylabel="relative squared error", xscale="log", yscale="log", series=series)


def check_fixed_point(ctx: CheckContext) -> CheckResult:
    claim_id = "npfl_rl.fixed_point"
    p = _PROFILE[ctx.profile]
    evidence = [evaluate_fixed_point({**paper_point(s), "tau_seed": s, "tau_hi": 1.0}) for s in p["seeds"]]
    evidence += sample_evidence(ctx, claim_id, _batch, p["batches"], (p["per_batch"],))
    sym = [e.parameters["cvxpy_vs_stacked"] for e in evidence if "cvxpy_vs_stacked" in e.parameters]
    result = result_from_evidence(claim_id, evidence, ctx=ctx, quantity="max(error/NPFL_CONVERGED_RTOL, "
                                  "CVXPY disagreement/NPFL_CVXPY_RTOL)", what="NPFL(tau_k) -> coupled fixed point",
                                  form="decision",
                                  form_reason=("convergence to a certified fixed point, decided against a convergence "
                                               "tolerance; no theorem of the paper bounds it"),
                                  figures=[_figure(evidence)],
                                  details={"worst_error": max(e.parameters["error"] for e in evidence),
                                           "symmetric_cases": len(sym), "worst_cvxpy_vs_stacked": max(sym or [0.0])})
    return result


def check_centralised_raw_tau(ctx: CheckContext) -> CheckResult:
    claim_id = "npfl_rl.centralised_raw_tau"
    evidence = sample_evidence(ctx, claim_id, _raw_batch, 1 if not ctx.thorough else 4, (2,))
    result = result_from_evidence(claim_id, evidence, ctx=ctx, quantity="relative squared distance / "
                                  "NPFL_CONVERGED_RTOL", what="NPFL(tau) limit = coupled (6.1) with the same tau",
                                  form="identity",
                                  form_reason=("an equality of two points (the NPFL limit and the solution of (6.1) "
                                               "with the same tau), decided against a convergence tolerance"),
                                  corrected_claim="npfl_rl.fixed_point",
                                  details={"distance_to_scaled_tau": max(e.parameters["error_scaled_tau"]
                                                                         for e in evidence)})
    return with_minimal_counterexample(result, evidence, lambda e: e.parameters["K"] * e.parameters["d"], "K x d")


_CIT = (cite("Thesis Chapter 6, eqs. (6.1)-(6.2)", "(6.1), (6.2)", "1610-1621"),
        cite("Publication 7, eqs. (1)-(2)", "(1), (2)", "3463-3473"))

CLAIMS = (
    Claim(
        id="npfl_rl.centralised_raw_tau",
        title="NPFL with tau_k = tau solves the centralised problem (6.1) with the same tau",
        citations=_CIT,
        statement=("The networked problem (6.2) with tau_k = tau is the distributed form of (6.1): the NPFL limit "
                   "solves (6.1) for every cluster (read as a coupled system, one stationarity condition per "
                   "cluster)."),
        hypotheses=("every G_q connected and every N_k^(r) non-empty", "tau > 0", "corrected (6.5), (6.6), (6.11)"),
        check=check_centralised_raw_tau,
        expected=Verdict.REFUTED,
        reason=("Summing the clients' stationarity conditions over a cluster gives tau_k summed over C_q: the limit is "
                "(6.1) with |C_q| tau (the corrected npfl_rl.fixed_point), not with tau; the raw-tau solution is off "
                "by ~1e-3-1e-1 relative while the scaled one matches to ~1e-20."),
        reproduce=reproduce_raw_tau,
        corrected_by="npfl_rl.fixed_point",
        severity="correction_as_useful",
    ),
    Claim(
        id="npfl_rl.fixed_point",
        title="NPFL with fixed tau_k >= 0 converges to the coupled (Nash) fixed point",
        citations=_CIT + (cite("Thesis Chapter 6, eqs. (6.5)-(6.6), (6.11)", "(6.5), (6.6), (6.11)",
                               "1637-1643, 1689-1690"),),
        statement=("Corrected statement: with fixed tau_k >= 0, NPFL converges to the point with one model w_c per "
                   "component c of G_q solving sum_{k in c}[(H_k + lambda/|C_q| I) w_c - b_k + tau_k sum_r omega_{k,r}"
                   "(w_c - mean_{l in N_k^(r)} w_{c(l)})] = 0; in the symmetric case this is argmin sum_q Phi_q(w_q)/"
                   "T_q + 1/(Q-1) sum_{q<r}||w_q - w_r||^2, T_q = sum_{k in C_q} tau_k, i.e. (6.1) with |C_q| tau."),
        hypotheses=("fixed tau_k >= 0", "empty N_k^(r) dropped (docs/papers/npfl_rl.md#choice-empty-cluster)",
                    "corrected (6.5), (6.6), (6.11)", "rho = 3"),
        check=check_fixed_point,
        expected=Verdict.CONFIRMED,
        reason=("Relative squared error <= 1e-6 after N = 2000 at the paper's size (tau_k ~ U(0, 1)) and on random "
                "sparse and symmetric instances with tau_k up to 5; the stacked system and CVXPY agree to <= 1e-6. "
                "No theorem of the seed guarantees convergence for tau > 0 (the inter-cluster coupling is a Jacobi "
                "step on stale models); it converged on every instance tried."),
        corrects="npfl_rl.centralised_raw_tau",
    ),
)
