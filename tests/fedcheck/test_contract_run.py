"""The input contract of the four newest ``fedcheck run`` commands (issues 25 and 28): every hostile configuration
ends in exit status 2 and one stderr line naming the user's field (never a traceback, never a silent clamp, never a
field that does not apply accepted), and sizes are refused from the estimate before anything is allocated.

One table per kind of failure; each row is (command, config text, extra options, what the line must contain).
The work limit is lowered to 10^9 operations for the whole module (about a second), so a configuration that is
wrongly accepted ends quickly instead of running for minutes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fedcheck import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "fedcheck" / "examples"
FEDPDM_NC = ('[problem]\nsource = "nc"\nN = 4\nn = 10\nd = 3\n'
             '[algorithm]\nK = 2\nrounds = 3\nbatch_size = 2\nrho = 10.0\n'
             'eta0 = 0.05\neta_schedule = "constant"\nnu = 0.01\nQ_max = 2\n')


@pytest.fixture(autouse=True)
def small_work_limit(monkeypatch):
    """Every accepted configuration must be cheap: the estimate refuses anything above 10^9 operations."""
    monkeypatch.setattr("fedcheck.run._budget.MAX_WORK", 10**9)


def assert_usage_error(capsys, tmp_path, command, text, options, *needles):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", command, str(path), *options])
    out, err = capsys.readouterr()
    assert exc.value.code == 2, err
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"fedcheck run {command}: error: "), err
    assert "np.float64" not in err and "np.int64" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


#: Sizes that used to hang or ran for minutes: refused from the estimate, naming the field that drives them.
SIZES = [
    ("gtv", "[graph]\nsizes = [200000, 200000]\n", [], "graph.sizes:"),
    ("gtv", "[data]\nd = 100000000\n", [], "data.d:"),
    ("gtv", "[data]\nd = 4\n[algorithm]\niterations = 10000000000000\n", [], "algorithm.iterations:"),
    ("gtv", "[data]\nd = 4\n", ["--iterations", "10000000000"], "argument --iterations:"),
    ("zcdp-nfl", "[graph]\nK = 200000\n", [], "graph.K:", "too unlikely"),
    ("zcdp-nfl", "[graph]\nK = 3000\n", [], "graph.K:", "too unlikely"),
    ("zcdp-nfl", "[data]\nP = 100000000\n", [], "data.P:"),
    ("zcdp-nfl", "[privacy]\nschedule = 'none'\n", ["--iterations", "1000000000"], "argument --iterations:"),
    ("zcdp-nfl", "[graph]\nsource = 'generator'\ngenerator = 'complete_graph'\nparams = { n = 3000000 }\n", [],
     "graph.params:"),
    ("zcdp-nfl", "[graph]\nsource = 'generator'\ngenerator = 'complete_graph'\nparams = { m = 3 }\n", [],
     "graph.params.m is not a parameter of complete_graph"),
    ("zcdp-nfl", "[graph]\nsource = 'generator'\ngenerator = 'gnp_random_graph'\nparams = { n = 10, p = 'x' }\n", [],
     "graph.params.p must be"),
    ("npfl-rl", "[instance]\nK = 2000\n", [], "instance.K:"),
    ("npfl-rl", "[instance]\nK = 5000000\n", [], "instance."),
    ("npfl-rl", "[instance]\nK = 400\nmean_degree = 1.0\n", [], "instance.mean_degree:", "too unlikely"),
    ("fedpdm", FEDPDM_NC.replace("rounds = 3", "rounds = 2000000"), [], "algorithm.rounds:"),
    ("fedpdm", FEDPDM_NC.replace("d = 3", "d = 1000000"), [], "problem.d:"),
    ("fedpdm", FEDPDM_NC.replace("N = 4", "N = 100000000"), [], "problem."),
]


@pytest.mark.parametrize(("command", "text", "options", *["needle"]), [(c, t, o, n[0]) for c, t, o, *n in SIZES])
def test_sizes_are_refused_from_the_estimate(tmp_path, capsys, command, text, options, needle):
    assert_usage_error(capsys, tmp_path, command, text, options, needle)


#: Fields that do not apply to the rest of the configuration (they used to be accepted silently, exit 0).
NOT_APPLICABLE = [
    ("zcdp-nfl", "[privacy]\nschedule = 'none'\nphi1 = 0.1\n", "privacy.phi1 does not apply"),
    ("zcdp-nfl", "[privacy]\nschedule = 'S2'\nsigma2_0 = 0.1\n", "privacy.sigma2_0 does not apply"),
    ("zcdp-nfl", "[model]\nobjective = 'ridge'\nlam1 = 0.1\n", "model.lam1 does not apply"),
    ("zcdp-nfl", "[model]\nobjective = 'lad'\nlam = 0.1\n", "model.lam does not apply"),
    ("zcdp-nfl", "[graph]\nsource = 'edges'\nK = 40\nedges = [[0, 1], [1, 2]]\n", "graph.K does not apply"),
    ("zcdp-nfl", "[graph]\nsource = 'edges'\nseed = 3\nedges = [[0, 1], [1, 2]]\n", "graph.seed does not apply"),
    ("zcdp-nfl", "[algorithm]\nmethod = 'p_admm'\nstep = 'inv'\n", "algorithm.step does not apply"),
    ("zcdp-nfl", "[algorithm]\nsplit = 'constant'\n", "algorithm.split does not apply"),
    ("npfl-rl", "[algorithm]\npolicy = 'fixed'\ndelta = 0.1\n", "algorithm.delta does not apply"),
    ("npfl-rl", "[algorithm]\npolicy = 'fixed'\nnu = 0.1\n", "algorithm.nu does not apply"),
    ("npfl-rl", "[algorithm]\npolicy = 'sac'\nprojection = false\nclip_candidates = true\n",
     "algorithm.clip_candidates does not apply"),
    ("npfl-rl", "[algorithm]\nalgorithm = 'nfl'\ntau0 = 0.1\n", "algorithm.tau0 does not apply"),
    ("fedpdm", FEDPDM_NC + "noise = 'dp'\nsigma = 0.5\n", "algorithm.sigma does not apply"),
    ("fedpdm", FEDPDM_NC + "epsilon_total = 3.0\n", "algorithm.epsilon_total does not apply"),
    ("fedpdm", FEDPDM_NC + "noise = 'none'\nG = 3.0\n", "algorithm.G does not apply"),
    ("fedpdm", FEDPDM_NC + "noise = 'fixed'\nepsilon = 2.0\n", "algorithm.epsilon does not apply"),
    ("fedpdm", FEDPDM_NC + "init_scale = 0.3\n", "algorithm.init_scale does not apply"),
    ("fedpdm", FEDPDM_NC + "[arm]\nname = 'fedavg'\nmu = 0.3\n", "arm.mu does not apply"),
    ("gtv", "[graph]\ngenerator = 'chain'\nsizes = [3, 3]\n", "graph.sizes does not apply"),
    ("gtv", "[model]\nloss = 'squared'\ngamma = 0.1\n", "model.gamma does not apply"),
    ("gtv", "[data]\nrho = 0.5\n", "data.rho does not apply"),
    ("gtv", "[data]\nsource = 'npz'\npath = 'x.npz'\n[graph]\ngenerator = 'sbm'\n", "graph:"),
]


@pytest.mark.parametrize(("command", "text", "needle"), NOT_APPLICABLE)
def test_fields_that_do_not_apply_are_refused(tmp_path, capsys, command, text, needle):
    assert_usage_error(capsys, tmp_path, command, text, [], needle)


def test_an_option_that_does_not_apply_is_refused(tmp_path, capsys):
    (tmp_path / "d.npz").write_bytes(b"")
    assert_usage_error(capsys, tmp_path, "gtv", "[data]\nsource = 'npz'\npath = 'd.npz'\n", ["--seed", "3"],
                "argument --seed: does not apply here")


#: Values in range that make a derived quantity or a generated object meaningless: named as what they are.
DERIVED = [
    ("gtv", "[graph]\np_in = 0.0\np_out = 0.0\n", "graph.p_in:", "no edge"),
    ("gtv", "[graph]\np_in = 1e-300\n", "graph.p_in must be 0 or at least 1e-15"),
    ("gtv", "[graph]\nsizes = [1, 5]\n", "graph.sizes[0] must be", "got 1"),
    ("gtv", "[graph]\nweights = [-1.0, 2.0]\n", "graph.weights[0] must be", "got -1.0"),
    ("gtv", "[graph]\nweights = [2.0, 1.0]\n", "graph.weights must be a list [lo, hi]"),
    ("gtv", "[graph]\ngenerator = 'dense'\nN = 3\nk = 2\nn_inter = 100\n",
     "graph.n_inter must be an integer in [0, N^2 k (k - 1) / 2 = 9]"),
    ("gtv", "[graph]\ngenerator = 'dense'\neps = 0.0\n", "graph.eps must be a real > 0"),
    ("gtv", "[graph]\ngenerator = 'edges'\nedges = [[0, 1], [1, 2]]\nclusters = [0, 1]\n", "graph.clusters must be"),
    ("gtv", "[model]\npenalty = 'quad'\nQ = [[1.0]]\n", "model.Q must be a symmetric d x d"),
    ("zcdp-nfl", "[privacy]\nschedule = 'S1'\ntau = 0.9\nsigma2_0 = 0.01\n[simulation]\niterations = 8000\n",
     "privacy.tau:", "overflows"),
    ("zcdp-nfl", "[privacy]\nphi1 = 1e300\ntau = 0.5\n", "privacy.tau:", "overflows"),
    ("zcdp-nfl", "[model]\nobjective = 'ridge'\nclip = 1e100\n[privacy]\nc1 = 1.7e308\n[simulation]\niterations = 3\n",
     "privacy.c1:", "sensitivity"),
    ("zcdp-nfl", "[data]\nP = 3\nzero_coordinates = 3\n",
     "data.zero_coordinates must be an integer in [0, data.P = 3)"),
    ("zcdp-nfl", "[algorithm]\nmethod = 'eps_delta_dp_nfl'\n[privacy]\nschedule = 'none'\n", "algorithm.method"),
    ("npfl-rl", "[algorithm]\npolicy = 'sac'\nnu = 0.0\n", "algorithm.nu must be a real > 0"),
    ("npfl-rl", "[instance]\nK = 4\nQ = 5\n", "instance.Q must be an integer in [1, instance.K = 4]"),
    ("npfl-rl", "[instance]\nD_min = 5\nD_max = 4\n", "instance.D_max must be an integer >= instance.D_min = 5"),
    ("fedpdm", FEDPDM_NC.replace("K = 2", "K = 5"), "algorithm.K must be an integer in [1, problem.N = 4]"),
    ("fedpdm", FEDPDM_NC + "epsilon = 1e-300\n", "algorithm.epsilon:", "noise multiplier"),
    ("fedpdm", FEDPDM_NC + "epsilon = 1e-320\n", "algorithm.epsilon"),
    ("fedpdm", FEDPDM_NC + "delta = 1e-320\n", "algorithm.delta must be a real in [1e-300, 1)"),
    ("fedpdm", FEDPDM_NC.replace("Q_max = 2", "Q_max = 7"), "algorithm.Q_max * batch_size must be <= |D_i| = 10"),
]


@pytest.mark.parametrize(("command", "text", *["needles"]), [(c, t, n) for c, t, *n in DERIVED])
def test_derived_quantities_are_named_as_what_they_are(tmp_path, capsys, command, text, needles):
    assert_usage_error(capsys, tmp_path, command, text, [], *needles)


def _bad_npz(tmp_path: Path, kind: str) -> str:
    import numpy as np

    path = tmp_path / "d.npz"
    if kind == "corrupt":
        path.write_bytes(b"garbage")
    elif kind == "nan":
        np.savez(path, x_train=np.full((8, 4, 4), np.nan), y_train=np.arange(8) % 10, x_test=np.ones((2, 4, 4)),
                 y_test=np.arange(2))
    elif kind == "missing":
        np.savez(path, x_train=np.ones((8, 4, 4)))
    elif kind == "labels":
        np.savez(path, x_train=np.ones((8, 4, 4)), y_train=np.arange(8) + 20, x_test=np.ones((2, 4, 4)),
                 y_test=np.arange(2))
    else:  # complex
        np.savez(path, x_train=np.ones((8, 4, 4)) + 1j, y_train=np.arange(8), x_test=np.ones((2, 4, 4)),
                 y_test=np.arange(2))
    return "d.npz"


@pytest.mark.parametrize(("kind", "needle"), [("corrupt", "not an .npz file"), ("nan", "finite"),
                                              ("missing", "missing y_train"), ("labels", "labels in 0..9"),
                                              ("complex", "complex")])
def test_fedpdm_data_file_is_named_by_its_field(tmp_path, capsys, kind, needle):
    name = _bad_npz(tmp_path, kind)
    text = FEDPDM_NC.replace('source = "nc"\nN = 4\nn = 10\nd = 3', f'source = "mnist_npz"\npath = "{name}"\nN = 4')
    err = assert_usage_error(capsys, tmp_path, "fedpdm", text, [], "problem.path", needle)
    assert "problem.d.npz" not in err and "problem.features" not in err


@pytest.mark.parametrize(("text", "needle"), [
    ("[data]\nsource = 'npz'\npath = 'd.npz'\n", "data.path"),
])
def test_zcdp_nfl_npz_goes_through_the_guarded_loader(tmp_path, capsys, text, needle):
    import io
    import zipfile

    import numpy as np

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6, 4)})
    with zipfile.ZipFile(tmp_path / "d.npz", "w") as zf:
        zf.writestr("X.npy", buf.getvalue() + b"\0" * 16)
    assert_usage_error(capsys, tmp_path, "zcdp-nfl", text, [], needle, "header claims")


def test_a_valid_config_whose_privacy_total_overflows_is_refused_not_crashed(tmp_path, capsys):
    """S1 with tau = 0.9 over 8000 iterations: sigma^2 underflows, the total zCDP overflows; the message names
    privacy.tau and the overflow, not another field's range."""
    err = assert_usage_error(capsys, tmp_path, "zcdp-nfl",
                      "[privacy]\nschedule = 'S1'\ntau = 0.9\nsigma2_0 = 0.01\n[simulation]\niterations = 8000\n", [],
                      "privacy.tau", "total zCDP overflows")
    assert "phi1" not in err.split("error:")[1].split(":")[0]


@pytest.mark.parametrize("command", ["gtv", "zcdp-nfl", "npfl-rl", "fedpdm", "pgfl", "paofed"])
def test_every_run_refuses_work_beyond_the_limit_naming_a_field(tmp_path, capsys, monkeypatch, command):
    """With a tiny work limit every shipped example is refused from its estimate, before any work."""
    monkeypatch.setattr("fedcheck.run._budget.MAX_WORK", 10)
    example = {"pgfl": "pgfl_regression.toml", "paofed": "paofed_reference.toml", "zcdp-nfl": "zcdp_nfl.toml",
               "gtv": "gtv.toml", "fedpdm": "fedpdm.toml", "npfl-rl": "npfl_rl.toml"}[command]
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", command, str(EXAMPLES / example)])
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and out == "" and err.count("\n") == 1
    assert "more than the limit of 10" in err and err.split("error: ")[1].split(":")[0].strip(), err
