"""`fedcheck run pgfl CONFIG.toml`: JSON output, the example config, .npz data and one-line field errors."""

import json
from pathlib import Path

import numpy as np
import pytest

from fedcheck import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "fedcheck" / "examples" / "pgfl_regression.toml"


def test_example_config_json(capsys):
    assert cli.main(["run", "pgfl", str(EXAMPLE), "--iterations", "20", "--runs", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["iterations"] == 20 and len(out["nmsd_db"]) == 20
    # the example's paper sizes: S = 10 servers x Q = 3 clusters x d = 60, K = 150 clients
    assert np.array(out["server_models"]).shape == (10, 3, 60) and np.array(out["client_models"]).shape == (150, 60)
    assert out["nmsd_db"][-1] < out["nmsd_db"][0]


def test_npz_source_with_privacy_and_scheduling(tmp_path, capsys):
    rng = np.random.default_rng(0)
    arrays = {"client_server": np.array([0, 0, 1, 1]), "client_cluster": np.array([0, 1, 0, 1])}
    for k in range(4):
        arrays[f"X_{k}"] = rng.standard_normal((4, 2))
        arrays[f"y_{k}"] = rng.standard_normal(4)
    np.savez(tmp_path / "data.npz", **arrays)
    (tmp_path / "c.toml").write_text('[data]\nsource = "npz"\npath = "data.npz"\n[algorithm]\nname = "alg2"\n'
                                     'rho = 2.0\ntau0 = 0.4\ntau_decay = 0.9\nscheduled = 1\n'
                                     '[privacy]\nphi0 = 0.5\nzeta = 0.99\nC = 0.1\n')
    assert cli.main(["run", "pgfl", str(tmp_path / "c.toml"), "--iterations", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "nmsd_db" not in out and np.array(out["server_models"]).shape == (2, 2, 2)


@pytest.mark.parametrize(("text", "field"), [
    ("[algorithm]\nrho = -1\n", "algorithm.rho"),
    ("[algorithm]\nrho = 1\ntau = 1.5\n", "algorithm.tau"),
    ("[algorithm]\nrho = 1\nrho_over_Lmax = 0.2\n", "algorithm.rho"),
    ("[algorithm]\nrho = 1\nbogus = 2\n", "algorithm.bogus"),
    ("[model]\nlam = -1\n[algorithm]\nrho = 1\n", "model.lam"),
    ("[data]\nservers = 0\n[algorithm]\nrho = 1\n", "data.servers"),
    ("[algorithm]\nrho = 1\n[privacy]\nphi0 = 0.1\n", "privacy"),
    ("[algorithm]\nrho = 1\nname = 'alg2'\n[privacy]\nphi0 = 0.1\nzeta = 2\n", "privacy.zeta"),
    ("[data]\nsource = 'npz'\npath = 'missing.npz'\n[algorithm]\nrho = 1\n", "data.path"),
    ("not toml = = =", "CONFIG"),
])
def test_bad_fields_exit_2_with_one_line_naming_the_field(tmp_path, capsys, text, field):
    (tmp_path / "c.toml").write_text(text)
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", "pgfl", str(tmp_path / "c.toml"), "--iterations", "3"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and field in err
