"""``fedcheck check`` on FedPDM-DP: the shipped example passes; broken copies exit 1 naming the claim and value."""

from __future__ import annotations

import json
import pathlib

import pytest

from fedcheck import cli

EXAMPLES = pathlib.Path(cli.__file__).resolve().parent / "examples"


def check(capsys, *args):
    try:
        status = cli.main(["check", *map(str, args)])
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def _edited(tmp_path, old: str, new: str) -> pathlib.Path:
    text = (EXAMPLES / "fedpdm.toml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "fedpdm.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def test_fedpdm_example_holds_with_the_bound_and_the_papers_accountant_beside(capsys):
    status, out, err = check(capsys, EXAMPLES / "fedpdm.toml", "--json")
    assert status == 0, err
    by_id = {o["claim_id"]: o for o in json.loads(out)["outcomes"]}
    for cid in ("fedpdm.lemma1_corrected", "fedpdm.theorem2_carryover_corrected",
                "fedpdm.theorem3_conditions_corrected"):
        assert by_id[cid]["status"] == "holds", by_id[cid]
    privacy = by_id["fedpdm.theorem2_carryover_corrected"]
    assert privacy["details"]["is_bound"] is True
    # the history_gaussian bound (~9.2) is far above the paper's accountant (~1.4), which is labelled not a bound
    paper = privacy["details"]["paper_accountant"]
    assert "NOT a bound" in paper["label"] and paper["epsilon_max"] < privacy["value"]
    assert 8.0 < privacy["value"] < 11.0
    lemma = by_id["fedpdm.lemma1_corrected"]
    assert lemma["value"] <= 1.0 and lemma["details"]["eps_star"] == pytest.approx(8.4198, abs=1e-3)
    assert by_id["fedpdm.experiment_dp_loss"]["status"] == "not_evaluable"


def test_fedpdm_noise_below_what_epsilon_needs_exits_1(tmp_path, capsys):
    broken = _edited(tmp_path, "epsilon = 1.0 ", "epsilon = 10.0 ")
    status, out, err = check(capsys, broken, "--json")
    assert status == 1
    by_id = {o["claim_id"]: o for o in json.loads(out)["outcomes"]}
    lemma = by_id["fedpdm.lemma1_corrected"]
    assert lemma["status"] == "hypotheses_not_met" and lemma["decides_exit"]
    assert lemma["value"] == pytest.approx(2.265, abs=1e-3)   # delta_exact / delta at epsilon 10, delta 1e-5
    # the claim as printed is violated too, but it is refuted in general and does not decide
    assert by_id["fedpdm.lemma1"]["status"] == "violated" and not by_id["fedpdm.lemma1"]["decides_exit"]
    assert "fedpdm.lemma1_corrected" in err and len(err.strip().splitlines()) == 1


def test_fedpdm_gradient_bound_below_the_certified_one_exits_1(tmp_path, capsys):
    broken = _edited(tmp_path, "# G = 9.0  ", "G = 1.0  ")
    status, out, err = check(capsys, broken, "--no-simulate")
    assert status == 1
    assert "fedpdm.theorem2_carryover_corrected" in err
    assert "algorithm.G (Assumption 3) = 1 " in out and "NOT met" in out


def test_fedpdm_rho_below_4L_exits_1_naming_theorem3(tmp_path, capsys):
    broken = _edited(tmp_path, "rho = 10.0 ", "rho = 2.0 ")
    status, out, err = check(capsys, broken, "--no-simulate")
    assert status == 1
    assert "fedpdm.theorem3_conditions_corrected" in err
    assert "certified smoothness L = 0.596" in out and "rho/4 = 0.5" in out
