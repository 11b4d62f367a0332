"""Run registered claims' checks and turn every outcome, exceptions included, into a CheckResult."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from verify.cache import ResultCache
from verify.executor import ProcessExecutor, blas_threads_per_worker, measure_cpu
from verify.records import CheckContext, CheckResult, Claim, Verdict

__all__ = ["RUNTIME_HINTS", "run_claim", "run_claims", "runtime_hints"]

#: Costs (s) per claim measured by a full report at each profile (CPU time where measured, else runtime), shipped so
#: that a report on a fresh clone (no cache yet) still starts the longest units first; the cache's own measurements
#: take precedence.
RUNTIME_HINTS = Path(__file__).with_name("runtime_hints.json")


def runtime_hints(profile: str) -> dict[str, float]:
    """The shipped runtime of every claim at ``profile`` (empty if the file or the profile is missing)."""
    try:
        data = json.loads(RUNTIME_HINTS.read_text(encoding="utf-8")).get(profile, {})
    except (OSError, ValueError, AttributeError):
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


def run_claim(claim: Claim, ctx: CheckContext, *, alone: bool = True) -> CheckResult:
    """Run one claim's check; an exception becomes an ``error`` verdict carrying its traceback.

    The result's ``runtime_s`` is wall time; its ``cpu_s`` the CPU time of the check (this thread's, or this
    process's when ``alone`` (no other claim runs in the process meanwhile), plus its runs in worker processes):
    unlike wall time, it does not grow while the check waits for workers busy with other claims' runs.
    """
    start = time.perf_counter()
    with measure_cpu(whole_process=alone) as meter:
        result = _checked(claim, ctx)
    return dataclasses.replace(result, runtime_s=time.perf_counter() - start, cpu_s=meter.seconds)


def _checked(claim: Claim, ctx: CheckContext) -> CheckResult:
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
        )
    return result


def _units(claims: list[Claim], runtimes: dict[str, float]) -> list[list[int]]:
    """Claims grouped by their check's module (claims of one module share its caches, e.g. an experiment family's
    arms), longest expected unit first (last measured runtimes; unknown claims count as the median known one)."""
    known = sorted(runtimes.values())
    default = known[len(known) // 2] if known else 1.0
    groups: dict[str, list[int]] = {}
    for index, claim in enumerate(claims):
        groups.setdefault(claim.check.__module__, []).append(index)
    cost = {m: sum(runtimes.get(claims[i].id, default) for i in idx) for m, idx in groups.items()}
    return [groups[m] for m in sorted(groups, key=lambda m: -cost[m])]


def _registered(claims: list[Claim]) -> bool:
    """Whether every claim is the registry's own (a worker process can look it up by id)."""
    from verify.registry import all_claims

    registry = {c.id: c for c in all_claims()}
    return all(registry.get(c.id) is c for c in claims)


def _run_unit(task: tuple) -> list[CheckResult]:
    """A worker process's job: the registered claims ``ids`` in turn, on a serial executor (the unit has the worker's
    core to itself); a claim's numbers do not depend on the executor."""
    ids, profile, seed, data = task
    from verify.registry import get_claim

    ctx = CheckContext(profile=profile, seed=seed, data=dict(data))
    return [run_claim(get_claim(claim_id), ctx) for claim_id in ids]


class _Store:
    """The result cache as the runner uses it: the run's profile, seed and data bound once, no cache a no-op, writes
    serialised (claims may finish on several threads)."""

    def __init__(self, cache: ResultCache | None, ctx: CheckContext):
        self.cache, self.ctx, self.lock = cache, ctx, threading.Lock()

    def get(self, claim: Claim) -> CheckResult | None:
        return None if self.cache is None else self.cache.get(claim, self.ctx.profile, self.ctx.seed, self.ctx.data)

    def put(self, claim: Claim, result: CheckResult) -> None:
        if self.cache is not None:
            with self.lock:
                self.cache.put(claim, self.ctx.profile, self.ctx.seed, result, self.ctx.data)


