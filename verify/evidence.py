"""Turn the evidence a check gathered over many parameter points into one CheckResult."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from verify.executor import map_seeded
from verify.records import CheckContext, CheckResult, Evidence, FigureSpec, MonteCarlo, Verdict

__all__ = ["report_counterexample", "result_from_evidence", "sample_evidence", "with_minimal_counterexample", "worst"]


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
) -> CheckResult:
    """``confirmed`` if every point holds, otherwise ``refuted`` with the worst point as counterexample.

    ``what`` names the property in the one-line summary, e.g. "sum form = product form".
    """
    w = worst(evidence)
    n_fail = sum(not e.holds for e in evidence)
    verdict = Verdict.REFUTED if n_fail else Verdict.CONFIRMED
    if n_fail:
        summary = f"{what}: violated at {n_fail} of {len(evidence)} points; worst {w.measured:.6g} > {w.bound:.6g}"
    else:
        summary = f"{what}: holds at all {len(evidence)} points; worst {w.measured:.6g} <= {w.bound:.6g}"
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
        details={"points_checked": len(evidence), "points_violated": n_fail, **(details or {})},
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
    summary = f"{result.summary}; reported counterexample: {description} (measured {chosen.measured:.6g} > {chosen.bound:.6g})"
    return dataclasses.replace(result, summary=summary, counterexample=dict(chosen.parameters), measured=chosen.measured,
                               bound=chosen.bound, margin=chosen.bound - chosen.measured, details=details)


def with_minimal_counterexample(result: CheckResult, evidence: Sequence[Evidence],
                                size: Callable[[Evidence], float], label: str) -> CheckResult:
    """Report the *smallest* violating point (by ``size``) as the counterexample of a refuted result."""
    failing = [e for e in evidence if not e.holds]
    if result.verdict is not Verdict.REFUTED or not failing:
        return result
    minimal = min(failing, key=size)
    return report_counterexample(result, minimal, f"smallest {label} among the violating points: {label} = {size(minimal):g}")
