"""Run registered claims' checks and turn every outcome, exceptions included, into a CheckResult."""

from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Callable, Iterable

from verify.records import CheckContext, CheckResult, Claim, Verdict

__all__ = ["run_claim", "run_claims"]


def run_claim(claim: Claim, ctx: CheckContext) -> CheckResult:
    """Run one claim's check; an exception becomes an ``error`` verdict carrying its traceback."""
    start = time.perf_counter()
    try:
        result = claim.check(ctx)
        if not isinstance(result, CheckResult):
            raise TypeError(f"check of {claim.id} returned {type(result).__name__}, not CheckResult")
        if result.claim_id != claim.id:
            raise ValueError(f"check of {claim.id} returned a result for {result.claim_id!r}")
    except Exception as exc:  # noqa: BLE001 - every failure must reach the report
        return CheckResult(
            claim_id=claim.id,
            verdict=Verdict.ERROR,
            summary=f"check raised {type(exc).__name__}: {exc}",
            seed=ctx.seed,
            error=traceback.format_exc(),
            runtime_s=time.perf_counter() - start,
        )
    return dataclasses.replace(result, runtime_s=time.perf_counter() - start)


def run_claims(
    claims: Iterable[Claim],
    ctx: CheckContext,
    on_done: Callable[[CheckResult], None] | None = None,
) -> list[CheckResult]:
    """Run claims in order; ``on_done`` is called after each (progress bars hook in here)."""
    results = []
    for claim in claims:
        result = run_claim(claim, ctx)
        results.append(result)
        if on_done is not None:
            on_done(result)
    return results
