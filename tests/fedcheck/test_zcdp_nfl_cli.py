"""`fedcheck run zcdp-nfl CONFIG.toml`: the example config, graph and data sources, JSON, one-line field errors.

The parser is built here the way fedcheck.cli wires ``run`` (a ``run`` sub-command whose sub-parsers take
``add_run_parser``), so the tests do not depend on the wiring in fedcheck/cli.py.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from tests.fedcheck.plugin_harness import load_setup, run_plugin
from verify.zcdp_nfl.corollary_total import corollary_total

EXAMPLE = Path(__file__).resolve().parents[2] / "fedcheck" / "examples" / "zcdp_nfl.toml"


def _main(argv):
    return run_plugin(argv)


def test_example_config_is_the_paper_size_lad_setting():
    from fedcheck.run.zcdp_nfl import build_config, build_problem

    setup = load_setup("zcdp-nfl", EXAMPLE)
    p, _ = build_problem(setup)
    config = build_config(setup.v)
    assert (p.K, p.P, p.M, p.n_edges, p.objective) == (50, 8, 50, 75, "lad")
    assert config.privacy.kind == "S2" and config.step.kind == "constant" and setup.iterations == 200


def test_example_json_has_the_error_curve_and_the_corollary_privacy(capsys):
    assert _main(["run", "zcdp-nfl", str(EXAMPLE), "--iterations", "200", "--runs", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "ok" and out["runs"] == 2 and len(out["ne_curve"]) == 201
    assert np.isclose(out["ne_curve"][0], 50.0) and out["ne_final"] < 1.0
    privacy = out["privacy"]
    assert privacy["certified"] and np.isclose(privacy["total_zcdp"], corollary_total(1e-3, 0.99, 200), rtol=1e-12)
    assert np.isclose(privacy["epsilon"], 6.068483,
                      atol=5e-7)  # docs/papers/zcdp_nfl.md#corollary test vector (phi1 = 1e-3, tau = 0.99)


def test_text_output_is_deterministic(capsys):
    argv = ["run", "zcdp-nfl", str(EXAMPLE), "--iterations", "20", "--seed", "3"]
    assert _main(argv) == 0
    first = capsys.readouterr().out
    assert _main(argv) == 0
    assert capsys.readouterr().out == first and "NE(20)" in first and "Bun-Steinke" in first


def test_generator_edges_and_npz_sources(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 6, 2))
    X /= np.linalg.norm(X, axis=-1, keepdims=True)
    np.savez(tmp_path / "d.npz", X=X, y=X @ np.array([1.0, -1.0]) + 0.1 * rng.normal(size=(4, 6)))
    (tmp_path / "a.toml").write_text('[graph]\nsource = "edges"\nedges = [[0, 1], [1, 2], [2, 3], [3, 0]]\n'
                                     '[data]\nsource = "npz"\npath = "d.npz"\n[privacy]\nschedule = "none"\n'
                                     '[algorithm]\nstep = "inv_sqrt"\n')
    assert _main(["run", "zcdp-nfl", str(tmp_path / "a.toml"), "--iterations", "3000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["K"] == 4 and out["edges"] == 4 and out["ne_final"] < 1e-5 and out["privacy"]["epsilon"] is None
    (tmp_path / "b.toml").write_text('[graph]\nsource = "generator"\ngenerator = "random_regular_graph"\n'
                                     'params = { d = 3, n = 10 }\n[model]\nobjective = "ridge"\nclip = 1.0\n')
    assert _main(["run", "zcdp-nfl", str(tmp_path / "b.toml"), "--iterations", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["K"] == 10 and out["edges"] == 15 and out["privacy"]["certified"]


def test_unclipped_squared_loss_is_reported_as_not_certified(tmp_path, capsys):
    (tmp_path / "c.toml").write_text('[graph]\nK = 8\n[model]\nobjective = "ridge"\n')
    assert _main(["run", "zcdp-nfl", str(tmp_path / "c.toml"), "--iterations", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert not out["privacy"]["certified"] and "not certified" in out["privacy"]["status"]


@pytest.mark.parametrize(("body", "field"), [
    ('[graph]\nsource = "torus"\n', "graph.source"),
    ('[graph]\nsource = "edges"\nedges = [[0, 1], [2, 3]]\n', "graph must be connected"),
    ('[graph]\nsource = "edges"\nedges = [[0, 0]]\n', "graph.edges"),
    ('[graph]\nsource = "generator"\ngenerator = "karate"\n', "graph.generator"),
    ('[graph]\nsource = "generator"\ngenerator = "random_regular_graph"\nparams = { d = 3, n = 7 }\n', "graph.params"),
    ('[model]\nobjective = "logistic"\n', "model.objective"),
    ('[model]\nclip = 1.0\n', "model.clip"),
    ('[algorithm]\nstep = "cosine"\n', "algorithm.step"),
    ('[algorithm]\neta0 = 0\n', "algorithm.eta0"),
    ('[privacy]\ntau = 1.5\n', "privacy.tau"),
    ('[privacy]\ndelta = 1.0\n', "privacy.delta"),
    ('[data]\nsource = "npz"\n', "data.path"),
    ('[data]\nsource = "npz"\npath = "missing.npz"\n', "data.path"),
    ('[data]\nM = 0\n', "data.M"),
    ('[simulation]\nruns = 0\n', "simulation.runs"),
    ('[solver]\nx = 1\n', "solver is not a section"),
    ('[algorithm]\nbeta = 1\n', "algorithm.beta is not a field"),
])
def test_bad_field_exits_2_naming_it(tmp_path, capsys, body, field):
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(SystemExit) as exc:
        _main(["run", "zcdp-nfl", str(path), "--iterations", "2"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert field in err[-1]


# ---- the reconstructed baselines (algorithm.method) -------------------------------------------------------------

def _with_method(tmp_path, body):
    path = tmp_path / "m.toml"
    path.write_text('[graph]\nK = 10\n[data]\nP = 3\nM = 20\n' + body)
    return str(path)


@pytest.mark.parametrize("method", ["zcdp_grad_nfl", "p_admm"])
def test_every_reconstructed_baseline_runs_and_is_labelled_a_reconstruction(tmp_path, capsys, method):
    path = _with_method(tmp_path, f'[algorithm]\nmethod = "{method}"\n')
    assert _main(["run", "zcdp-nfl", path, "--iterations", "30", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["algorithm"] == method and out["reconstruction"] and "RECONSTRUCTION" in out["privacy"]["status"]
    assert out["status"] == "ok" and len(out["ne_curve"]) == 31 and np.isclose(out["ne_curve"][0], 10.0)
    assert _main(["run", "zcdp-nfl", path, "--iterations", "30"]) == 0
    assert "reconstruction" in capsys.readouterr().out


@pytest.mark.parametrize(("composition", "rule"), [("basic", "basic composition"), ("advanced", "advanced composition"),
                                                   ("moments", "moments accountant")])
def test_the_papers_eps_delta_baseline_runs_with_every_accounting_rule(tmp_path, capsys, composition, rule):
    """(eps,delta)DP-NFL is the paper's own baseline (not labelled a reconstruction); advanced composition allows
    less noise than basic at the same accounted (eps, delta), so its error ends lower on the same seed."""
    path = _with_method(tmp_path, f'[algorithm]\nmethod = "eps_delta_dp_nfl"\ncomposition = "{composition}"\n')
    assert _main(["run", "zcdp-nfl", path, "--iterations", "200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["algorithm"] == "eps_delta_dp_nfl" and out["reconstruction"] is False
    assert out["composition"] == composition and "RECONSTRUCTION" not in out["privacy"]["status"]
    assert out["status"] == "ok" and np.isclose(out["ne_curve"][0], 10.0)
    assert _main(["run", "zcdp-nfl", path, "--iterations", "30"]) == 0
    assert rule in capsys.readouterr().out


def test_advanced_composition_ends_lower_than_basic(tmp_path, capsys):
    finals = {}
    for composition in ("basic", "advanced"):
        path = _with_method(tmp_path, f'[algorithm]\nmethod = "eps_delta_dp_nfl"\ncomposition = "{composition}"\n')
        assert _main(["run", "zcdp-nfl", path, "--iterations", "200", "--runs", "4", "--json"]) == 0
        finals[composition] = json.loads(capsys.readouterr().out)["ne_final"]
    assert finals["advanced"] < finals["basic"], finals


def test_eps_delta_baseline_is_matched_to_the_zcdp_accounting(tmp_path, capsys):
    """(eps,delta)DP-NFL reports zCDP-NFL's accounted epsilon (Corollary + Bun-Steinke) for the same [privacy]."""
    path = _with_method(tmp_path, '[algorithm]\nmethod = "eps_delta_dp_nfl"\nsplit = "constant"\n')
    assert _main(["run", "zcdp-nfl", path, "--iterations", "200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert np.isclose(out["privacy"]["epsilon"], 6.068483,
                      atol=5e-7)  # docs/papers/zcdp_nfl.md#corollary test vector (phi1 = 1e-3, tau = 0.99)
    assert out["split"] == "constant" and out["privacy"]["total_zcdp"] is None


def test_grad_baseline_takes_a_given_step_or_matches_one(tmp_path, capsys):
    assert _main(["run", "zcdp-nfl", _with_method(tmp_path, '[algorithm]\nmethod = "zcdp_grad_nfl"\nmu = 0.2\n'),
                  "--iterations", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mu"] == 0.2 and not out["mu_matched"]
    assert _main(["run", "zcdp-nfl", _with_method(tmp_path, '[algorithm]\nmethod = "zcdp_grad_nfl"\n'),
                  "--iterations", "10", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mu_matched"]


@pytest.mark.parametrize(("body", "field"), [
    ('[algorithm]\nmethod = "admm"\n', "algorithm.method"),
    ('[algorithm]\nmu = 0.1\n', "algorithm.mu"),
    ('[algorithm]\nmethod = "zcdp_grad_nfl"\nmu = -1.0\n', "algorithm.mu"),
    ('[algorithm]\nsplit = "dynamic"\n', "algorithm.split"),
    ('[algorithm]\nmethod = "eps_delta_dp_nfl"\nsplit = "linear"\n', "algorithm.split"),
    ('[algorithm]\nmethod = "eps_delta_dp_nfl"\n[privacy]\nschedule = "none"\n', "privacy.schedule"),
    ('[algorithm]\nmethod = "eps_delta_dp_nfl"\nsplit = "constant"\n[privacy]\nphi1 = 10.0\n', "privacy.phi1"),
])
def test_bad_baseline_field_exits_2_naming_it(tmp_path, capsys, body, field):
    with pytest.raises(SystemExit) as exc:
        _main(["run", "zcdp-nfl", _with_method(tmp_path, body), "--iterations", "5"])
    assert exc.value.code == 2
    assert field in capsys.readouterr().err.strip().splitlines()[-1]
