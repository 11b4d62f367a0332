r"""K5 and K6: the DPG derivative of :math:`a \mapsto V_v(P(a))` (spec 4) and the descent of the DPG step (6.13).

The seed omits the derivative (P7 line 3553). Differentiating :math:`A(a)P(a) = b + am + s` gives
:math:`\frac{d}{da}V_v(P(a)) = \nabla V_v(P(a))^\top A(a)^{-1}(m - \omega P(a))`. K5 compares it with the
complex-step derivative :math:`\operatorname{Im} V_v(P(a + ih))/h`, :math:`h = 10^{-30}` (no cancellation; spec
review notes: central differences lose ~1e-5 relative when :math:`|dV/da| \ll V`). K6 checks that
:math:`t \leftarrow t - \delta g` with :math:`\delta|g| \le 10^{-4}` decreases :math:`V_v(P(t))` by at least
:math:`\delta g^2/2`. States are mid-run states of NPFL-RL (DPG, projected) on the instance.
"""

from __future__ import annotations

import numpy as np

from reference_impl.npfl_rl import NPFLConfig, npfl_primal_map, run_npfl
from verify.evidence import result_from_evidence, sample_evidence
from verify.npfl_rl import cite
from verify.npfl_rl._common import paper_point, problem_from, random_settings
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import EPS, NPFL_DERIVATIVE_RTOL, NPFL_ROUNDING_RTOL

__all__ = ["A_GRID", "CLAIMS", "check_dpg_derivative", "check_dpg_descent", "evaluate_dpg_derivative",
           "evaluate_dpg_descent", "mid_run_map"]

A_GRID = (0.0, 0.05, 0.1, 0.3, 1.0, 2.0, 3.0)
_H = 1e-30
_PROFILE = {"ci": {"seeds": (0,), "batches": 1, "per_batch": 3}, "thorough": {"seeds": (0, 1, 2), "batches": 5,
                                                                              "per_batch": 6}}


def mid_run_map(settings: dict):
    """The primal map after ``n0`` iterations of NPFL-RL (DPG, delta = 1e-3, projected) on the instance."""
    problem = problem_from(settings)
    run = run_npfl(problem, NPFLConfig(policy="dpg", delta=1e-3), int(settings.get("n0", 30)))
    return problem, npfl_primal_map(problem, NPFLConfig(), run.w[0], run.gamma[0])


def evaluate_dpg_derivative(settings: dict) -> Evidence:
    """max over clients and a in A_GRID of |analytic - complex step| / max(|complex step|, EPS V), / tolerance."""
    _, pm = mid_run_map(settings)
    errs, pairs = [], []
    for a in A_GRID:
        f = pm.derivative(a)
        cs = np.imag(pm.value(a + 1j * _H)) / _H
        V = pm.value(a)
        errs.append(np.abs(f - cs) / np.maximum(np.abs(cs), EPS * np.abs(V)))
        pairs += list(zip(cs.tolist(), f.tolist()))
    worst = float(np.max(errs))
    return Evidence(measured=worst / NPFL_DERIVATIVE_RTOL, bound=1.0, holds=bool(worst <= NPFL_DERIVATIVE_RTOL),
                    parameters={**settings, "worst_relative_error": worst, "pairs": pairs[:200]})


def evaluate_dpg_descent(settings: dict) -> Evidence:
    r"""max over clients and t in A_GRID of (V(P(t - delta g)) - V(P(t)) + delta g^2/2) / (NPFL_ROUNDING_RTOL V)."""
    _, pm = mid_run_map(settings)
    ratios, decreases = [], []
    for t in A_GRID:
        g = pm.derivative(t)
        delta = np.where(g != 0, np.minimum(1e-3, 1e-4 / np.maximum(np.abs(g), 1e-300)), 0.0)
        t_new = t - delta * g
        V0, V1 = pm.value(t), pm.value(t_new)
        excess = V1 - (V0 - 0.5 * delta * g * g)
        moving = g != 0  # omega_k = 0: V_v does not depend on t, g = 0 and nothing moves (no information)
        ratios += (excess[moving] / (NPFL_ROUNDING_RTOL * np.abs(V0[moving]))).tolist()
        decreases += (V0 - V1)[moving].tolist()
    worst = float(np.max(ratios)) if ratios else 0.0
    return Evidence(measured=worst, bound=1.0, holds=bool(worst <= 1.0),
                    parameters={**settings, "worst_excess_ratio": worst, "decreases": decreases[:200]})


