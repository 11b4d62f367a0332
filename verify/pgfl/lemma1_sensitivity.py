r"""PGFL Lemma 1 (sensitivity of the client update) and Theorem III (per-iteration zCDP).

Lemma 1 (seed 000 eqs. (42)/(45), lines 346-370) states, for the exact minimiser :math:`w` of the client subproblem
(4) and the minimiser :math:`w'` on a replace-one neighbouring data set with the same conditioning inputs
(Definition 1, eq. (41)), :math:`\Delta_{k,2}^{(n)} = \max\lVert w - w'\rVert = 2C_k/(\rho D_k)`.

``pgfl.lemma1`` (the "=", an identity; refuted). Logistic loss with :math:`\lVert x\rVert \le B` (:math:`C_k = B`):
the maximum is bracketed per instance, below by the adversarial search (:mod:`verify.pgfl._neighbour_search`), above
by a certificate valid for every neighbouring pair (:func:`theory.pgfl.sensitivity.certified_logistic_sensitivity`);
the certified bound is below :math:`2C_k/(\rho D_k)` at every instance, which is only the supremum over
unbounded conditioning inputs.

``pgfl.lemma1_upper_bound`` (corrected, confirmed; a bound): :math:`\le 2C_k/(\rho D_k)`, attained for Huber in its
linear region with :math:`\lambda = 0` (docs/papers/pgfl.md#erratum-r-c, the declared hardest points: slack ratio 1);
the derivation's tighter :math:`2C_k/((\rho+\mu)D_k)` too.

``pgfl.theorem3`` (seed 000 eq. (46); a bound): with :math:`\delta^2 = \Delta^2/(2\phi)` the Rényi divergence of the
two releases at the measured gaps is at most :math:`\alpha\phi` for :math:`\alpha \in \{1.5, 2, 4\}`, attained at the
Huber instances (the declared hardest points).

Tolerance policy. Each solve stops at gradient norm (plus its counted rounding) ``gtol`` = 1e-11, so the true gap
lies in ``gap +- (err + err' + gamma(d+4) gap)``. A bound is confirmed at a point when the upper limit is below
it; at Huber points, where the bound is attained, a point violates only when the lower limit exceeds it, and the
attained points must have the bound inside their bracket, so a bound off by more than the solver tolerance in
either direction is refuted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from theory.pgfl.sensitivity import certified_logistic_sensitivity
from theory.privacy import gaussian_sigma_for_zcdp, renyi_divergence_gaussians, sensitivity_pgfl
from verify.evidence import HARD_POINT, declare_form, result_from_evidence
from verify.papers import SEED_THESIS
from verify.pgfl import cite
from verify.pgfl._lemma1_records import PROFILE, STREAM, conditioning_sweep, neighbour_gap_records, problem_from_record
from verify.pgfl._neighbour_search import gradient_bound, solve_neighbour_pairs
from verify.records import CheckContext, CheckResult, Claim, Evidence, FigureSpec, Series, Verdict
from verify.tolerance import gamma

__all__ = [
    "CLAIMS",
    "ORDERS",
    "PAPER_PHIS",
    "check_lemma1_equality",
    "check_lemma1_upper_bound",
    "check_theorem3",
    "evaluate_attainment",
    "evaluate_lemma1_equality",
    "evaluate_theorem3",
    "evaluate_upper_bound",
    "reproduce_lemma1_equality",
]


#: Rényi orders of the mechanism-level check.
ORDERS = (1.5, 2.0, 4.0)


#: Per-iteration zCDP parameters: the paper's phi^(0) = 0.001 and phi^(300) = 0.001 * 0.99^-300
#: (seed 004 line 1521), plus a random one per instance.
PAPER_PHIS = (0.001, 0.001 * 0.99 ** -300)
#: The declared hardest points of the sensitivity bound and of Theorem III: where Lemma 1's bound is attained.
_ATTAINED = "Huber loss in its linear region, lambda = 0 (Lemma 1's bound attained)"
_EQUALITY = ("the printed '=' (an equality): the claimed value must lie inside the certified bracket of the maximum "
             "over all neighbouring data sets")


def _claimed(record: Mapping[str, Any], sensitivity_fn) -> float:
    C = gradient_bound(record["loss"], record["feature_radius"], record["huber_threshold"])
    return float(sensitivity_fn(C, record["rho"], record["n_samples"]))


def _summary_parameters(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: record[k] for k in ("kind", "loss", "n_samples", "dim", "rho", "lam", "feature_radius")}


def evaluate_lemma1_equality(record: Mapping[str, Any], *, sensitivity_fn=sensitivity_pgfl) -> Evidence:
    r"""Is :math:`\max\lVert w - w'\rVert = ` ``sensitivity_fn(C, rho, D)`` possible at this logistic instance?

    The maximum over all neighbouring data sets lies in [empirical gap - error, certified upper
    bound]. The equality holds only if the claimed value is inside that bracket (widened by
    :math:`\gamma_4` for the rounding of the closed form). ``measured`` is the certified upper bound
    divided by the claimed value.
    """
    claimed = _claimed(record, sensitivity_fn)
    cert = record.get("certified") or certified_logistic_sensitivity(problem_from_record(record),
                                                                      record["feature_radius"])
    lower = record["gap"] - record["gap_error"]
    upper = cert["upper"]
    holds = lower <= claimed * (1.0 + gamma(4)) and claimed * (1.0 - gamma(4)) <= upper
    return Evidence(measured=upper / claimed, bound=1.0, holds=bool(holds),
                    parameters={**_summary_parameters(record), "claimed": claimed, "max_gap_lower": lower,
                                "max_gap_upper": upper, "empirical_ratio": record["gap"] / claimed,
                                "certified_ratio": upper / claimed})


def reproduce_lemma1_equality(counterexample: Mapping[str, Any]) -> Evidence:
    """Re-solve the recorded neighbouring pair and recompute the certified upper bound from scratch."""
    record = dict(counterexample)
    base = problem_from_record(record)
    gap, err, _, _ = solve_neighbour_pairs(base, record["x_old"], record["y_old"], record["x_new"], record["y_new"])
    record.update(gap=float(gap[0]), gap_error=float(err[0]), n_samples=base.n_samples, dim=base.dim)
    record.pop("certified", None)
    return evaluate_lemma1_equality(record)


def _point_holds(record, gap_lo: float, gap_hi: float, bound_lo: float, bound_hi: float) -> tuple[bool, str]:
    """Policy of the module docstring: confirmed / tight (Huber only) / violated."""
    if gap_hi <= bound_lo:
        return True, "strict"
    if record["loss"] == "huber" and gap_lo <= bound_hi:
        return True, "tight"
    return False, "violated"


def evaluate_upper_bound(record: Mapping[str, Any], *, sensitivity_fn=sensitivity_pgfl) -> Evidence:
    r""":math:`\lVert w - w'\rVert \le` ``sensitivity_fn(C, rho, D)`` at the worst pair found.

    ``measured`` = gap / bound.

    The tighter form :math:`2C/((\rho+\mu)D)` of the derivation (docs/papers/pgfl.md#lemma-1;
    :math:`\mu = 2\lambda/|\mathcal C_s|`) is held to the same policy.
    """
    bound = _claimed(record, sensitivity_fn)
    tight = bound * record["rho"] / (record["rho"] + 2.0 * record["lam"] / record["n_server_clients"])
    gap, err = record["gap"], record["gap_error"]
    slack = gamma(4)
    holds, status = _point_holds(record, gap - err, gap + err, bound * (1.0 - slack), bound * (1.0 + slack))
    holds_tight, status_tight = _point_holds(record, gap - err, gap + err, tight * (1.0 - 2 * slack),
                                             tight * (1.0 + 2 * slack))
    return Evidence(measured=gap / bound, bound=1.0, holds=holds and holds_tight,
                    parameters={**_summary_parameters(record), "gap": gap, "gap_error": err, "bound": bound,
                                "status": status, "ratio_to_rho_plus_mu_bound": gap / tight,
                                "status_rho_plus_mu_bound": status_tight})


def evaluate_attainment(record: Mapping[str, Any], *, sensitivity_fn=sensitivity_pgfl) -> Evidence:
    """At a constructed Huber instance the bound must lie inside the certified bracket of the gap."""
    bound = _claimed(record, sensitivity_fn)
    gap, err = record["gap"], record["gap_error"]
    inside = gap - err <= bound * (1.0 + gamma(4)) and bound * (1.0 - gamma(4)) <= gap + err
    return Evidence(measured=gap / bound, bound=1.0, holds=bool(inside),
                    parameters={**_summary_parameters(record), "gap": gap, "gap_error": err, "bound": bound,
                                "status": "attained" if inside else "not attained", HARD_POINT: _ATTAINED})


def evaluate_theorem3(record: Mapping[str, Any], phi_zcdp: float, alpha: float, *, sensitivity_fn=sensitivity_pgfl,
                      sigma_fn=gaussian_sigma_for_zcdp) -> Evidence:
    r"""Rényi divergence of the releases :math:`\mathcal N(w, \delta^2 I)`, :math:`\mathcal N(w', \delta^2 I)` vs
    :math:`\alpha\phi`.

    :math:`\delta` = ``sigma_fn(Delta, phi)`` with :math:`\Delta` = ``sensitivity_fn(C, rho, D)``
    (Theorem III's calibration :math:`\delta^2 = \Delta^2/(2\phi)`). The divergence is evaluated at both
    ends of the gap's bracket; the comparison allows :math:`\gamma_{16}` relative for the closed forms'
    rounding. ``measured`` = divergence (at the gap) / :math:`\alpha\phi`.
    """
    delta = _claimed(record, sensitivity_fn)
    sigma = float(sigma_fn(delta, phi_zcdp))
    gap, err = record["gap"], record["gap_error"]
    lo = renyi_divergence_gaussians(max(gap - err, 0.0), sigma, alpha)
    hi = renyi_divergence_gaussians(gap + err, sigma, alpha)
    target = alpha * phi_zcdp
    slack = gamma(16)
    holds, status = _point_holds(record, lo, hi, target * (1.0 - slack), target * (1.0 + slack))
    return Evidence(measured=renyi_divergence_gaussians(gap, sigma, alpha) / target, bound=1.0, holds=holds,
                    parameters={**_summary_parameters(record), "phi_zcdp": phi_zcdp, "alpha": alpha,
                                "sigma": sigma, "sensitivity": delta, "renyi_upper": hi, "alpha_phi": target,
                                "status": status,
                                **({HARD_POINT: _ATTAINED} if record["kind"] == "huber_attained" else {})})


def _sorted_ratio_figure(name: str, title: str, groups: Mapping[str, list[float]], *, ylabel: str) -> FigureSpec:
    series = []
    n_max = 1
    for label, values in groups.items():
        if values:
            ys = sorted(values)
            n_max = max(n_max, len(ys))
            series.append(Series(label=label, x=range(1, len(ys) + 1), y=ys, style="points"))
    series.append(Series(label="Lemma 1 bound 2C/(rho D)", x=(1, n_max), y=(1.0, 1.0), style="dashed"))
    return FigureSpec(name=name, title=title, xlabel="instance (sorted)", ylabel=ylabel, series=tuple(series))


def check_lemma1_equality(ctx: CheckContext, *, sensitivity_fn=sensitivity_pgfl) -> CheckResult:
    """Bracket the maximum over neighbours at every logistic instance; the paper's value must be inside."""
    records = [r for r in neighbour_gap_records(ctx) if r["loss"] == "logistic"]
    evidence = [evaluate_lemma1_equality(r, sensitivity_fn=sensitivity_fn) for r in records]
    p = PROFILE[ctx.profile]
    norms = np.geomspace(0.3, 100.0, p["sup_points"])
    emp, cert = conditioning_sweep(np.random.default_rng(ctx.seed_sequence(STREAM + ".sweep")), norms)
    figures = (
        _sorted_ratio_figure("tightness_ratios", "PGFL Lemma 1, logistic loss: max ||w - w'|| / (2C/(rho D))",
                             {"empirical (adversarial search, lower limit)":
                                  [e.parameters["max_gap_lower"] / e.parameters["claimed"] for e in evidence],
                              "certified upper bound over all neighbours": [e.measured for e in evidence]},
                             ylabel="ratio to 2C/(rho D)"),
        FigureSpec(name="sup_over_conditioning", title="Logistic, D = 1, lambda = 0: ratio vs ||w_s + phi/rho||",
                   xlabel="||w_s + phi/rho||", ylabel="max ||w - w'|| / (2C/(rho D))", xscale="log",
                   series=(Series(label="adversarial search (lower limit)", x=norms, y=emp, style="points", group="s"),
                           Series(label="certified upper bound", x=norms, y=cert, group="s"),
                           Series(label="Lemma 1 value", x=(norms[0], norms[-1]), y=(1.0, 1.0), style="dashed"))),
    )
    failing = [e for e in evidence if not e.holds]
    emp_ratios = [e.parameters["empirical_ratio"] for e in evidence]
    cert_ratios = [e.measured for e in evidence]
    details = {"points_checked": len(evidence), "points_violated": len(failing),
               "empirical_ratio": {"min": min(emp_ratios), "median": float(np.median(emp_ratios)),
                                   "max": max(emp_ratios), "all": emp_ratios},
               "certified_ratio": {"min": min(cert_ratios), "median": float(np.median(cert_ratios)),
                                   "max": max(cert_ratios), "all": cert_ratios},
               "sup_over_conditioning": {"norms": norms.tolist(), "empirical_lower": emp, "certified_upper": cert},
               "solver_gtol": 1e-11}
    if not failing:
        worst = max(evidence, key=lambda e: abs(e.measured - 1.0))
        return declare_form(CheckResult(claim_id="pgfl.lemma1", verdict=Verdict.CONFIRMED,
                                        summary="the claimed sensitivity lies inside the certified bracket at every "
                                                "instance",
                                        quantity="certified max ||w - w'|| / claimed", measured=worst.measured,
                                        bound=1.0, margin=0.0, seed=ctx.seed, figures=figures, details=details),
                            "identity", _EQUALITY)
    # The counterexample: the paper's own first iteration (deterministic conditioning inputs).
    pairs = list(zip(records, evidence, strict=True))
    paper = [(r, e) for r, e in pairs if r["kind"] == "paper_first_iteration" and not e.holds]
    record, ev = paper[0] if paper else next((r, e) for r, e in pairs if not e.holds)
    counterexample = {k: v for k, v in record.items() if k != "certified"}
    counterexample.update(ev.parameters)
    return declare_form(CheckResult(
        claim_id="pgfl.lemma1", verdict=Verdict.REFUTED,
        summary=(f"max over all neighbours is certified below 2C/(rho D) at {len(failing)} of {len(evidence)} "
                 f"logistic instances (certified ratio {min(cert_ratios):.3g}-{max(cert_ratios):.3g}, "
                 f"adversarial search {min(emp_ratios):.3g}-{max(emp_ratios):.3g}); at the paper's first "
                 f"iteration the ratio is <= {ev.measured:.3g}"),
        quantity="certified max over neighbours of ||w - w'|| / (2C/(rho D))",
        measured=ev.measured, bound=1.0, margin=1.0 - ev.measured, counterexample=counterexample,
        corrected_claim="pgfl.lemma1_upper_bound", seed=ctx.seed, figures=figures, details=details),
        "identity", _EQUALITY)


def check_lemma1_upper_bound(ctx: CheckContext, *, sensitivity_fn=sensitivity_pgfl) -> CheckResult:
    """Every worst pair found obeys the bound; at constructed Huber instances the bound is attained."""
    records = neighbour_gap_records(ctx)
    evidence = [evaluate_attainment(r, sensitivity_fn=sensitivity_fn) if r["kind"] == "huber_attained"
                else evaluate_upper_bound(r, sensitivity_fn=sensitivity_fn) for r in records]
    groups = {"logistic (adversarial)": [], "Huber (adversarial)": [], "Huber, constructed (lambda = 0)": []}
    for r, e in zip(records, evidence, strict=True):
        key = ("Huber, constructed (lambda = 0)" if r["kind"] == "huber_attained"
               else "logistic (adversarial)" if r["loss"] == "logistic" else "Huber (adversarial)")
        groups[key].append(e.measured)
    attained = [e for r, e in zip(records, evidence, strict=True) if r["kind"] == "huber_attained"]
    figure = _sorted_ratio_figure("gap_ratios", "PGFL Lemma 1 as an upper bound: ||w - w'|| / (2C/(rho D))", groups,
                                  ylabel="ratio to 2C/(rho D)")
    status = [e.parameters["status"] for e in evidence]
    return result_from_evidence(
        "pgfl.lemma1_upper_bound", evidence, ctx=ctx,
        quantity="||w - w'|| / (2C/(rho D)) (solver-certified bracket; attained points must contain 1)",
        what="||w - w'|| <= 2C/(rho D), attained for Huber (linear region, lambda = 0)", figures=[figure],
        details={"ratio_by_group": {k: {"min": min(v), "max": max(v), "n": len(v)} for k, v in groups.items() if v},
                 "status_counts": {s: status.count(s) for s in sorted(set(status))},
                 "max_ratio_to_rho_plus_mu_bound": max(e.parameters.get("ratio_to_rho_plus_mu_bound", 0.0)
                                                       for e in evidence),
                 "attained_bracket_halfwidth_rel": max(e.parameters["gap_error"] / e.parameters["bound"]
                                                       for e in attained),
                 "solver_gtol": 1e-11,
                 "error_propagation": "|gap - true gap| <= (||grad F||/(rho+mu)) x 2 + gamma(d+4) gap"})


def check_theorem3(ctx: CheckContext, *, sensitivity_fn=sensitivity_pgfl,
                   sigma_fn=gaussian_sigma_for_zcdp) -> CheckResult:
    """Mechanism level: D_alpha of the two releases at the Lemma 1 gaps, noise from Theorem III."""
    records = neighbour_gap_records(ctx)
    rng = np.random.default_rng(ctx.seed_sequence("pgfl.theorem3"))
    evidence = []
    for r in records:
        for phi in (*PAPER_PHIS, float(10.0 ** rng.uniform(-4.0, 1.0))):
            evidence += [evaluate_theorem3(r, phi, a, sensitivity_fn=sensitivity_fn, sigma_fn=sigma_fn) for a in ORDERS]
    series = []
    for a in ORDERS:
        pts = [(e.parameters["alpha_phi"], e.measured * e.parameters["alpha_phi"]) for e in evidence
               if e.parameters["alpha"] == a]
        series.append(Series(label=f"D_alpha of the two releases, alpha = {a:g}", x=[p[0] for p in pts],
                             y=[p[1] for p in pts], style="points"))
    lim = [min(e.parameters["alpha_phi"] for e in evidence), max(e.parameters["alpha_phi"] for e in evidence)]
    series.append(Series(label="alpha phi (Theorem III)", x=lim, y=lim, style="dashed"))
    figure = FigureSpec(name="renyi_vs_alpha_phi", title="PGFL Theorem III: Rényi divergence of one release",
                        xlabel="alpha phi", ylabel="D_alpha", xscale="log", yscale="log", series=tuple(series))
    return result_from_evidence(
        "pgfl.theorem3", evidence, ctx=ctx,
        quantity="D_alpha(N(w, delta^2 I) || N(w', delta^2 I)) / (alpha phi), delta^2 = Delta^2/(2 phi)",
        what="D_alpha <= alpha phi at alpha in {1.5, 2, 4}", figures=[figure],
        details={"orders": list(ORDERS), "paper_phis": list(PAPER_PHIS), "gap_records": len(records)})


_CITE_LEMMA1 = (
    cite(label="Definition 1 and Lemma 1", equation="(41), (42), (45)", lines="338-370"),
    cite(label="Lemma 5.1", equation="(5.31)", lines="1460-1465", seed=SEED_THESIS),
    cite(label="Appendix E (journal text), Lemma 1", equation="(43), (46)", lines="3214-3219", seed=SEED_THESIS),
)

CLAIMS = (
    Claim(
        id="pgfl.lemma1",
        title="Lemma 1: the sensitivity equals 2C_k/(rho D_k)",
        citations=_CITE_LEMMA1,
        statement=("Under Assumption 3, the l2 sensitivity of client k's primal update (4), the maximum over "
                   "replace-one neighbouring data sets of ||w_{k,D_k} - w_{k,D_l}|| for the same conditioning "
                   "inputs (w_{s,(q)}^(n-1), phi_k^(n-1)), is Delta_{k,2}^(n) = 2C_k/(rho D_k)."),
        hypotheses=("per-sample loss convex with ||grad l|| <= C_k (Assumption 3); logistic with ||x|| <= B, C_k = B",
                    "R(w) = ||w||^2, lambda >= 0, rho > 0", "neighbours differ in the last sample"),
        check=check_lemma1_equality,
        expected=Verdict.REFUTED,
        reason=("Only '<=' holds. For the logistic loss a certificate valid for every neighbouring pair "
                "(strong monotonicity plus the exact diameter of the logistic gradient set) puts the maximum "
                "strictly below 2C/(rho D) at every instance; at the paper's first iteration (w = 0, phi = 0, "
                "rho = 1, B = 1) it is at most ~0.55 of it. The bound is only the supremum over unbounded "
                "conditioning inputs (lambda = 0), and is attained for Huber (docs/papers/pgfl.md#lemma-1, "
                "#erratum-r-c). "
                "The seed prints '=' (000 eq. (42)) while its own proof and Theorem III only use '<='. "
                "Policy for a printed '=' where '<=' is meant (applied to pgfl.lemma1 and zcdp_nfl.lemma1 alike): "
                "the verdict is on the relation as printed, so '=' is refuted when some admissible instance gives "
                "'<', and the severity is 'typo' when the '<=' form holds, is attained in the hypothesis class and is "
                "what the paper uses."),
        severity="typo",
        reproduce=reproduce_lemma1_equality,
        corrected_by="pgfl.lemma1_upper_bound",
    ),
    Claim(
        id="pgfl.lemma1_upper_bound",
        title="Lemma 1 corrected: ||w - w'|| <= 2C_k/(rho D_k), attained for Huber",
        citations=_CITE_LEMMA1,
        statement=("Corrected statement: under Assumptions 1 and 3, for the same conditioning inputs, "
                   "||w_{k,D_k} - w_{k,D_l}|| <= 2C_k/((rho + mu_k) D_k) <= 2C_k/(rho D_k) for replace-one "
                   "neighbours, mu_k = 2 lambda/|C_s|. The constant cannot be improved under Assumption 3 alone: "
                   "it is attained by the Huber loss in its linear region (with lambda = 0 for 2C_k/(rho D_k))."),
        hypotheses=("per-sample loss convex, ||grad l|| <= C_k", "R(w) = ||w||^2, lambda >= 0, rho > 0",
                    "exact minimisers of (4) (solver-certified to gradient norm 1e-11)"),
        check=check_lemma1_upper_bound,
        expected=Verdict.CONFIRMED,
        reason=("(4) is (rho + mu)-strongly convex and swapping one sample changes its gradient by at most "
                "2C/D; the adversarial search never exceeds the bound and the constructed Huber instances "
                "attain it within solver tolerance (docs/papers/pgfl.md#lemma-1, #erratum-r-c): slack ratio 1 at "
                "the declared hardest points, so the constant cannot be improved under Assumption 3."),
        corrects="pgfl.lemma1",
    ),
    Claim(
        id="pgfl.theorem3",
        title="Theorem III: noise variance Delta^2/(2 phi) gives phi-zCDP per iteration",
        citations=(cite(label="Theorem III", equation="(46)-(50)", lines="374-398"),
                   cite(label="Theorem 5.3", equation="(5.32)", lines="1471-1474", seed=SEED_THESIS),
                   cite(label="Appendix E (journal text), Theorem III", equation="(47)",
                            lines="3243-3246", seed=SEED_THESIS)),
        statement=("Under Assumption 3, releasing w_k^(n) + N(0, delta_k^{2(n)} I) with "
                   "delta_k^{2(n)} = Delta_{k,2}^2/(2 phi_k^(n)) is phi_k^(n)-zCDP for one iteration: the Rényi "
                   "divergence of the releases on neighbouring data sets is at most alpha phi_k^(n)."),
        hypotheses=("Delta = 2C/(rho D) (valid as an upper bound, pgfl.lemma1_upper_bound)",
                    "same conditioning inputs for both data sets (one release, conditional on public state)",
                    "alpha in {1.5, 2, 4}"),
        check=check_theorem3,
        expected=Verdict.CONFIRMED,
        reason=("D_alpha = alpha ||w - w'||^2/(2 delta^2) (Bun & Steinke Lemma 2.4, checked in dp.gaussian_zcdp) "
                "and ||w - w'|| <= Delta; it is attained at the Huber instances, so the calibration has no slack. "
                "Version A's proof drops the square on Delta in its last line (docs/papers/pgfl.md#erratum-e8); "
                "(46) itself is right."),
    ),
)
