"""Turn the evidence a check gathered over many parameter points into one CheckResult."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from verify.executor import map_seeded
from verify.records import CheckContext, CheckResult, Evidence, FigureSpec, MonteCarlo, Verdict

__all__ = ["FORMS", "HARD_POINT", "NEARLY_TIGHT", "SIDES", "bound_tightness", "declare_form", "report_counterexample",
           "result_from_evidence", "sample_evidence", "tightness_line", "with_minimal_counterexample", "worst"]

#: What kind of statement a result decides, recorded as ``details["form"]`` (with ``details["form_reason"]`` for every
#: form but ``bound``). Only a ``bound`` carries ``details["tightness"]``; the registry test
#: (``tests/verify/test_tightness.py``) requires it on every confirmed bound. A decision or identity whose statement
#: still has a margin reports it under one of ``reports.formatting.SLACK_KEYS`` (a sufficient condition's
#: ``condition_slack``, an ordering's ``ordering_tightness``, a range's ``boundary_attained``, a monotone sequence's
#: ``monotonicity_margin``), which the report card shows beside the tightness row.
FORMS = {
    "bound": "a one-sided inequality of the paper (measured side <= bound side)",
    "identity": "an equality (closed form = computation) checked to a rounding or solver tolerance",
    "decision": "a yes/no property (an outcome, a count, an implication) with no slack to measure",
    "rate": "a fitted rate (slope and its confidence interval)",
    "experiment": "a paired comparison of algorithms (verify.harness)",
}
#: A bound is *nearly tight* on a point where measured side / bound side >= this; below it at every point checked the
#: result says "never nearly tight" (the bound was never tried where it is hard, or it is loose everywhere).
NEARLY_TIGHT = 0.5
#: Evidence parameter naming the paper's two sides ``(lhs, rhs)`` of a bound when ``measured``/``bound`` are a
#: difference or a confidence limit (e.g. ``measured`` = UCL of E[LHS - RHS] against 0); ``None`` marks a point that
#: is not a bound point (e.g. a termination count recorded beside the bound's points), left out of the tightness.
SIDES = "sides"
#: Evidence parameter marking a point as one of the claim's declared hardest points (the noise-free or limiting case of
#: a term, the boundary of a hypothesis); its value says which.
HARD_POINT = "hard_point"


def sample_evidence(ctx: CheckContext, claim_id: str, batch_fn, n_batches: int, args=()) -> list[Evidence]:
    """Run ``batch_fn(rng, *args) -> list[Evidence]`` for ``n_batches`` seeded batches and concatenate.

    Batches go through ``ctx.executor`` with generators spawned from ``ctx.seed_sequence(claim_id)``,
    so the evidence is the same on every executor.
    """
    batches = map_seeded(ctx.executor, batch_fn, ctx.seed_sequence(claim_id), n_batches, args)
    return [e for batch in batches for e in batch]


def _severity(e: Evidence) -> float:
    """How close to (or past) its bound one point is: measured/bound, or measured-bound if bound <= 0."""
    if e.bound > 0 and math.isfinite(e.bound):
        return e.measured / e.bound
    return e.measured - e.bound


def worst(evidence: Sequence[Evidence]) -> Evidence:
    """The failing point with the largest severity, else the passing point closest to its bound."""
    if not evidence:
        raise ValueError("evidence must hold at least one point")
    failing = [e for e in evidence if not e.holds]
    return max(failing or evidence, key=_severity)


def _sides(e: Evidence) -> tuple[float, float] | None:
    """The (measured side, bound side) of one point: ``parameters["sides"]`` if given, else (measured, bound)."""
    if SIDES in e.parameters and e.parameters[SIDES] is None:  # declared: this point is not a bound point
        return None
    sides = e.parameters.get(SIDES)
    lhs, rhs = (float(sides[0]), float(sides[1])) if sides is not None else (e.measured, e.bound)
    if not (math.isfinite(lhs) and math.isfinite(rhs)) or rhs <= 0.0:
        return None
    return lhs, rhs


def bound_tightness(evidence: Sequence[Evidence], threshold: float = NEARLY_TIGHT) -> dict[str, Any]:
    r"""How tight a bound is over the points checked: the largest ratio measured side / bound side.

    The *slack ratio* of a point is :math:`r = \text{lhs}/\text{rhs}` (its two sides from ``parameters["sides"]``
    when given, else ``measured``/``bound``), defined where the bound side is positive and finite; the bound's
    tightness is :math:`\max r` over those points, i.e. its smallest relative slack :math:`1 - \max r`, with the
    point where it is attained. ``nearly_tight`` is ``max r >= threshold``; ``False`` is reported as "never nearly
    tight". Points marked ``parameters["hard_point"]`` (the claim's declared hardest points) get their own maximum.
    A violated point has :math:`r > 1`.
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    rated = [(s[0] / s[1], e) for e in evidence if (s := _sides(e)) is not None]
    out: dict[str, Any] = {"definition": "max over points of measured side / bound side (bound side > 0)",
                           "threshold": threshold, "points_rated": len(rated), "points_checked": len(evidence)}
    if not rated:
        return {**out, "ratio": None, "nearly_tight": None,
                "reason": "no point has a positive finite bound side, so no slack ratio is defined"}
    ratio, at = max(rated, key=lambda pair: pair[0])
    out.update(ratio=float(ratio), slack=float(1.0 - ratio), nearly_tight=bool(ratio >= threshold),
               attained_at={k: v for k, v in at.parameters.items() if k != SIDES})
    hard = [(r, e) for r, e in rated if e.parameters.get(HARD_POINT)]
    if hard:
        hard_ratio, hard_at = max(hard, key=lambda pair: pair[0])
        out["hard_points"] = {"points": len(hard), "ratio": float(hard_ratio),
                              "attained_at": str(hard_at.parameters[HARD_POINT]),
                              "labels": sorted({str(e.parameters[HARD_POINT]) for _, e in hard})}
    return out


