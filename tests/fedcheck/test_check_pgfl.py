"""``fedcheck check`` on PGFL: the shipped example passes; a step 1/rho above Theorem I's bound exits 1."""

from __future__ import annotations

import json
import pathlib

from fedcheck import cli

EXAMPLES = pathlib.Path(cli.__file__).resolve().parent / "examples"


def check(capsys, *args):
    try:
        status = cli.main(["check", *map(str, args)])
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def _edited(tmp_path, old: str, new: str, extra: str = "") -> pathlib.Path:
    text = (EXAMPLES / "pgfl_regression.toml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "pgfl.toml"
    path.write_text(text.replace(old, new, 1) + extra, encoding="utf-8")
    return path


def test_pgfl_example_holds_and_simulates_to_the_fixed_point(capsys):
    status, out, err = check(capsys, EXAMPLES / "pgfl_regression.toml", "--json")
    assert status == 0, err
    by_id = {o["claim_id"]: o for o in json.loads(out)["outcomes"]}
    fp = by_id["pgfl.theorem1_fixed_point"]
    assert fp["status"] == "holds" and fp["value"] <= fp["bound"] and fp["details"]["iterations"] > 100
    assert fp["hypotheses"][0]["met"] and 0.9 < fp["hypotheses"][0]["value"] < 1.0   # r(T) = 0.981
    # the printed Theorems I and II fail on the example itself, but they are refuted in general and do not decide
    for cid in ("pgfl.theorem1", "pgfl.theorem2"):
        assert by_id[cid]["status"] == "violated" and not by_id[cid]["decides_exit"], by_id[cid]
    assert by_id["pgfl.theorem2"]["value"] > by_id["pgfl.theorem2"]["bound"]
    assert by_id["pgfl.theorem3"]["status"] == "not_applicable"   # Algorithm 1: no privacy noise


def test_pgfl_step_above_the_bound_exits_1_naming_claim_and_value(tmp_path, capsys):
    broken = _edited(tmp_path, "rho_over_Lmax = 0.25 ", "rho_over_Lmax = 0.002 ")
    status, out, err = check(capsys, broken, "--no-simulate")
    assert status == 1
    assert "FAIL" in out and "pgfl.theorem1_fixed_point" in out and "r(T) of the tau = 0 iteration = 1.02" in out
    assert "pgfl.theorem1_fixed_point" in err and len(err.strip().splitlines()) == 1


def test_pgfl_private_ridge_reports_totals_and_fails_lemma1s_gradient_bound(tmp_path, capsys):
    broken = _edited(tmp_path, 'name = "alg1" ', 'name = "alg2" ', "\n[privacy]\nphi0 = 0.001\nzeta = 0.99\n")
    status, out, err = check(capsys, broken, "--no-simulate", "--json")
    assert status == 1
    by_id = {o["claim_id"]: o for o in json.loads(out)["outcomes"]}
    total = by_id["pgfl.theorem4.total_closed_form"]
    assert total["status"] == "holds" and "1.93911" in total["summary"]   # phi0 (zeta^-300 - 1)/(1 - zeta)
    assert by_id["pgfl.theorem3"]["status"] == "hypotheses_not_met"
    assert "unbounded (ridge loss)" in by_id["pgfl.theorem3"]["summary"]


def test_data_whose_squares_overflow_are_refused_and_no_claim_is_decided_on_nan(tmp_path, capsys):
    """Found by an adversarial audit: data.gamma = 1e300 (inside the field's range) made the true models' squares
    overflow; `run` blamed the step for the NaN and `check` said 'violated: the limit (Pc) is nan'. The data are now
    refused, and a claim whose quantity is NaN is not_evaluable whatever the evaluator says."""
    import re

    import pytest

    from verify.instance import _no_verdict_on_nan
    from verify.instance.records import Evaluation

    example = pathlib.Path(__file__).resolve().parents[2] / "fedcheck" / "examples" / "pgfl_regression.toml"
    path = tmp_path / "c.toml"
    path.write_text(re.sub(r"^gamma = 0\.15", "gamma = 1e300", example.read_text(), flags=re.M))
    for argv in (["run", "pgfl", str(path)], ["check", str(path), "--no-simulate"]):
        with pytest.raises(SystemExit) as exc:
            cli.main(argv)
        err = capsys.readouterr().err.strip().splitlines()
        assert exc.value.code == 2 and len(err) == 1 and "data.gamma" in err[0]
    nan = _no_verdict_on_nan(Evaluation(status="violated", summary="the limit is nan", value=float("nan")))
    assert nan.status == "not_evaluable" and "value is NaN" in nan.summary
    ok = Evaluation(status="holds", summary="fine", value=1.0, bound=2.0)
    assert _no_verdict_on_nan(ok) is ok
