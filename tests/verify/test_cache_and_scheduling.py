"""Results cached by claim code and parameters; claims scheduled across threads give the same results."""

import dataclasses

from verify.cache import ResultCache, code_digest
from verify.executor import ProcessExecutor
from verify.records import CheckContext, Verdict
from verify.registry import select_claims
from verify.runner import run_claims

CLAIMS = select_claims(["dp.gaussian_zcdp", "pgfl.theorem3", "zcdp_nfl.tradeoff_1_over_k",
                        "zcdp_nfl.tradeoff_noise_term"])


def _plain(result):
    return dataclasses.replace(result, runtime_s=0.0)


def test_a_cached_result_is_reused_and_a_code_change_misses(tmp_path, monkeypatch):
    cache = ResultCache(tmp_path / "cache")
    ctx = CheckContext(profile="ci", seed=0)
    first = run_claims(CLAIMS, ctx, cache=cache)
    calls = []
    monkeypatch.setattr("verify.runner.run_claim", lambda claim, c: calls.append(claim.id))
    again = run_claims(CLAIMS, ctx, cache=cache)
    assert calls == [] and [_plain(r) for r in again] == [_plain(r) for r in first]
    assert cache.get(CLAIMS[0], "ci", 1) is None and cache.get(CLAIMS[0], "thorough", 0) is None
    assert set(cache.runtimes("ci")) == {c.id for c in CLAIMS}


def test_the_digest_follows_the_checks_imports(tmp_path):
    """Claims of one module share a digest; a claim whose module imports other code has another."""
    by_module = {}
    for claim in CLAIMS:
        by_module.setdefault(claim.check.__module__, set()).add(code_digest(claim))
    assert all(len(d) == 1 for d in by_module.values()) and len(set.union(*by_module.values())) == len(by_module)


def test_a_corrupt_entry_is_a_miss(tmp_path):
    cache = ResultCache(tmp_path)
    claim = CLAIMS[0]
    result = run_claims([claim], CheckContext(), cache=cache)[0]
    assert result.verdict is not Verdict.ERROR
    path = next(tmp_path.glob(f"{claim.id}.ci.*.pkl"))
    path.write_bytes(b"not a pickle")
    assert cache.get(claim, "ci", 0) is None


def test_parallel_scheduling_gives_the_serial_results_in_order():
    serial = run_claims(CLAIMS, CheckContext(profile="ci", seed=0))
    with ProcessExecutor(2) as pool:
        parallel = run_claims(CLAIMS, CheckContext(profile="ci", seed=0, executor=pool), parallel=2)
    assert [r.claim_id for r in parallel] == [c.id for c in CLAIMS]
    assert [(r.verdict, r.summary) for r in parallel] == [(r.verdict, r.summary) for r in serial]
