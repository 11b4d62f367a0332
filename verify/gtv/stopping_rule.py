r"""The stopping rule "gap_k <= eta" of (34): refuted by an exact two-node orbit; the projected-dual gap that holds.

The GTV paper (Section IV, after (34)) says that for convex local losses and penalty the condition
:math:`\mathrm{gap}_k \le \eta` "is always fulfilled after a finite number of iterations". The orbit of
:mod:`theory.gtv.stopping` (two nodes, MOCHA, :math:`\lambda = 1/2`, :math:`L_1 \equiv 0`, :math:`L_2 = (w - 1)^2`,
the seed's step sizes) is, for every :math:`k \ge 1`, :math:`\hat u_k = -\tfrac12(2/3)^k \ne 0`, so
:math:`-s^{(1)} \notin \mathrm{dom}\,L_1^* = \{0\}` and :math:`\mathrm{gap}_k = +\infty` at every iterate, for every
:math:`\eta`. Certificate, three ways: (i) sympy proves that the closed form satisfies Algorithm 1's step for symbolic
k (the induction step) and equals the first iterate; (ii) Algorithm 1 run in exact rational arithmetic
(:class:`fractions.Fraction`) equals the closed form at every iterate checked; (iii) the floating-point reference
implementation follows the orbit to rounding, and its domain test (tolerance ``GTV_RANGE_RTOL``) reports the gap
infinite until :math:`|\hat u_k|` falls below the tolerance -- finite values after that are an artefact of the
tolerance (the exact orbit never enters the domain).

Corrected rule (``gtv.gap_projected_stopping_rule``): :math:`\mathrm{gap}^\Pi_k = P(\hat w_k) - \mathrm{Dual}(\Pi(\hat
u_k))` with :math:`\Pi` the projection onto the dual domain (:mod:`theory.gtv.stopping` derives it): always an upper
bound on :math:`P(\hat w_k) - P^*` and :math:`\to 0`, so :math:`\mathrm{gap}^\Pi_k \le \eta` is reached for every
:math:`\eta > 0`. Checked on the two-node orbit (exactly: :math:`\mathrm{gap}^\Pi_k = P(\hat w_k) - P^* = \tfrac12
(4/9)^k`, ratio 1) and along Algorithm 1 on the paper's SBM set-up scaled down (m_i < d, so (34) is +inf throughout)
with the nLasso and MOCHA penalties, :math:`P^*` by CVXPY.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
import sympy as sp
from threadpoolctl import threadpool_limits

from reference_impl.gtv import run_algorithm1
from reference_impl.gtv.centralized import solve_gtv_cvxpy
from reference_impl.gtv.data import sbm_instance
from theory.gtv import duality_gap, primal_objective
from theory.gtv.stopping import (
    TWO_NODE_LAM,
    TWO_NODE_RATIO,
    DualDomainProjector,
    projected_duality_gap,
    two_node_instance,
    two_node_orbit,
    two_node_primal_gap,
    two_node_step,
)
from verify.evidence import HARD_POINT, SIDES, result_from_evidence
from verify.gtv import cite
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import CLARABEL_TOL, GTV_RANGE_RTOL, gamma

__all__ = ["CLAIMS", "ETAS", "check_gap_projected_stopping_rule", "check_gap_stopping_rule", "evaluate_two_node",
           "projected_gap_trajectory", "reproduce_gap_stopping_rule", "symbolic_orbit_certificate"]

#: Stopping thresholds eta, relative to max(1, |P*|).
ETAS = (1e-2, 1e-4, 1e-6)
_PROFILE = {"ci": {"exact_iterations": 200, "float_iterations": 200, "seeds": (0,), "penalties": ("l2", "mocha"),
                   "chunk": 100, "max_iterations": 8000},
            "thorough": {"exact_iterations": 2000, "float_iterations": 2000, "seeds": (0, 1, 2),
                         "penalties": ("l2", "mocha"), "chunk": 100, "max_iterations": 12000}}
_SBM = {"sizes": (20, 20), "p_in": 0.5, "p_out": 0.05, "d": 20, "m": 5, "noise": 1e-3, "lam": 1e-2}


def symbolic_orbit_certificate() -> dict:
    """sympy: the closed form satisfies the step for symbolic k >= 1 and equals the first iterate."""
    k = sp.Symbol("k", integer=True, positive=True)
    r = sp.Rational(TWO_NODE_RATIO.numerator, TWO_NODE_RATIO.denominator)
    lam = sp.Rational(TWO_NODE_LAM.numerator, TWO_NODE_LAM.denominator)
    orbit = lambda j: (1 - sp.Rational(3, 2) * r**j, 1 - sp.Rational(1, 2) * r**j, -sp.Rational(1, 2) * r**j)  # noqa: E731
    w1, w2, u = orbit(k)
    half = sp.Rational(1, 2)
    n1, n2 = w1 - u, (2 + w2 + u) / 3
    step = (n1, n2, (u + half * (2 * (n1 - n2) - (w1 - w2))) / (1 + half / lam))
    residual = [sp.simplify(sp.expand(a - b)) for a, b in zip(step, orbit(k + 1), strict=True)]
    first = [sp.nsimplify(v) for v in orbit(1)]
    start = (Fraction(0), Fraction(0), Fraction(0))
    exact_first = [sp.Rational(v.numerator, v.denominator) for v in two_node_step(*start)]
    return {"induction_residual_zero": all(res == 0 for res in residual),
            "first_iterate_matches": first == exact_first,
            "closed_form": "w1_k = 1 - (3/2)(2/3)^k, w2_k = 1 - (1/2)(2/3)^k, u_k = -(1/2)(2/3)^k (k >= 1)"}


@functools.lru_cache(maxsize=4)
def evaluate_two_node(exact_iterations: int, float_iterations: int) -> dict:
    """Exact Algorithm 1 vs the closed form, the gap at every iterate, and the floating-point run."""
    x = (Fraction(0), Fraction(0), Fraction(0))
    agree, nonzero, gaps_projected = True, True, []
    for k in range(1, exact_iterations + 1):
        x = two_node_step(*x)
        agree &= x == two_node_orbit(k)
        nonzero &= x[2] != 0
        gaps_projected.append(two_node_primal_gap(x[0], x[1]))
    inst = two_node_instance()
    run = run_algorithm1(inst, max_iterations=float_iterations, tol=0.0, record_every=0)
    closed = [float(v) for v in two_node_orbit(float_iterations)]
    float_err = float(max(abs(run.w[0, 0] - closed[0]), abs(run.w[1, 0] - closed[1]), abs(run.u[0, 0] - closed[2])))
    # the float domain test at node 1 (b_1 = 0, scale max(|s|, |b|, 1) = 1) passes once (1/2)(2/3)^k <= GTV_RANGE_RTOL
    k_float_finite = math.ceil(math.log(2.0 * GTV_RANGE_RTOL) / math.log(float(TWO_NODE_RATIO)))
    w, u = None, None
    float_gaps = []
    for _ in range(min(float_iterations, k_float_finite + 3)):
        r = run_algorithm1(inst, max_iterations=1, tol=0.0, record_every=0, w0=w, u0=u)
        w, u = r.w, r.u
        float_gaps.append(duality_gap(inst, w, u, range_rtol=GTV_RANGE_RTOL))
    first_finite_float = next((k for k, g in enumerate(float_gaps, start=1) if math.isfinite(g)), None)
    return {"exact_matches_closed_form": bool(agree), "u_nonzero_at_every_iterate": bool(nonzero),
            "exact_iterations": exact_iterations, "u_last": str(x[2]),
            "projected_gaps": gaps_projected, "float_max_error_at_last": float_err,
            "float_first_finite_gap_iteration": first_finite_float, "float_gap_finite_from_predicted": k_float_finite,
            "symbolic": symbolic_orbit_certificate()}


_COUNTEREXAMPLE = {"nodes": 2, "edges": "(1, 2), A = 1", "d": 1, "penalty": "mocha (phi(v) = v^2 / 2)",
                   "lam": "1/2", "L_1": "0 (m_1 = 0)", "L_2": "(w - 1)^2 (m_2 = 1, x = y = 1)",
                   "steps": "tau_i = 1/|N(i)| = 1, sigma_e = 1/2, w_0 = 0, u_0 = 0",
                   "orbit": "u_k = -(1/2)(2/3)^k != 0 for every k >= 1, so -s^(1) = -u_k is outside dom L_1* = {0}"}


def reproduce_gap_stopping_rule(counterexample) -> Evidence:
    """Re-certify the orbit: holds only if some checked iterate has u_k = 0 (a finite gap)."""
    info = evaluate_two_node(int(counterexample.get("exact_iterations", 200)), 50)
    cert = info["symbolic"]
    never = info["u_nonzero_at_every_iterate"] and cert["induction_residual_zero"] and cert["first_iterate_matches"]
    return Evidence(measured=math.inf, bound=float(counterexample.get("eta", 1e-6)), holds=not never,
                    parameters={**_COUNTEREXAMPLE, "exact_iterations": info["exact_iterations"]})


def check_gap_stopping_rule(ctx: CheckContext) -> CheckResult:
    """The two-node orbit: gap_k = +inf at every iterate (exact), for every eta."""
    p = _PROFILE[ctx.profile]
    with threadpool_limits(limits=1, user_api="blas"):
        info = evaluate_two_node(p["exact_iterations"], p["float_iterations"])
    cert = info["symbolic"]
    certified = info["u_nonzero_at_every_iterate"] and cert["induction_residual_zero"] and cert["first_iterate_matches"]
    evidence = [Evidence(measured=math.inf if certified else 0.0, bound=eta, holds=not certified,
                         parameters={**_COUNTEREXAMPLE, "eta": eta, "exact_iterations": info["exact_iterations"],
                                     SIDES: None}) for eta in ETAS]
    ks = list(range(1, len(info["projected_gaps"]) + 1))
    fig = FigureSpec(name="two_node_orbit", title="Two-node orbit: |u_k| (gap (34) = +inf while u_k != 0) and the "
                     "projected-dual gap", xlabel="iteration k", ylabel="value", yscale="log",
                     series=(Series(label="|u_k| = (1/2)(2/3)^k (exact)", x=ks,
                                    y=[0.5 * float(TWO_NODE_RATIO) ** k for k in ks]),
                             Series(label="projected-dual gap = P(w_k) - P* = (1/2)(4/9)^k (exact)", x=ks,
                                    y=[max(float(g), 1e-300) for g in info["projected_gaps"]])))
    return result_from_evidence(
        "gtv.gap_stopping_rule", evidence, ctx=ctx,
        quantity="min over iterates of gap_k (34) on the two-node orbit (exact) vs eta",
        what="gap_k <= eta after finitely many iterations", corrected_claim="gtv.gap_projected_stopping_rule",
        form="decision", form_reason="a finite-termination statement: an iterate reaches gap_k <= eta or none does",
        figures=[fig], details={k: v for k, v in info.items() if k != "projected_gaps"})


@functools.lru_cache(maxsize=8)
def projected_gap_trajectory(seed: int, penalty: str, chunk: int, max_iterations: int) -> dict:
    """Algorithm 1 (theta = 1) on the scaled-down SBM in chunks: P(w_k) - P*, gap^Pi_k and gap (34) after each."""
    inst, _ = sbm_instance(np.random.default_rng(seed), **_SBM)
    inst = inst.with_(penalty=penalty)
    with threadpool_limits(limits=1, user_api="blas"):
        projector = DualDomainProjector.build(inst)
        sol = solve_gtv_cvxpy(inst, solver_tol=CLARABEL_TOL)
        rows, w, u, k = [], None, None, 0
        while k < max_iterations:
            run = run_algorithm1(inst, theta=1.0, max_iterations=chunk, tol=0.0, w0=w, u0=u, record_every=0)
            w, u, k = run.w, run.u, k + run.iterations
            gap_pi, dual = projected_duality_gap(inst, w, u, range_rtol=GTV_RANGE_RTOL, projector=projector)
            rows.append({"k": k, "primal_gap": primal_objective(inst, w) - sol.value, "projected_gap": gap_pi,
                         "gap34": duality_gap(inst, w, u, range_rtol=GTV_RANGE_RTOL),
                         "projected_out_of_range": float(dual.out_of_range.max())})
            if gap_pi <= min(ETAS) * max(1.0, abs(sol.value)) / 10:
                break
    return {"rows": rows, "P_star": sol.value, "summary": inst.summary()}


def check_gap_projected_stopping_rule(ctx: CheckContext) -> CheckResult:
    """Certificate (P(w_k) - P* <= gap^Pi_k) at every point and finite termination for every eta of ETAS."""
    p = _PROFILE[ctx.profile]
    info = evaluate_two_node(p["exact_iterations"], p["float_iterations"])
    evidence = []
    for k, g in enumerate(info["projected_gaps"], start=1):
        gap = two_node_primal_gap(*two_node_orbit(k)[:2])    # P(w_k) - P* (P* = 0), independently of the dual side
        evidence.append(Evidence(measured=float(gap), bound=float(g), holds=gap <= g,
                                 parameters={"instance": "two-node orbit (exact)", "k": k,
                                             HARD_POINT: "trivial loss L_1 = 0 (dom L_1* = {0})"}))
    termination, figures = {}, []
    for seed in p["seeds"]:
        for penalty in p["penalties"]:
            traj = projected_gap_trajectory(seed, penalty, p["chunk"], p["max_iterations"])
            scale = max(1.0, abs(traj["P_star"]))
            allowance = CLARABEL_TOL * scale + gamma(64) * scale
            for row in traj["rows"]:
                evidence.append(Evidence(measured=row["primal_gap"], bound=row["projected_gap"] + allowance,
                                         holds=bool(row["primal_gap"] <= row["projected_gap"] + allowance),
                                         parameters={"instance": f"SBM seed {seed}", "penalty": penalty, **row,
                                                     SIDES: (row["primal_gap"], row["projected_gap"])}))
            firsts = {f"{eta:g}": next((r["k"] for r in traj["rows"] if r["projected_gap"] <= eta * scale), None)
                      for eta in ETAS}
            termination[f"seed {seed}, {penalty}"] = {"first_k_gap_pi_below_eta_scaled": firsts,
                                                      "gap34_ever_finite": any(math.isfinite(r["gap34"])
                                                                               for r in traj["rows"]),
                                                      "P_star": traj["P_star"]}
            evidence.append(Evidence(measured=float(sum(v is None for v in firsts.values())), bound=0.0,
                                     holds=all(v is not None for v in firsts.values()),
                                     parameters={"instance": f"SBM seed {seed}", "penalty": penalty,
                                                 "first_k": firsts, SIDES: None}))
            ks = [r["k"] for r in traj["rows"]]
            figures.append(Series(label=f"gap^Pi_k, seed {seed}, {penalty}", x=ks, group=penalty,
                                  y=[max(r["projected_gap"], 1e-300) for r in traj["rows"]]))
            figures.append(Series(label=f"P(w_k) - P*, seed {seed}, {penalty}", x=ks, style="dashed", group=penalty,
                                  y=[max(r["primal_gap"], 1e-300) for r in traj["rows"]]))
    fig = FigureSpec(name="projected_gap", title="Projected-dual gap vs P(w_k) - P* along Algorithm 1 (SBM, m_i < d; "
                     "gap (34) is +inf throughout)", xlabel="iteration k", ylabel="value", yscale="log",
                     series=tuple(figures))
    return result_from_evidence(
        "gtv.gap_projected_stopping_rule", evidence, ctx=ctx,
        quantity="P(w_k) - P* vs gap^Pi_k (certificate); count of eta in ETAS never reached (termination)",
        what="P(w_k) - P* <= gap^Pi_k, and gap^Pi_k <= eta is reached", figures=[fig],
        details={"termination": termination, "etas_relative": list(ETAS),
                 "two_node_closed_form": info["symbolic"]["closed_form"]})


CLAIMS = (
    Claim(
        id="gtv.gap_stopping_rule",
        title="Stopping rule (34): gap_k <= eta is always reached after finitely many iterations",
        citations=(cite("stopping criterion via the primal-dual gap", equation="(34)", lines="465-475"),
                   cite("local loss", equation="(40)", lines="546")),
        statement=("If the local losses and the GTV penalty are convex, the stopping condition gap_k <= eta is always "
                   "fulfilled after a finite number of iterations [34, Thm. 5.1]."),
        hypotheses=("L_i and phi convex (here L_1 = 0, L_2 = (w - 1)^2, MOCHA phi = v^2/2: all convex)",
                    "Algorithm 1 with the seed's step sizes tau_i = 1/|N(i)|, sigma_e = 1/2, from w_0 = 0, u_0 = 0",
                    "gap (34) with the exact conjugates (no domain tolerance)"),
        check=check_gap_stopping_rule,
        expected=Verdict.REFUTED,
        reason=("Exact counterexample: two nodes, one edge, MOCHA, lambda = 1/2, L_1 = 0 (a trivial loss, like the "
                "inaccessible nodes of (40)), L_2 = (w - 1)^2. Algorithm 1's orbit is w1_k = 1 - (3/2)(2/3)^k, "
                "w2_k = 1 - (1/2)(2/3)^k, u_k = -(1/2)(2/3)^k for every k >= 1 (sympy induction step, exact "
                "rationals for 200 (ci) / 2000 iterations, the float reference run to rounding). u_k != 0, so "
                "-s^(1) is outside dom L_1* = {0} and gap_k = +inf at every iterate: no eta is ever reached, although "
                "the iterates converge. A float domain test with tolerance 1e-8 turns the gap finite from k = 44 "
                "only because |u_k| falls below the tolerance."),
        severity="correction_as_useful",
        reproduce=reproduce_gap_stopping_rule,
        corrected_by="gtv.gap_projected_stopping_rule",
    ),
    Claim(
        id="gtv.gap_projected_stopping_rule",
        title="Corrected stopping rule: the gap with the dual projected onto its domain reaches eta",
        citations=(cite("stopping criterion via the primal-dual gap", equation="(34)", lines="465-475"),
                   cite("dual problem and strong duality", equation="(19)-(24)", lines="325-362")),
        statement=("Corrected statement: with Pi(u) = t P_V u (P_V the orthogonal projection onto V = {u : "
                   "(D^T u)^(i) in dom L_i* for all i}, t scaling into the dual-norm balls for a norm penalty), "
                   "gap^Pi_k = P(w_k) - Dual(Pi(u_k)) satisfies P(w_k) - P* <= gap^Pi_k at every iterate and "
                   "gap^Pi_k -> 0, so gap^Pi_k <= eta is fulfilled after finitely many iterations for every eta > 0 "
                   "(squared or trivial losses; l2, l1 or MOCHA penalty)."),
        hypotheses=("squared loss (40) or L_i = 0", "Algorithm 1 converging (seed step sizes)",
                    "ci: the two-node orbit (exact) and the SBM 2 x 20 nodes, d = 20, m_i = 5, lambda = 1e-2, nLasso "
                    "and MOCHA, seed 0; thorough: seeds 0-2", "P* by CVXPY (Clarabel, tolerance 1e-10)"),
        check=check_gap_projected_stopping_rule,
        expected=Verdict.CONFIRMED,
        reason=("Weak duality makes the projected gap an upper bound on P(w_k) - P*; it holds at every point, is "
                "exact on the two-node orbit (gap^Pi_k = P(w_k) - P* = (1/2)(4/9)^k, ratio 1) and tight on the SBM "
                "with MOCHA (ratio 0.9998); it falls below 1e-2, 1e-4 and 1e-6 (times max(1, |P*|)) within the run on "
                "every instance, while (34) stays +inf there."),
        corrects="gtv.gap_stopping_rule",
    ),
)
