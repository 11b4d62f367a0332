"""`fedcheck run npfl-rl CONFIG.toml`: the example config, JSON output, determinism and one-line field errors.

The parser is built here the way fedcheck.cli wires ``run`` (as tests/fedcheck/test_paofed_cli.py does).
"""

import json
from pathlib import Path

import numpy as np
import pytest

from tests.fedcheck.plugin_harness import load_setup, run_plugin

EXAMPLE = Path(__file__).resolve().parents[2] / "fedcheck" / "examples" / "npfl_rl.toml"
SMALL = """
[instance]
K = 8
d = 5
D_min = 3
D_max = 6
mean_degree = 3.0
[algorithm]
policy = "{policy}"
delta = {delta}
projection = {projection}
"""


def _main(argv):
    return run_plugin(argv)


def _write(tmp_path, text, name="c.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_example_config_documents_every_field_and_loads():
    from fedcheck.run.npfl_rl import SCHEMA

    text = EXAMPLE.read_text()
    for section in SCHEMA.sections:
        assert f"[{section.name}]" in text
        for field in section.fields:
            assert f"\n{field.name} = " in text, field.name
    setup = load_setup("npfl-rl", EXAMPLE)
    instance, config, n = setup.instance, setup.config, setup.iterations
    assert n == 300 and instance["K"] == 30 and instance["d"] == 60 and config.policy == "sac" and config.rho == 3.0


def test_json_has_curves_and_tau_trajectories(tmp_path, capsys):
    path = _write(tmp_path, SMALL.format(policy="sac", delta=0.1, projection="true"))
    assert _main(["run", "npfl-rl", str(path), "--iterations", "20", "--runs", "2", "--seed", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "ok" and out["iterations"] == 20 and out["runs"] == 2 and out["seed"] == 4
    assert len(out["test_mse_db"]) == 21 and len(out["test_mse_db_runs"]) == 2
    traj = np.array(out["tau"]["trajectories"])
    assert traj.shape == (2, 3, 21) and np.all(traj >= 0) and np.all(traj <= 1)
    D = np.array(out["tau"]["D_k"])
    assert np.all(D[:, 0] >= D[:, 1]) and np.all(D[:, 1] >= D[:, 2])  # largest, median, smallest D_k
    assert out["test_mse_db"][-1] < out["test_mse_db"][0]


def test_text_output_is_deterministic(tmp_path, capsys):
    path = _write(tmp_path, SMALL.format(policy="dpg", delta=0.01, projection="true"))
    argv = ["run", "npfl-rl", str(path), "--iterations", "10", "--seed", "2"]
    assert _main(argv) == 0
    first = capsys.readouterr().out
    assert _main(argv) == 0
    assert capsys.readouterr().out == first and "NPFL-RL (DPG)" in first


def test_printed_dual_sign_reports_divergence_as_null(tmp_path, capsys):
    path = _write(tmp_path, SMALL.format(policy="fixed", delta=0.0, projection="true").replace("delta = 0.0\n", "")
                  + 'dual_sign = "printed"\ntau0 = 0.0\n')
    assert _main(["run", "npfl-rl", str(path), "--iterations", "2000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "diverged" and out["test_mse_db"][-1] is None


@pytest.mark.parametrize("body,field", [
    ("[algorithm]\nrho = 0.0\n", "algorithm.rho"),
    ("[algorithm]\npolicy = \"ppo\"\n", "algorithm.policy"),
    ("[algorithm]\ntau0 = 2.0\n", "algorithm.tau0"),
    ("[algorithm]\nalgorithm = \"nfl\"\npolicy = \"sac\"\n", "algorithm.policy"),
    ("[instance]\nK = 1\n", "instance.K"),
    ("[instance]\nD_min = 10\nD_max = 5\n", "instance.D_max"),
    ("[instance]\nfoo = 1\n", "instance.foo"),
    ("[simulation]\niterations = 0\n", "simulation.iterations"),
])
def test_bad_field_exits_2_naming_it(tmp_path, capsys, body, field):
    path = _write(tmp_path, body)
    with pytest.raises(SystemExit) as exc:
        _main(["run", "npfl-rl", str(path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert field in err[-1]


def test_work_budget_names_iterations(tmp_path, capsys):
    path = _write(tmp_path, "[simulation]\niterations = 1\n")
    with pytest.raises(SystemExit) as exc:
        _main(["run", "npfl-rl", str(path), "--iterations", "100000000"])
    assert exc.value.code == 2 and "--iterations" in capsys.readouterr().err
