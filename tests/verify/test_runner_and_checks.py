"""The runner turns failures into records, and every registered check can fail (mutation tests)."""

import dataclasses
import time

import numpy as np
import pytest

from theory.bounds import intercluster_bound
from theory.privacy import gaussian_zcdp
from verify.dp.gaussian_zcdp import check_gaussian_zcdp
from verify.executor import ProcessExecutor
from verify.pgfl.theorem2_bound import check_bound_identity, check_corollary_value
from verify.records import CheckContext, CheckResult, Citation, Claim, Verdict
from verify.registry import all_claims
from verify.runner import _units, run_claim, run_claims, runtime_hints


def raising_check(ctx):
    raise RuntimeError("solver diverged")


def wrong_id_check(ctx):
    return CheckResult(claim_id="toy.other", verdict=Verdict.CONFIRMED, summary="s")


def _claim(check):
    return Claim(id="toy.c", paper="toy", title="t", citations=(Citation(external="x", label="y"),),
                 statement="s", hypotheses=(), check=check, expected=Verdict.CONFIRMED, reason="r")


@pytest.mark.parametrize(("check", "text"), [(raising_check, "RuntimeError: solver diverged"),
                                             (wrong_id_check, "returned a result for 'toy.other'")])
def test_failures_become_error_records_with_traceback(check, text):
    seen = []
    [result] = run_claims([_claim(check)], CheckContext(seed=3), on_done=seen.append)
    assert result.verdict is Verdict.ERROR and text in result.summary
    assert "Traceback" in result.error and result.seed == 3 and seen == [result]


def test_runtime_is_recorded():
    claim = _claim(lambda ctx: CheckResult(claim_id="toy.c", verdict=Verdict.CONFIRMED, summary="s"))
    result = run_claim(claim, CheckContext())
    assert result.runtime_s >= 0.0 and result.cpu_s >= 0.0


def _burn(seconds: float) -> float:
    """Spin for ``seconds`` of this process's CPU time."""
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
    return seconds


def _burning_check(ctx):
    ctx.executor.map(_burn, [0.4, 0.4])
    return CheckResult(claim_id="toy.c", verdict=Verdict.CONFIRMED, summary="s")


@pytest.mark.parametrize("parallel", [1, 2])
def test_cpu_time_counts_the_runs_a_check_hands_to_workers(parallel):
    """A check that only waits for two worker runs of 0.4 s CPU each costs at least 0.8 s CPU, though its own
    thread is idle meanwhile (its runtime, wall time, is about half that on two workers)."""
    with ProcessExecutor(2, blas_threads=1) as executor:
        ctx = CheckContext(executor=executor)
        run_claims([_claim(check_gaussian_zcdp)], ctx)  # start the workers outside the measured claim
        other = dataclasses.replace(_claim(check_gaussian_zcdp), id="toy.z")  # another module: run side by side
        result, _ = run_claims([_claim(_burning_check), other], ctx, parallel=parallel)
    assert result.verdict is Verdict.CONFIRMED and 0.8 <= result.cpu_s < 0.8 + 0.6


def test_registered_claims_run_as_whole_units_in_worker_processes_with_the_same_numbers(tmp_path):
    """With a process pool, each unit of registered claims is one job of a worker (no claim shares the report's GIL):
    the results are those of a serial run (the numbers do not depend on where a claim runs), each with its CPU time,
    in the claims' order, and they reach the cache and the progress hook."""
    from verify.cache import ResultCache
    from verify.registry import get_claim

    claims = [get_claim(i) for i in ("dp.gaussian_zcdp", "dp.zcdp_conversion.ordering", "pgfl.theorem2_limit_identity")]
    serial = run_claims(claims, CheckContext(seed=2))
    seen = []
    with ProcessExecutor(2, blas_threads=1) as executor:
        pooled = run_claims(claims, CheckContext(seed=2, executor=executor), parallel=2, on_done=seen.append,
                            cache=ResultCache(tmp_path))
    assert [r.claim_id for r in pooled] == [c.id for c in claims] and sorted(seen, key=str) == sorted(pooled, key=str)
    for a, b in zip(serial, pooled, strict=True):
        assert (a.verdict, a.measured, a.bound, a.summary) == (b.verdict, b.measured, b.bound, b.summary)
        assert b.cpu_s is not None and b.cpu_s > 0
    assert set(ResultCache(tmp_path).runtimes("ci")) == {c.id for c in claims}


def test_units_in_worker_processes_respect_parallel():
    """``parallel`` caps the units in flight even when the pool has more workers (three workers, parallel = 2: never
    a third unit submitted while two run), and every claim still gets its result."""
    from verify.registry import get_claim

    claims = [get_claim(i) for i in ("dp.gaussian_zcdp", "dp.zcdp_conversion.ordering", "pgfl.theorem2_limit_identity")]
    running_at_submit, futures = [], []
    with ProcessExecutor(3, blas_threads=1) as executor:
        submit = executor.submit

        def counting(*args, **kwargs):
            running_at_submit.append(sum(not f.done() for f in futures))
            futures.append(submit(*args, **kwargs))
            return futures[-1]

        executor.submit = counting
        results = run_claims(claims, CheckContext(seed=2, executor=executor), parallel=2)
    assert len(futures) == 3 and max(running_at_submit) <= 1
    assert [r.claim_id for r in results] == [c.id for c in claims] and all(r.cpu_s for r in results)


def test_shipped_runtime_hints_name_registered_claims_and_order_units():
    """The shipped hints (a fresh clone has no cache) cover registered claims only, and the longest unit runs first."""
    ids = {claim.id for claim in all_claims()}
    for profile in ("ci", "thorough"):
        hints = runtime_hints(profile)
        assert set(hints) <= ids and all(v >= 0.0 for v in hints.values())
    assert runtime_hints("no-such-profile") == {}
    claims = [dataclasses.replace(_claim(check), id=f"toy.{i}")
              for i, check in enumerate((check_gaussian_zcdp, check_bound_identity, check_corollary_value))]
    # claims 1 and 2 share a module (one unit, its caches shared), 1.0 + 2.0 s against 5.0 s for claim 0
    assert _units(claims, {"toy.0": 5.0, "toy.1": 1.0, "toy.2": 2.0}) == [[0], [1, 2]]
    assert _units(claims, {"toy.0": 2.0, "toy.1": 1.0, "toy.2": 2.0}) == [[1, 2], [0]]


def _inflated_bound(taus, eta):
    return np.asarray(intercluster_bound(taus, eta)) * (1.0 + 1e-10)


def _deflated_rho(sensitivity, sigma):
    return gaussian_zcdp(sensitivity, sigma) * (1.0 - 1e-7)


@pytest.mark.parametrize(
    ("check", "kwargs"),
    [(check_bound_identity, {"bound": _inflated_bound}),
     (check_corollary_value, {"bound": _inflated_bound}),
     (check_gaussian_zcdp, {"rho_fn": _deflated_rho})],
    ids=["theorem2-identity", "corollary", "gaussian-zcdp"],
)
def test_checks_refute_a_slightly_wrong_closed_form(check, kwargs):
    """A relative error of 1e-10 (bounds) or 1e-7 (zCDP) must be caught: the checks can fail."""
    result = check(CheckContext(), **kwargs)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample and result.measured > result.bound


def test_same_seed_same_numbers_different_seed_different_points():
    a = check_gaussian_zcdp(CheckContext(seed=5))
    b = check_gaussian_zcdp(CheckContext(seed=5))
    c = check_gaussian_zcdp(CheckContext(seed=6))
    assert a.measured == b.measured
    assert a.measured != c.measured
