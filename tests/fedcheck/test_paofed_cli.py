"""`fedcheck run paofed CONFIG.toml`: the example config (SIM-F, docs/papers/paofed.md#choice-simulators),
SIM-E (docs/papers/paofed.md#choice-simulators), algorithms, one-line field errors.

The parser is built here the way fedcheck.cli wires ``run`` (a ``run`` sub-command whose sub-parsers take
``add_run_parser``), so the tests do not depend on the wiring in fedcheck/cli.py.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from tests.fedcheck.plugin_harness import load_setup, run_plugin

EXAMPLE = Path(__file__).resolve().parents[2] / "fedcheck" / "examples" / "paofed_reference.toml"


def load_paofed_config(path, algorithm="paofed-u1"):
    """The environment, algorithm and data the plug-in builds for ``path`` (what a run would simulate)."""
    from types import SimpleNamespace

    from fedcheck.run.paofed import simulation

    setup = load_setup("paofed", path, algorithm=algorithm)
    env, config, data, _ = simulation(setup)
    return SimpleNamespace(env=env, config=config, data=data, iterations=setup.iterations)


def _main(argv):
    return run_plugin(argv)


def test_example_config_is_the_reference_instance_sim_f():
    from theory.msd.instance import reference_instance

    setup = load_paofed_config(EXAMPLE)
    ref = reference_instance(0.1)
    assert setup.iterations == 2000 and setup.data.metric_name == "msd"
    np.testing.assert_array_equal(setup.data.R, ref.R)
    np.testing.assert_array_equal(setup.data.w_star, ref.w_star)
    np.testing.assert_array_equal(setup.env.p, ref.p)
    assert setup.env.delta == ref.delta and setup.env.l_max == ref.l_max
    cfg = setup.config
    assert cfg.name == "paofed-u1" and cfg.schedule == "subset" and cfg.uplink == "next" and cfg.m == 2
    assert cfg.alpha == (1.0, 0.5, 0.25) and np.isclose(cfg.mu, ref.mu) and cfg.overlap_rule == "none"


def test_example_config_json(capsys):
    assert _main(["run", "paofed", str(EXAMPLE), "--iterations", "300", "--runs", "20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"algorithm", "iterations", "runs", "status", "curve_db", "metric", "window"}
    assert out["status"] == "ok"
    assert out["algorithm"] == "paofed-u1" and out["iterations"] == 300 and out["runs"] == 20
    assert out["metric"] == "msd" and len(out["curve_db"]) == 301
    # 300 iterations + the start; MSD(0) = ||w_star||^2 = 1.5625 of the example; its steady state is -30.1
    # dB (docs/papers/paofed.md#instance-reference)
    assert np.isclose(out["curve_db"][0], 10 * np.log10(1.5625)) and out["curve_db"][-1] < -20.0
    # ... which these 300 iterations have not reached: rho(F_exact) = 0.976 takes 383 iterations to lose four decades,
    # and the mean over n = 150..300 is still falling (older half 118 % above the newer one, [95, 141] %)
    window = out["window"]
    assert window["start"] == 150 and window["settled"] is False and window["note"].startswith("NOT SETTLED")
    low, high = window["drift_interval"]
    assert 0.5 < low <= window["drift"] <= high


def test_the_window_mean_says_whether_it_has_settled(capsys):
    """The summary's "mean over n = N/2..N" is set beside `fedcheck msd`'s steady state: it says when the window was
    still moving (the a-posteriori test of `fedcheck msd --simulate`, paired over the runs), decides nothing with one
    run, and never calls a window settled (that needs rho(F), which `fedcheck msd --simulate` uses)."""
    assert _main(["run", "paofed", str(EXAMPLE), "--iterations", "40", "--runs", "8"]) == 0
    text = capsys.readouterr().out
    assert "drift in that window" in text and "NOT SETTLED" in text
    assert _main(["run", "paofed", str(EXAMPLE), "--iterations", "60", "--runs", "1", "--json"]) == 0
    window = json.loads(capsys.readouterr().out)["window"]
    assert window["drift_interval"] is None and window["settled"] is None and "one run" in window["note"]
    assert _main(["run", "paofed", str(EXAMPLE), "--iterations", "1500", "--runs", "4", "--json"]) == 0
    window = json.loads(capsys.readouterr().out)["window"]   # starts at 750, after the 383 iterations of rho(F)
    assert window["settled"] is None and window["drift_interval"][0] < 0.0 < window["drift_interval"][1]


def test_window_drift_on_synthetic_curves():
    from reference_impl.paofed.run_report import window_drift

    rng = np.random.default_rng(0)
    flat = 1e-3 * rng.exponential(size=(401, 6))
    falling = flat * np.exp(-np.arange(401) / 100.0)[:, None]
    assert window_drift(flat, 200)["settled"] is None
    fall = window_drift(falling, 200)
    assert fall["settled"] is False and fall["drift"] > 0.5 and fall["drift_interval"][0] > 0.0
    one = window_drift(falling[:, :1], 200)
    assert one["drift_interval"] is None and one["settled"] is None and one["drift"] > 0.5
    zero = window_drift(np.zeros((11, 3)), 5)   # a noise-free run at w*: no level to be relative to
    assert zero["drift"] is None and zero["settled"] is False
    json.dumps(zero, allow_nan=False)


def test_text_output_and_determinism(capsys):
    argv = ["run", "paofed", str(EXAMPLE), "--iterations", "50", "--seed", "3"]
    assert _main(argv) == 0
    first = capsys.readouterr().out
    assert _main(argv) == 0
    assert capsys.readouterr().out == first and "paofed-u1" in first and "savings uplink 60.0 %" in first


@pytest.mark.parametrize("name", ["paofed-c0", "paofed-u0", "paofed-c1", "paofed-c2", "paofed-u2", "online-fed",
                                  "online-fedsgd", "pso-fed", "signsgd"])
def test_every_algorithm_runs_on_the_example(capsys, name):
    assert _main(["run", "paofed", str(EXAMPLE), "--iterations", "20", "--algorithm", name, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["algorithm"] == name and len(out["curve_db"]) == 21 and np.all(np.isfinite(out["curve_db"]))


def test_sim_e_synthetic_rff(tmp_path, capsys):
    (tmp_path / "e.toml").write_text(
        '[simulation]\niterations = 60\n[data]\nsource = "synthetic-rff"\nK = 16\nD = 30\ntest_size = 50\n'
        'horizon = 60\ndata_groups = [15, 30, 45, 60]\n[environment]\nl_max = 3\n[algorithm]\nmu = 0.4\nm = 3\n')
    assert _main(["run", "paofed", str(tmp_path / "e.toml"), "--runs", "2", "--algorithm", "paofed-c2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metric"] == "mse_test" and len(out["curve_db"]) == 61 and out["curve_db"][-1] < out["curve_db"][0]
    setup = load_paofed_config(tmp_path / "e.toml", "paofed-c2")
    # the PAO-Fed-C2 defaults (staleness decay 0.2) and the data groups 15/30/45/60 of 60 iterations as data rates
    assert setup.config.schedule == "circshift" and setup.config.coordinated and setup.config.staleness_decay == 0.2
    assert setup.env.K == 16 and setup.env.l_max == 3
    assert np.allclose(sorted(set(setup.env.data_rate)), [0.25, 0.5, 0.75, 1])


@pytest.mark.parametrize(("text", "field"), [
    ("[instance]\nK = 0\n", "instance.K"),
    ("[instance]\np = [0.9, 0.6]\n", "instance.p"),
    ("[instance]\ndelta = 1.5\n", "instance.delta"),
    ("[instance]\nmu = 0.1\nmu_times_lambda_max = 0.1\n", "instance.mu"),
    ("[instance]\nselection = 'random'\n", "instance.selection"),
    ("[instance]\nK = 3\n", "instance.p must be given"),
    ("[instance]\nbogus = 1\n", "instance.bogus"),
    ("[algorithm]\noverlap_rule = 'oldest'\n", "algorithm.overlap_rule"),
    ("[algorithm]\nmu = 0.4\n", "algorithm.mu"),
    ("[algorithm]\nonline_fed_fraction = 0\n", "algorithm.online_fed_fraction"),
    ("[data]\nsource = 'csv'\n", "data.source"),
    ("[data]\nsigma_kappa = 5.0\n", "data.sigma_kappa"),
    ("[data]\nsource = 'synthetic-rff'\nsigma_kappa = -1.0\n", "data.sigma_kappa"),
    ("[data]\nsource = 'synthetic-rff'\ninput_order = 'reversed'\n", "data.input_order"),
    ("[data]\nsource = 'synthetic-rff'\n[environment]\ndelta = 1.0\n", "environment.delta"),
    ("[data]\nsource = 'synthetic-rff'\n[environment]\np_groups = [2.0]\n", "environment.p_groups"),
    ("[data]\nsource = 'synthetic-rff'\nD = 3\n[algorithm]\nm = 4\n", "algorithm.m"),
    ("[data]\nsource = 'synthetic-rff'\n[algorithm]\nschedule = 'instance'\n", "algorithm.schedule"),
    ("[data]\nsource = 'synthetic-rff'\n[instance]\nK = 4\n", "instance"),
    ("[simulation]\niterations = 0\n", "simulation.iterations"),
    ("[other]\nx = 1\n", "other"),
    ("not toml = = =", "CONFIG"),
])
def test_bad_fields_exit_2_with_one_line_naming_the_field(tmp_path, capsys, text, field):
    (tmp_path / "c.toml").write_text(text)
    with pytest.raises(SystemExit) as exc:
        _main(["run", "paofed", str(tmp_path / "c.toml"), "--iterations", "3"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and field in err


def test_missing_file_and_unknown_algorithm_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        _main(["run", "paofed", str(tmp_path / "none.toml")])
    assert exc.value.code == 2 and "CONFIG" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        _main(["run", "paofed", str(EXAMPLE), "--algorithm", "fedavg"])
    assert exc.value.code == 2 and "--algorithm" in capsys.readouterr().err


def test_group_shorthand_runs(tmp_path, capsys):
    """[[instance.group]] (count, p, sigma2_eta, toeplitz_rho) replaces the per-client lists for run paofed too."""
    drop = ("K", "p", "sigma2_eta", "toeplitz_rho")
    lines = [ln for ln in EXAMPLE.read_text().splitlines() if ln.split(" = ")[0] not in drop]
    groups = "".join(f"\n[[instance.group]]\ncount = {n}\np = {p}\nsigma2_eta = 0.01\ntoeplitz_rho = {r}\n"
                     for n, p, r in ((3, 0.9, 0.2), (2, 0.3, 0.6)))
    path = tmp_path / "g.toml"
    path.write_text("\n".join(lines).replace("\n[data]\n", groups + "\n[data]\n", 1))
    setup = load_paofed_config(path)
    assert setup.env.K == 5 and np.array_equal(setup.env.p, [0.9, 0.9, 0.9, 0.3, 0.3])
    assert setup.data.R[4, 0, 1] == 0.6 and setup.data.R[0, 0, 2] == pytest.approx(0.04)  # rho^|i-j|, 1e-16 rounding
    assert _main(["run", "paofed", str(path), "--iterations", "5", "--json"]) == 0  # 5 iterations: the run completes
    assert len(json.loads(capsys.readouterr().out)["curve_db"]) == 6  # n = 0..5


@pytest.mark.parametrize("command", ["run", "msd"])
def test_a_huge_group_count_is_refused_before_anything_is_allocated(tmp_path, capsys, command):
    """Found by an adversarial audit: a [[instance.group]] count of 1e12 expanded the per-client lists before the
    sizes were checked, and the process allocated until it ran out of memory (msd: still running after 60 s)."""
    from fedcheck import cli

    path = tmp_path / "huge.toml"
    path.write_text("[[instance.group]]\ncount = 1000000000000\np = 0.5\nwhite_variance = 1.0\n")
    argv = ["run", "paofed", str(path)] if command == "run" else ["msd", str(path)]
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "instance.group[0].count" in err[0] and "TB" in err[0]