def tightness_line(tightness: Mapping[str, Any] | None) -> str:
    """One line for a report card: the tightest ratio, where, and the "never nearly tight" flag."""
    if not tightness:
        return ""
    if tightness.get("ratio") is None:
        return f"tightness not defined: {tightness.get('reason', '')}"
    at = tightness.get("attained_at") or {}
    where = ", ".join(f"{k} = {v}" for k, v in list(at.items())[:6] if not isinstance(v, (dict, list, tuple)))
    ratio = tightness["ratio"]
    digits = 7 if abs(ratio - tightness["threshold"]) < 1e-3 else 4  # never print 0.4999999 as "0.5 < 0.5"
    line = (f"tightest measured/bound = {ratio:.{digits}g} over {tightness['points_rated']} points"
            + (f" (at {where})" if where else ""))
    hard = tightness.get("hard_points")
    if hard:
        line += f"; at the hardest points ({', '.join(hard['labels'])}): {hard['ratio']:.4g}"
    if not tightness["nearly_tight"]:
        line += f" — never nearly tight (ratio < {tightness['threshold']:g} at every point checked)"
    return line


def declare_form(result: CheckResult, form: str, reason: str = "", tightness: Mapping[str, Any] | None = None
                 ) -> CheckResult:
    """Record what a result decides (``details["form"]``, one of :data:`FORMS`) on a result built by hand.

    A ``bound`` needs its ``tightness`` (:func:`bound_tightness`); every other form a one-line ``reason`` saying why it
    is not a bound.
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {', '.join(FORMS)}, got {form!r}")
    if form == "bound" and tightness is None:
        raise ValueError("a bound result needs its tightness (verify.evidence.bound_tightness)")
    if form != "bound" and not reason:
        raise ValueError(f"form {form!r} needs a reason saying why the result is not a bound")
    extra: dict[str, Any] = {"form": form}
    if form == "bound":
        extra["tightness"] = dict(tightness)
    else:
        extra["form_reason"] = reason
    return dataclasses.replace(result, details={**result.details, **extra})


def result_from_evidence(
    claim_id: str,
    evidence: Sequence[Evidence],
    *,
    ctx: CheckContext,
    quantity: str,
    what: str,
    figures: Sequence[FigureSpec] = (),
    corrected_claim: str | None = None,
    monte_carlo: MonteCarlo | None = None,
    details: Mapping[str, Any] | None = None,
    form: str = "bound",
    form_reason: str = "",
) -> CheckResult:
    """``confirmed`` if every point holds, otherwise ``refuted`` with the worst point as counterexample.

    ``what`` names the property in the one-line summary, e.g. "sum form = product form". ``form`` (one of
    :data:`FORMS`) says what the evidence decides; a ``bound`` (the default: every point is a measured value against
    its bound) records ``details["tightness"]`` (:func:`bound_tightness`), any other form needs ``form_reason``.
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {', '.join(FORMS)}, got {form!r}")
    if form != "bound" and not form_reason:
        raise ValueError(f"form {form!r} needs a form_reason saying why the result is not a bound")
    w = worst(evidence)
    n_fail = sum(not e.holds for e in evidence)
    verdict = Verdict.REFUTED if n_fail else Verdict.CONFIRMED
    if n_fail:
        summary = f"{what}: violated at {n_fail} of {len(evidence)} points; worst {w.measured:.6g} > {w.bound:.6g}"
    else:
        summary = f"{what}: holds at all {len(evidence)} points; worst {w.measured:.6g} <= {w.bound:.6g}"
        if form == "bound" and bound_tightness(evidence)["nearly_tight"] is False:
            summary += f"; never nearly tight (measured/bound < {NEARLY_TIGHT:g} at every point)"
    return CheckResult(
        claim_id=claim_id,
        verdict=verdict,
        summary=summary,
        quantity=quantity,
        measured=w.measured,
        bound=w.bound,
        margin=w.bound - w.measured,
        counterexample=dict(w.parameters) if n_fail else None,
        corrected_claim=corrected_claim,
        monte_carlo=monte_carlo,
        seed=ctx.seed,
        figures=tuple(figures),
        details={"points_checked": len(evidence), "points_violated": n_fail, "form": form,
                 **({"tightness": bound_tightness(evidence)} if form == "bound" else {"form_reason": form_reason}),
                 **(details or {})},
    )