def _run_units_in_workers(claims, units, ctx: CheckContext, results: list, store: _Store, on_done,
                          parallel: int) -> None:
    """Each unit (a check module's claims, which share its caches) as one job of the executor's worker processes,
    the longest first, at most ``parallel`` at a time: a closed-form check then has a core of its own instead of
    sharing this process's GIL, and the workers stay busy until the queue is empty (longest-processing-time-first
    list scheduling). Cached claims are taken from the cache here and not sent."""
    queue = []
    for unit in units:
        todo = []
        for index in unit:
            cached = store.get(claims[index])
            if cached is None:
                todo.append(index)
            else:
                results[index] = cached
                if on_done is not None:
                    on_done(cached)
        if todo:
            queue.append(todo)
    queue.reverse()  # pop() takes the longest unit first
    pending = {}
    while queue or pending:
        while queue and len(pending) < parallel:
            todo = queue.pop()
            task = (tuple(claims[i].id for i in todo), ctx.profile, ctx.seed, tuple(ctx.data.items()))
            pending[ctx.executor.submit(_run_unit, task)] = todo
        finished, _ = wait(pending, return_when=FIRST_COMPLETED)
        for future in finished:
            todo = pending.pop(future)
            try:
                done = future.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker (killed, out of memory) errs its unit's claims
                done = [CheckResult(claim_id=claims[i].id, verdict=Verdict.ERROR, seed=ctx.seed,
                                    summary=f"the worker process running this claim failed: {type(exc).__name__}: "
                                            f"{exc}", error=traceback.format_exc()) for i in todo]
            for index, result in zip(todo, done, strict=True):
                results[index] = result
                store.put(claims[index], result)
                if on_done is not None:
                    on_done(result)


def run_claims(
    claims: Iterable[Claim],
    ctx: CheckContext,
    on_done: Callable[[CheckResult], None] | None = None,
    *,
    cache: ResultCache | None = None,
    parallel: int = 1,
) -> list[CheckResult]:
    """Run claims; the results come back in the order of ``claims``.

    ``cache``: reuse a stored result whose claim, profile, seed and code digest match (:mod:`verify.cache`), and
    store new ones. ``parallel`` > 1 runs groups of claims at once, the longest groups first: with a
    :class:`~verify.executor.ProcessExecutor` and registered claims each group is one job of its worker processes
    (each group on a serial executor there, at most ``parallel`` groups in flight); otherwise ``parallel`` threads
    share ``ctx.executor``, so a check's own parallel runs still go to the worker processes. The numbers do not
    depend on it, since every claim draws from its own seed. ``on_done`` is called after each claim (progress bars
    hook in here), from one thread at a time.
    """
    claims = list(claims)
    if isinstance(parallel, bool) or not isinstance(parallel, int) or parallel < 1:
        raise ValueError(f"parallel must be an integer >= 1, got {parallel!r}")
    results: list[CheckResult | None] = [None] * len(claims)
    lock = threading.Lock()
    store = _Store(cache, ctx)

    def one(index: int) -> None:
        claim = claims[index]
        result = store.get(claim)
        if result is None:
            result = run_claim(claim, ctx, alone=parallel == 1)
            store.put(claim, result)
        results[index] = result
        if on_done is not None:
            with lock:
                on_done(result)

    units = _units(claims, runtime_hints(ctx.profile) | (cache.runtimes(ctx.profile) if cache is not None else {}))
    if parallel == 1 or len(units) == 1:
        for index in range(len(claims)):
            one(index)
    elif isinstance(ctx.executor, ProcessExecutor) and _registered(claims):
        _run_units_in_workers(claims, units, ctx, results, store, on_done, parallel)
    else:
        from threadpoolctl import threadpool_limits

        ctx.executor.map(abs, [0, 0])  # start the executor's workers before the threads share it
        # the claim threads share this process's BLAS threads: as many as a worker's, so that the threads and the
        # pool's workers do not run more threads than cores (numbers do not depend on it)
        with (threadpool_limits(limits=blas_threads_per_worker(parallel)),
              ThreadPoolExecutor(max_workers=parallel) as pool):
            for future in [pool.submit(lambda idx=idx: [one(i) for i in idx]) for idx in units]:
                future.result()
    return results
