"""benchmarks/bench_report.py on an existing results.json: the most expensive claims first, and against a baseline.

No time is asserted: the runtimes are the ones written into the toy results.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

import pytest

from reports.build import build_report
from tests.reports.test_build import META, toy_records

_SPEC = importlib.util.spec_from_file_location(
    "bench_report", Path(__file__).resolve().parents[2] / "benchmarks" / "bench_report.py")
bench_report = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench_report)


def _results(tmp_path, runtimes, name="r", cpu=None):
    claims, results = toy_records()
    results = [dataclasses.replace(r, runtime_s=runtimes.get(r.claim_id, 0.0),
                                   cpu_s=None if cpu is None else cpu.get(r.claim_id, 0.0)) for r in results]
    build_report(claims, results, tmp_path / name, META)
    return tmp_path / name / "results.json"


def test_top_claims_are_listed_most_expensive_first(tmp_path, capsys):
    path = _results(tmp_path, {"toy.ok": 3.0, "alt.ok": 40.0, "toy.bad": 7.5, "toy.fixed": 0.5})
    assert bench_report.main(["--results", str(path), "--top", "3"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("most expensive"):]
    order = [table.index(cid) for cid in ("alt.ok", "toy.bad", "toy.ok")]
    assert order == sorted(order) and "toy.fixed" not in table
    assert "toy " in out and "alt " in out  # per-paper totals


def test_cpu_time_ranks_the_claims_where_measured(tmp_path, capsys):
    """A claim that waited long for busy workers (large runtime) but consumed little CPU is not the most expensive."""
    path = _results(tmp_path, {"toy.ok": 50.0, "alt.ok": 40.0, "toy.bad": 7.5},
                    cpu={"toy.ok": 1.0, "alt.ok": 30.0, "toy.bad": 6.0})
    assert bench_report.main(["--results", str(path), "--top", "2"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("most expensive"):]
    assert table.index("alt.ok") < table.index("toy.bad") and "toy.ok" not in table
    assert "CPU time" in out


def test_baseline_shows_the_largest_slowdown_with_its_ratio(tmp_path, capsys):
    old = _results(tmp_path, {"toy.ok": 2.0, "alt.ok": 40.0}, "old")
    new = _results(tmp_path, {"toy.ok": 20.0, "alt.ok": 40.0}, "new")
    assert bench_report.main(["--results", str(new), "--baseline", str(old)]) == 0
    out = capsys.readouterr().out
    versus = out[out.index("against the baseline"):]
    assert versus.index("toy.ok") < versus.index("alt.ok") and "10.00x" in versus


def test_a_file_that_is_not_results_json_exits_2(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"nothing": 1}))
    with pytest.raises(SystemExit) as exc:
        bench_report.main(["--results", str(bad)])
    assert exc.value.code == 2 and "--results" not in capsys.readouterr().out