def report_counterexample(result: CheckResult, chosen: Evidence, description: str) -> CheckResult:
    """Report ``chosen`` (a violating point) as the counterexample of a refuted result.

    :func:`result_from_evidence` reports the most severe violation; for an erratum a minimal point, or
    the paper's own parameters, is the more useful counterexample. The most severe one is kept in
    ``details["most_severe_counterexample"]``. Nothing changes unless the result is refuted and
    ``chosen`` itself violates the claim.
    """
    if result.verdict is not Verdict.REFUTED or chosen.holds:
        return result
    details = {**result.details, "most_severe_counterexample": result.counterexample,
               "counterexample_choice": description}
    summary = (f"{result.summary}; reported counterexample: {description} "
               f"(measured {chosen.measured:.6g} > {chosen.bound:.6g})")
    return dataclasses.replace(result, summary=summary, counterexample=dict(chosen.parameters),
                               measured=chosen.measured, bound=chosen.bound, margin=chosen.bound - chosen.measured,
                               details=details)


def with_minimal_counterexample(result: CheckResult, evidence: Sequence[Evidence],
                                size: Callable[[Evidence], float], label: str) -> CheckResult:
    """Report the *smallest* violating point (by ``size``) as the counterexample of a refuted result."""
    failing = [e for e in evidence if not e.holds]
    if result.verdict is not Verdict.REFUTED or not failing:
        return result
    minimal = min(failing, key=size)
    return report_counterexample(result, minimal,
                                 f"smallest {label} among the violating points: {label} = {size(minimal):g}")