def _batch(rng: np.random.Generator, count: int, which: str) -> list[Evidence]:
    f = evaluate_dpg_derivative if which == "derivative" else evaluate_dpg_descent
    return [f({**random_settings(rng), "n0": int(rng.integers(1, 60))}) for _ in range(count)]


def _check(ctx: CheckContext, claim_id: str, which: str) -> CheckResult:
    p = _PROFILE[ctx.profile]
    f = evaluate_dpg_derivative if which == "derivative" else evaluate_dpg_descent
    evidence = [f({**paper_point(s), "n0": 50}) for s in p["seeds"]]
    evidence += sample_evidence(ctx, claim_id, _batch, p["batches"], (p["per_batch"], which))
    if which == "derivative":
        pts = [pair for e in evidence for pair in e.parameters["pairs"]]
        cs, an = np.array(pts).T
        fig = FigureSpec(name="dpg_derivative", title="dV_v(P(a))/da: analytic (spec 4) vs complex step",
                         xlabel="complex-step derivative", ylabel="analytic derivative", xscale="symlog",
                         yscale="symlog", series=(Series(label="clients x a", x=cs, y=an, style="points"),
                                                  Series(label="y = x", x=(cs.min(), cs.max()),
                                                         y=(cs.min(), cs.max()), style="dashed")))
        quantity, what = "relative error / NPFL_DERIVATIVE_RTOL", "analytic dV/da = complex-step derivative"
    else:
        dec = np.sort(np.array([v for e in evidence for v in e.parameters["decreases"]]))
        fig = FigureSpec(name="dpg_descent", title="Decrease of V_v(P(t)) by one small DPG step (sorted)",
                         xlabel="client x t (sorted)", ylabel="V(P(t)) - V(P(t - delta g))", yscale="symlog",
                         series=(Series(label="decrease", x=np.arange(dec.size), y=dec, style="points"),))
        quantity, what = "(V_new - V_old + delta g^2/2) / (NPFL_ROUNDING_RTOL V_old)", "sufficient decrease"
    return result_from_evidence(claim_id, evidence, ctx=ctx, quantity=quantity, what=what, figures=[fig])


def check_dpg_derivative(ctx: CheckContext) -> CheckResult:
    return _check(ctx, "npfl_rl.dpg_derivative", "derivative")


def check_dpg_descent(ctx: CheckContext) -> CheckResult:
    return _check(ctx, "npfl_rl.dpg_descent", "descent")


_CIT = (cite("Thesis Chapter 6, eq. (6.13)", "(6.13)", "1699-1701"),
        cite("Publication 7, eq. (13) and 'explicit derivation is not included'", "(13)", "3553-3555"))

CLAIMS = (
    Claim(
        id="npfl_rl.dpg_derivative",
        title="DPG derivative dV_v(P(a))/da = grad V_v(P)^T A(a)^{-1}(m - omega P) (K5)",
        citations=_CIT,
        statement=("The gradient of the action value used by the DPG update (6.13) is dV_v(P_k(a))/da = "
                   "grad V_v(P_k(a))^T (H_k + (c_k + omega_k a) I)^{-1}(m_k - omega_k P_k(a)) (derived here; the seed "
                   "omits it)."),
        hypotheses=("ridge (6.10)", "a >= 0", "corrected (6.11)", "mid-run states of NPFL-RL"),
        check=check_dpg_derivative,
        expected=Verdict.CONFIRMED,
        reason=("Agrees with the complex-step derivative to <= 1e-9 relative at every client and a in [0, 3], at the "
                "paper's size and on random instances."),
    ),
    Claim(
        id="npfl_rl.dpg_descent",
        title="A small DPG step decreases V_v(P(t)) (K6)",
        citations=_CIT,
        statement=("For delta |g| <= 1e-4, with g = dV_v(P(t))/dt, V_v(P(t - delta g)) <= V_v(P(t)) - delta g^2 / 2 "
                   "(the DPG step (6.13) is a descent step on the current map)."),
        hypotheses=("ridge (6.10)", "t >= 0", "delta = min(1e-3, 1e-4/|g|)", "mid-run states of NPFL-RL"),
        check=check_dpg_descent,
        expected=Verdict.CONFIRMED,
        reason="Holds at every client and t in [0, 3] within a rounding slack of 1e-9 V_v.",
    ),
)
