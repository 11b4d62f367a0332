"""The console script: JSON outputs, exit codes and one-line usage errors."""

import json
import subprocess
import sys

import pytest

from fedcheck import cli
from verify.records import CheckResult, Citation, Claim, Verdict


def run(*args):
    return subprocess.run([sys.executable, "-m", "fedcheck", *args], capture_output=True, text=True, timeout=300)


def test_claims_json_lists_the_registry():
    proc = run("claims", "--json")
    assert proc.returncode == 0, proc.stderr
    ids = {c["id"] for c in json.loads(proc.stdout)}
    assert {"pgfl.theorem2.bound_closed_form", "dp.gaussian_zcdp"} <= ids


def test_report_only_pgfl_json_prints_valid_json_and_writes_files(tmp_path):
    proc = run("report", "--only", "pgfl", "--json", "--out", str(tmp_path), "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["seed"] == 3 and document["only"] == ["pgfl"]
    assert {r["claim_id"].split(".")[0] for r in document["results"]} == {"pgfl"}
    expected = {c["id"]: c["expected_by_profile"].get("ci", c["expected"]) for c in document["claims"]}
    assert all(r["verdict"] == expected[r["claim_id"]] for r in document["results"])
    assert "refuted" in {r["verdict"] for r in document["results"]}  # pgfl.theorem4.reported_total
    assert json.loads((tmp_path / "results.json").read_text()) == document
    assert (tmp_path / "index.html").is_file()


@pytest.mark.parametrize(("args", "option"), [
    (["report", "--workers", "0"], "--workers"),
    (["report", "--seed", "-4"], "--seed"),
    (["report", "--profile", "fast"], "--profile"),
    (["report", "--only", "nothing"], "--only"),
    (["report", "--workers", "2", "--dask-scheduler", "tcp://127.0.0.1:1"], "--workers"),
    (["report", "--bogus"], "--bogus"),
])
def test_usage_errors_exit_2_with_one_line_naming_the_option(args, option, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and option in err and err.startswith("fedcheck")


def test_unreachable_dask_scheduler_is_a_usage_error(capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", "--dask-scheduler", "tcp://127.0.0.1:9", "--out", str(tmp_path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--dask-scheduler" in err


def boom(ctx):
    raise RuntimeError("boom")


def fine(ctx):
    return CheckResult(claim_id="toy.fine", verdict=Verdict.CONFIRMED, summary="ok")


def _toy(claim_id, check):
    return Claim(id=claim_id, paper="toy", title=claim_id, citations=(Citation(external="x", label="y"),),
                 statement="s", hypotheses=(), check=check, expected=Verdict.CONFIRMED, reason="r")


@pytest.mark.parametrize(("checks", "code"), [((fine,), 0), ((fine, boom), 1)])
def test_exit_status_is_1_only_when_a_check_errored(monkeypatch, tmp_path, checks, code):
    claims = tuple(_toy(f"toy.{c.__name__}", c) for c in checks)
    monkeypatch.setattr("verify.registry.select_claims", lambda prefixes: claims)
    assert cli.main(["report", "--quiet", "--out", str(tmp_path)]) == code
    verdicts = [r["verdict"] for r in json.loads((tmp_path / "results.json").read_text())["results"]]
    assert verdicts == (["confirmed"] if code == 0 else ["confirmed", "error"])
