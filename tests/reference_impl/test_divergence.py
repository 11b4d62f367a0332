"""One rule for a finite run that diverges (reference_impl.divergence), and every run command that reports it."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from reference_impl.divergence import diverging, rise_db

EXAMPLES = Path(__file__).resolve().parents[2] / "fedcheck" / "examples"


def test_the_rule_on_synthetic_curves():
    n = np.arange(200)
    assert diverging(np.exp(n / 20.0), db=False, name="x") is not None          # keeps growing
    assert diverging(1e-3 * (1 - 0.9 * np.exp(-n / 10.0)), db=False, name="x") is None   # rises to a floor: settles
    assert diverging(10 * np.log10(1e-3 * (1 + np.exp(-n / 10))), db=True, name="x") is None   # falls
    assert diverging([np.nan, 1.0], db=False, name="x") is None and diverging([1.0], db=False, name="x") is None
    assert diverging(np.linspace(0.0, 6000.0, 100), db=True, name="x") is not None   # no overflow at 6000 dB
    total, within = rise_db([1.0, 10.0, 100.0, 1000.0], db=False)
    assert total == pytest.approx(30.0) and within == pytest.approx(10.0)


@pytest.mark.parametrize(("command", "example", "pattern", "replacement", "extra"), [
    ("pgfl", "pgfl_regression.toml", r"^rho_over_Lmax = 0\.25", "rho_over_Lmax = 0.001", []),
    ("zcdp-nfl", "zcdp_nfl.toml", r'^objective = "lad"', 'objective = "ridge"\nlam = 1000', ["--iterations", "20"]),
    ("npfl-rl", "npfl_rl.toml", r'^dual_sign = "corrected"', 'dual_sign = "printed"', ["--iterations", "300"]),
])
def test_a_finite_run_that_keeps_growing_is_diverging_not_ok(tmp_path, capsys, command, example, pattern, replacement,
                                                              extra):
    """Found by an adversarial audit: PGFL's NMSD rising 53 dB, zCDP-NFL's NE at 1e41 and NPFL-RL's printed dual sign
    at 2262 dB were all reported with status "ok" (only values beyond the double range counted)."""
    from fedcheck import cli

    text, n = re.subn(pattern, replacement, (EXAMPLES / example).read_text(), flags=re.M)
    assert n == 1
    path = tmp_path / "c.toml"
    path.write_text(text)
    assert cli.main(["run", command, str(path), *extra, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "diverging" and "diverges" in out["warning"]
    assert cli.main(["run", command, str(EXAMPLES / example), *extra, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] != "diverging"   # the shipped example does not

