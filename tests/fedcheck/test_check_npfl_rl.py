"""``fedcheck check`` on NPFL-RL: the shipped example passes; unprojected tau and the printed erratum modes exit 1."""

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


def _edited(tmp_path, *pairs: tuple[str, str]) -> pathlib.Path:
    text = (EXAMPLES / "npfl_rl.toml").read_text(encoding="utf-8")
    for old, new in pairs:
        assert old in text
        text = text.replace(old, new, 1)
    path = tmp_path / "npfl_rl.toml"
    path.write_text('paper = "npfl_rl"\n' + text, encoding="utf-8")
    return path


def test_npfl_rl_example_holds_with_a_short_run(capsys):
    status, out, err = check(capsys, EXAMPLES / "npfl_rl.toml", "--json")
    assert status == 0, err
    by_id = {o["claim_id"]: o for o in json.loads(out)["outcomes"]}
    for cid in ("npfl_rl.assumption1_eta", "npfl_rl.well_posed", "npfl_rl.sac_step", "npfl_rl.closed_form"):
        assert by_id[cid]["status"] == "holds", by_id[cid]
    sac = by_id["npfl_rl.sac_step"]
    assert sac["bound"] == pytest.approx(0.1 * 0.05 / 2) and 0 < sac["value"] <= sac["bound"]
    assert by_id["npfl_rl.well_posed"]["value"] == 0.0
    assert by_id["npfl_rl.fixed_point"]["status"] == "not_applicable"   # SAC, not a fixed tau


def test_npfl_rl_unprojected_tau_exits_1_naming_well_posedness(tmp_path, capsys):
    broken = _edited(tmp_path, ("projection = true ", "projection = false "), ("tau_max = 1.0 ", "# tau_max "),
                     ("clip_candidates = true ", "# clip_candidates "))
    status, out, err = check(capsys, broken, "--no-simulate")
    assert status == 1
    assert "FAIL" in out and "npfl_rl.well_posed " in out and "algorithm.projection = False" in out
    assert "npfl_rl.well_posed" in err and len(err.strip().splitlines()) == 1


def test_npfl_rl_printed_diagonal_exits_1_naming_the_closed_form(tmp_path, capsys):
    broken = _edited(tmp_path, ('diagonal = "corrected"', 'diagonal = "printed"'))
    status, out, err = check(capsys, broken, "--no-simulate")
    assert status == 1
    assert "npfl_rl.closed_form" in err and "algorithm.diagonal = 'printed'" in out


def test_npfl_rl_fixed_tau_converges_to_the_coupled_fixed_point(tmp_path, capsys):
    fixed = _edited(tmp_path, ('policy = "sac" ', 'policy = "fixed" '), ("delta = 0.1 ", "# delta "),
                    ("nu = 0.05 ", "# nu "), ("epochs = 1 ", "# epochs "), ("clip_candidates = true ", "# clip "),
                    ('timing = "literal" ', "# timing "))
    status, out, err = check(capsys, fixed, "--json")
    assert status == 0, err
    fp = {o["claim_id"]: o for o in json.loads(out)["outcomes"]}["npfl_rl.fixed_point"]
    assert fp["status"] == "holds" and fp["value"] <= fp["bound"]
