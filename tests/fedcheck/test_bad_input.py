"""Bad input never crashes: every command answers a bad option, config field or data file with exit 2,
exactly one stderr line naming it, no traceback and nothing on stdout (issue 12).

One table per command, fed in-process through ``fedcheck.cli.main`` (no subprocess: fast). The tables hold
the classes of the issue: file errors (missing, directory, FIFO, /dev/zero, binary, non-UTF-8, not TOML),
wrong types and ranges, fields that do not apply, corrupt/complex/bool/object/structured/huge-header
``.npy``/``.npz`` data, resource limits and extreme privacy values.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

from fedcheck import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "fedcheck" / "examples"
PAOFED = (EXAMPLES / "paofed_reference.toml").read_text()


def assert_usage_error(capsys, argv, *fields):
    """The contract: exit 2, one stderr line that names every one of ``fields``, no traceback, empty stdout."""
    with pytest.raises(SystemExit) as exc:
        cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert exc.value.code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    assert all(field in err for field in fields), err
    assert err.startswith("fedcheck"), err


# --- files -------------------------------------------------------------------------------------------------

def _file_cases(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Bad CONFIG files: name -> (path, text the message must contain)."""
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"[data]\x00\x01\x02")
    latin = tmp_path / "latin1.toml"
    latin.write_bytes("[instance]\n# caf\xe9\n".encode("latin-1"))
    notoml = tmp_path / "bad.toml"
    notoml.write_text("this is = = not toml")
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    return {
        "missing": (tmp_path / "nope.toml", "does not exist"),
        "directory": (tmp_path, "is a directory"),
        "fifo": (fifo, "not a regular file"),
        "dev_zero": (Path("/dev/zero"), "not a regular file"),
        "binary": (binary, "binary"),
        "not_utf8": (latin, "not UTF-8"),
        "not_toml": (notoml, "not valid TOML"),
    }


FILE_KINDS = ("missing", "directory", "fifo", "dev_zero", "binary", "not_utf8", "not_toml")
CONFIG_COMMANDS = {
    "run pgfl": ["run", "pgfl", "{}", "--iterations", "3"],
    "run paofed": ["run", "paofed", "{}", "--iterations", "3"],
    "msd": ["msd", "{}"],
}


@pytest.mark.parametrize("kind", FILE_KINDS)
@pytest.mark.parametrize("command", sorted(CONFIG_COMMANDS))
def test_bad_config_files(tmp_path, capsys, command, kind):
    path, text = _file_cases(tmp_path)[kind]
    argv = [str(path) if a == "{}" else a for a in CONFIG_COMMANDS[command]]
    assert_usage_error(capsys, argv, text)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_config(tmp_path, capsys):
    path = tmp_path / "c.toml"
    path.write_text("[algorithm]\nrho = 1\n")
    path.chmod(0)
    assert_usage_error(capsys, ["run", "pgfl", path], "permission denied")


# --- run pgfl ----------------------------------------------------------------------------------------------

def _pgfl_npz(path: Path, **override) -> Path:
    rng = np.random.default_rng(0)
    arrays = {"client_server": np.array([0, 0, 1, 1]), "client_cluster": np.array([0, 1, 0, 1])}
    for k in range(4):
        arrays[f"X_{k}"] = rng.standard_normal((3, 2))
        arrays[f"y_{k}"] = rng.standard_normal(3)
    arrays.update(override)
    arrays = {k: v for k, v in arrays.items() if v is not None}
    np.savez(path, **arrays)
    return path


def _huge_header_npz(path: Path) -> Path:
    """An .npz whose member header claims a (10**6, 10**6) float array but holds 16 bytes."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)})
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("X_0.npy", buf.getvalue() + b"\0" * 16)
    return path


PGFL_NPZ = {  # name -> (arrays override or a writer, text the message must contain)
    "complex_X": ({"X_0": np.ones((3, 2)) + 1j}, "complex"),
    "bool_X": ({"X_0": np.ones((3, 2), dtype=bool)}, "boolean"),
    "nan_y": ({"y_1": np.array([0.0, np.nan, 1.0])}, "finite"),
    "fractional_client_server": ({"client_server": np.array([0, 0.5, 1, 1])}, "client_server"),
    "negative_client_server": ({"client_server": np.array([0, -1, 1, 1])}, "client_server"),
    "server_without_clients": ({"client_server": np.array([0, 0, 2, 2])}, "server 1 has no client"),
    "cluster_without_clients": ({"client_cluster": np.array([0, 2, 0, 2])}, "cluster 1 has no client"),
    "adjacency_half": ({"adjacency": np.array([[0, 0.5], [0.5, 0]])}, "adjacency"),
    "adjacency_nan": ({"adjacency": np.array([[0, np.nan], [np.nan, 0]])}, "adjacency"),
    "adjacency_minus_one": ({"adjacency": np.array([[0, -1], [-1, 0]])}, "adjacency"),
    "X_1d": ({"X_2": np.ones(3)}, "X_2"),
    "missing_y": ({"y_3": None}, "y_3"),
    "extra_key": ({"bogus": np.ones(2)}, "bogus"),
    "object_array": (None, "object"),
    "structured_array": ({"true_models": np.zeros(2, dtype=[("a", "<f8"), ("b", "<i4")])}, "structured"),
    "empty_file": (b"", "not an .npz"),
    "corrupt_zip": (b"PK\x03\x04garbage", "not an .npz"),
    "text_file": (b"hello", "not an .npz"),
    "huge_header": ("huge", "header claims"),
}


def _write_pgfl_data(tmp_path: Path, case) -> Path:
    spec, _ = PGFL_NPZ[case]
    path = tmp_path / "data.npz"
    if isinstance(spec, bytes):
        path.write_bytes(spec)
    elif spec == "huge":
        _huge_header_npz(path)
    elif spec is None:  # an object array saved with pickles
        with zipfile.ZipFile(path, "w") as zf:
            buf = io.BytesIO()
            np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
            zf.writestr("client_server.npy", buf.getvalue())
    else:
        _pgfl_npz(path, **spec)
    return path


@pytest.mark.parametrize("case", sorted(PGFL_NPZ))
def test_run_pgfl_bad_npz_data(tmp_path, capsys, case):
    _write_pgfl_data(tmp_path, case)
    config = tmp_path / "c.toml"
    config.write_text('[data]\nsource = "npz"\npath = "data.npz"\n[algorithm]\nrho = 1.0\n')
    assert_usage_error(capsys, ["run", "pgfl", config, "--iterations", "3"], PGFL_NPZ[case][1])


def test_run_pgfl_accepts_the_documented_npz_variants(tmp_path, capsys):
    """Not over-strict: a boolean adjacency and exact-integer floats for the client indices are fine."""
    _pgfl_npz(tmp_path / "data.npz", adjacency=np.array([[False, True], [True, False]]),
              client_server=np.array([0.0, 0.0, 1.0, 1.0]))
    (tmp_path / "c.toml").write_text('[data]\nsource = "npz"\npath = "data.npz"\n[algorithm]\nrho = 1.0\n')
    assert cli.main(["run", "pgfl", str(tmp_path / "c.toml"), "--iterations", "2", "--json"]) == 0
    assert '"status": "ok"' in capsys.readouterr().out


PGFL_FIELDS = [
    ("[algorithm]\nrho = 1\ntau_decay = 0.9\n", "algorithm.tau_decay"),
    ("[data]\npath = 'x.npz'\n[algorithm]\nrho = 1\n", "data.path"),
    ("[data]\nsource = 'npz'\npath = 'x.npz'\nservers = 3\n[algorithm]\nrho = 1\n", "data.servers"),
    ("[algorithm]\nrho = 1\ntaus = [true, false]\n", "algorithm.taus"),
    ("[algorithm]\nrho = 1\ntaus = []\n", "algorithm.taus"),
    ("[algorithm]\nrho = 1\ntaus = [0.5, 1.5]\n", "algorithm.taus"),
    ("[algorithm]\nrho = 1\nscheduled = 16\n", "algorithm.scheduled"),
    ("[algorithm]\nrho = 1\nscheduled = 0\n", "algorithm.scheduled"),
    ("[algorithm]\nrho = 'big'\n", "algorithm.rho"),
    ("[algorithm]\nrho = inf\n", "algorithm.rho"),
    ("[algorithm]\nrho = nan\n", "algorithm.rho"),
    ("[algorithm]\nrho = true\n", "algorithm.rho"),
    ("[algorithm]\nrho = 1\nname = 3\n", "algorithm.name"),
    ("[data]\nd = 10000000\n[algorithm]\nrho = 1\n", "data.d"),
    ("[data]\nd = 2.5\n[algorithm]\nrho = 1\n", "data.d"),
    ("[data]\nservers = -3\n[algorithm]\nrho = 1\n", "data.servers"),
    ("[data]\nsamples_min = 5\nsamples_max = 2\n[algorithm]\nrho = 1\n", "data.samples_max"),
    ("[model]\nloss = 'logistic'\n[algorithm]\nrho = 1\n", "model.loss"),
    ("[algorithm]\nrho = 1\n[privacy]\nphi0 = 1\n", "privacy"),
    ("[algorithm]\nrho = 1\nname = 'alg2'\n[privacy]\nC = 1e308\n", "privacy.phi0"),
    ("data = 3\n", "data"),
    ("[bogus]\nx = 1\n", "bogus"),
    ("[algorithm]\nrho = 1\nbogus = 2\n", "algorithm.bogus"),
]


@pytest.mark.parametrize(("text", "field"), PGFL_FIELDS)
def test_run_pgfl_bad_fields(tmp_path, capsys, text, field):
    (tmp_path / "c.toml").write_text(text)
    assert_usage_error(capsys, ["run", "pgfl", tmp_path / "c.toml", "--iterations", "3"], field)


PGFL_OPTIONS = [
    (["--runs", "1000000000"], "--runs"),
    (["--iterations", "1000000000000"], "--iterations"),
    (["--runs", "0"], "--runs"),
    (["--iterations", "x"], "--iterations"),
    (["--seed", "-1"], "--seed"),
]


@pytest.mark.parametrize(("options", "option"), PGFL_OPTIONS)
def test_run_pgfl_bad_options(tmp_path, capsys, options, option):
    (tmp_path / "c.toml").write_text("[algorithm]\nrho = 1\n")
    argv = ["run", "pgfl", tmp_path / "c.toml", "--iterations", "3", *options]
    assert_usage_error(capsys, argv, option)


# --- run paofed and msd (shared [instance] parser) ---------------------------------------------------------

def _npy(path: Path, array) -> str:
    np.save(path, array)
    return path.name


INSTANCE_FIELDS = [
    ("D = 10000000\nw_star = [0.0]", "instance.w_star must be a list of D = 10000000 reals"),
    ("D = 2.5", "instance.D"),
    ("K = 0", "instance.K"),
    ("m = 9", "instance.m"),
    ("selection = 'random'", "instance.selection"),
    ("p = [0.9, 0.6, 0.4, 1.5]", "instance.p"),
    ("p = [0.9, 0.6]", "instance.p"),
    ("delta = 1.0", "instance.delta"),
    ("delta = 'x'", "instance.delta"),
    ("alpha = [2.0, 0.5, 0.25]", "instance.alpha"),
    ("alpha = [1.0, 1e308, 0.25]", "instance.alpha"),  # its square overflows the second moments
    ("sigma2_eta = [0.01, -1, 0.1, 0.1]", "instance.sigma2_eta"),
    ("toeplitz_rho = [0.1, 0.3, 0.5, 1.0]", "instance.toeplitz_rho"),
    ("toeplitz_rho = [true, false, true, false]", "instance.toeplitz_rho"),
    ("white_variances = [1, 1, 1, 0]", "instance.white_variances"),
    ("R = [[[1.0]]]", "instance.R"),
    ("w_star = [1, 2]", "instance.w_star"),
    ("mu = -1", "instance.mu"),
    ("mu = 1\nmu_times_lambda_max = 0.1", "instance.mu"),
    ("mu_times_lambda_max = inf", "instance.mu_times_lambda_max"),
    ("l_max = 100000000", "instance.alpha must be a list of l_max + 1 = 100000001 reals"),
    ("bogus = 1", "instance.bogus"),
]


def _instance_config(tmp_path: Path, fields: str, *, replace_toeplitz: bool = False) -> Path:
    base = PAOFED.replace("mu_times_lambda_max = 0.1 ", "").split("[data]")[0]
    lines = [ln for ln in base.splitlines() if not any(ln.startswith(f.split(" ")[0] + " ")
                                                        for f in fields.splitlines())]
    if replace_toeplitz:
        lines = [ln for ln in lines if not ln.startswith("toeplitz_rho")]
    path = tmp_path / "c.toml"
    path.write_text("\n".join(lines) + "\n" + fields + "\n")
    return path


R_NPY = {  # name -> (writer(tmp_path) -> field text, message text)
    "all_zero_R": (lambda t: f"R_npy = '{_npy(t / 'r.npy', np.zeros((4, 5, 5)))}'", "lambda_max = 0"),
    "complex_R": (lambda t: f"R_npy = '{_npy(t / 'r.npy', np.eye(5)[None].repeat(4, 0) + 0j)}'", "complex"),
    "bool_R": (lambda t: f"R_npy = '{_npy(t / 'r.npy', np.eye(5, dtype=bool)[None].repeat(4, 0))}'", "booleans"),
    "nan_R": (lambda t: f"R_npy = '{_npy(t / 'r.npy', np.full((4, 5, 5), np.nan))}'", "finite"),
    "shape_R": (lambda t: f"R_npy = '{_npy(t / 'r.npy', np.ones((5, 5)))}'", "shape"),
    "npz_as_npy": (lambda t: (np.savez(t / "r.npz", R=np.ones(3)), "R_npy = 'r.npz'")[1], ".npz (zip)"),
    "text_as_npy": (lambda t: ((t / "r.npy").write_text("hello"), "R_npy = 'r.npy'")[1], "not an .npy"),
    "missing_npy": (lambda t: "R_npy = 'none.npy'", "does not exist"),
    "huge_header": (lambda t: ((t / "r.npy").write_bytes(_huge_npy()), "R_npy = 'r.npy'")[1], "header claims"),
    "truncated": (lambda t: ((t / "r.npy").write_bytes(_truncated_npy()), "R_npy = 'r.npy'")[1], "holds only"),
}


def _huge_npy() -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (10**5, 10**5, 4)})
    return buf.getvalue()


def _truncated_npy() -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.ones((4, 5, 5)))
    return buf.getvalue()[:-40]


@pytest.mark.parametrize(("fields", "field"), INSTANCE_FIELDS)
@pytest.mark.parametrize("command", ["run paofed", "msd"])
def test_instance_bad_fields(tmp_path, capsys, command, fields, field):
    path = _instance_config(tmp_path, fields, replace_toeplitz=any(
        fields.startswith(f) for f in ("white_variances", "R ")))
    argv = [str(path) if a == "{}" else a for a in CONFIG_COMMANDS[command]]
    assert_usage_error(capsys, argv, field)


@pytest.mark.parametrize("case", sorted(R_NPY))
@pytest.mark.parametrize("command", ["run paofed", "msd"])
def test_instance_bad_R_npy(tmp_path, capsys, command, case):
    writer, text = R_NPY[case]
    path = _instance_config(tmp_path, writer(tmp_path), replace_toeplitz=True)
    argv = [str(path) if a == "{}" else a for a in CONFIG_COMMANDS[command]]
    assert_usage_error(capsys, argv, "instance.R_npy", text)


PAOFED_FIELDS = [
    ("[data]\nsource = 'synthetic-rff'\ndata_groups = [500.5, 1000]\n", "data.data_groups"),
    ("[data]\nsource = 'synthetic-rff'\ndata_groups = [true]\n", "data.data_groups"),
    ("[data]\nsource = 'synthetic-rff'\nD = 100000000\n", "data.D"),
    ("[data]\nsource = 'synthetic-rff'\nK = 'many'\n", "data.K"),
    ("[data]\nsource = 'linear'\nK = 3\n", "data.K"),
    ("[data]\nsource = 'rff'\n", "data.source"),
    ("[simulation]\niterations = 0\n", "simulation.iterations"),
    ("[algorithm]\nmu = 0.1\n", "algorithm.mu"),
    ("[environment]\ndelta = 0.1\n", "environment"),
]


@pytest.mark.parametrize(("text", "field"), PAOFED_FIELDS)
def test_run_paofed_bad_fields(tmp_path, capsys, text, field):
    (tmp_path / "c.toml").write_text(text)
    assert_usage_error(capsys, ["run", "paofed", tmp_path / "c.toml", "--iterations", "3"], field)


@pytest.mark.parametrize(("options", "option"), [
    (["--runs", "1000000000"], "--runs"),
    (["--iterations", "1000000000000"], "--iterations"),
    (["--algorithm", "nope"], "--algorithm"),
])
def test_run_paofed_bad_options(tmp_path, capsys, options, option):
    argv = ["run", "paofed", EXAMPLES / "paofed_reference.toml", *options]
    assert_usage_error(capsys, argv, option)


MSD_CASES = [
    ("", [], "instance"),  # an empty config must not silently report the reference instance
    ("[data]\nsource = 'synthetic-rff'\n", [], "data.source"),
    ("[instance]\nmu = 1e-300\n", [], "instance.mu"),
    ("[instance]\nmu_times_lambda_max = 1e-12\n", [], "instance.mu_times_lambda_max"),
    ("[instance]\n", ["--transient", "1000000000"], "--transient"),
    ("[instance]\n", ["--transient", "-1"], "--transient"),
    ("[instance]\n", ["--csv", "x.csv"], "--csv"),
    ("[instance]\n", ["--force"], "--force"),
    ("[instance]\n", ["--method", "fast"], "--method"),
]


@pytest.mark.parametrize(("text", "options", "option"), MSD_CASES)
def test_msd_bad_input(tmp_path, capsys, text, options, option):
    (tmp_path / "c.toml").write_text(text)
    assert_usage_error(capsys, ["msd", tmp_path / "c.toml", *options], option)


def test_msd_csv_refuses_an_existing_file_without_force(tmp_path, capsys):
    (tmp_path / "c.toml").write_text("[instance]\n")
    target = tmp_path / "curve.csv"
    target.write_text("my data\n")
    assert_usage_error(capsys, ["msd", tmp_path / "c.toml", "--transient", "3", "--csv", target], "--force")
    assert target.read_text() == "my data\n"


# --- privacy -----------------------------------------------------------------------------------------------

ACCOUNT = ["privacy", "account", "--delta", "1e-5"]
CALIBRATE = ["privacy", "calibrate", "--delta", "1e-5", "--rounds", "10"]
PRIVACY_CASES = [
    (ACCOUNT + ["--rounds", "10", "--rho-first", "1e308"], "--rho-first"),
    (ACCOUNT + ["--rounds", "2000", "--rho-first", "1", "--rho-growth", "2"], "--rho-growth"),
    (ACCOUNT + ["--rounds", "10", "--sigma", "1e-300", "--sensitivity", "1"], "--sigma"),
    (ACCOUNT + ["--rounds", "10", "--sigma", "1", "--sensitivity", "1e300"], "--sensitivity"),
    (ACCOUNT + ["--rounds", "10", "--variance-first", "1", "--variance-decay", "1e-300", "--sensitivity", "1"],
     "--variance-decay"),
    (ACCOUNT + ["--rounds", "1000000000000", "--rho-first", "1"], "--rounds"),
    (ACCOUNT + ["--rounds", "0", "--rho-first", "1"], "--rounds"),
    (ACCOUNT + ["--rounds", "10", "--sigma", "nan", "--sensitivity", "1"], "--sigma"),
    (ACCOUNT + ["--rounds", "10", "--sigma", "inf", "--sensitivity", "1"], "--sigma"),
    (ACCOUNT + ["--rounds", "10", "--sigma", "1"], "--sensitivity"),
    (["privacy", "account", "--delta", "0", "--rounds", "10", "--rho-first", "1"], "--delta"),
    (CALIBRATE + ["--epsilon", "1e300", "--sensitivity", "1"], "--epsilon"),
    (CALIBRATE + ["--epsilon", "1", "--sensitivity", "1e300"], "--sensitivity"),
    (["privacy", "calibrate", "--delta", "1e-5", "--rounds", "5000", "--epsilon", "1", "--sensitivity", "1",
      "--variance-decay", "0.5"], "--variance-decay"),
    (CALIBRATE + ["--epsilon", "-1", "--sensitivity", "1"], "--epsilon"),
]


@pytest.mark.parametrize(("argv", "option"), PRIVACY_CASES)
def test_privacy_bad_input(capsys, argv, option):
    assert_usage_error(capsys, argv, option)


# --- report ------------------------------------------------------------------------------------------------

def _report_cases(tmp_path: Path):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "index.html").write_text("<p>mine</p>")
    return [
        (["--out", a_file], "--out"),
        (["--out", a_file / "sub"], "--out"),
        (["--out", foreign], "--out"),
        (["--dask-timeout", "0", "--dask-scheduler", "tcp://127.0.0.1:9"], "--dask-timeout"),
        (["--dask-timeout", "5"], "--dask-timeout"),
        (["--dask-scheduler", "no-scheme"], "--dask-scheduler"),
        (["--only", "nothing"], "--only"),
        (["--workers", "0"], "--workers"),
    ]


@pytest.mark.parametrize("case", range(8))
def test_report_bad_input_before_any_check_runs(tmp_path, capsys, monkeypatch, case):
    ran = []
    monkeypatch.setattr("verify.runner.run_claims", lambda *a, **k: ran.append(1) or [])
    options, option = _report_cases(tmp_path)[case]
    assert_usage_error(capsys, ["report", "--quiet", *options], option)
    assert not ran
    if option == "--out" and (tmp_path / "foreign").is_dir():
        assert (tmp_path / "foreign" / "index.html").read_text() == "<p>mine</p>"


# --- the handler itself -----------------------------------------------------------------------------------

def test_ctrl_c_exits_130_with_one_line(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr("fedcheck.privacy.run_privacy", interrupted)
    code = cli.main(["privacy", "account", "--rounds", "2", "--delta", "1e-5", "--rho-first", "1"])
    out, err = capsys.readouterr()
    assert code == 130 and out == "" and err == "fedcheck: interrupted\n"  # 128 + SIGINT, the shell convention


def test_closed_stdout_ends_quietly(monkeypatch, capsys):
    def closed(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("fedcheck.privacy.run_privacy", closed)
    code = cli.main(["privacy", "account", "--rounds", "2", "--delta", "1e-5", "--rho-first", "1"])
    assert code == 141 and capsys.readouterr().err == ""  # 128 + SIGPIPE


def _run_plugins() -> list[str]:
    """Every ``fedcheck run`` sub-command registered now (the plug-ins of RUN_PLUGINS and pgfl)."""
    import argparse

    parser = cli._build_parser()
    top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    run = top.choices["run"]
    algorithms = next(a for a in run._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(algorithms.choices)


@pytest.mark.parametrize("kind", ["missing", "fifo", "dev_zero", "binary", "not_utf8", "not_toml"])
def test_every_run_plugin_refuses_bad_config_files(tmp_path, capsys, kind):
    """The shared loader (fedcheck._config.load_table) and the one handler cover every plug-in."""
    path, text = _file_cases(tmp_path)[kind]
    for name in _run_plugins():
        assert_usage_error(capsys, ["run", name, path], "CONFIG", text)


def test_msd_csv_force_replaces_the_file_atomically(tmp_path, capsys):
    (tmp_path / "c.toml").write_text("[instance]\n")
    target = tmp_path / "curve.csv"
    target.write_text("old\n")
    assert cli.main(["msd", str(tmp_path / "c.toml"), "--model", "seed", "--transient", "3", "--csv", str(target),
                     "--force", "--json"]) == 0
    rows = target.read_text().splitlines()
    assert rows[0] == "n,msd_db_seed" and len(rows) == 5  # header + iterations 0..3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.toml", "curve.csv"]  # no temporary left
    capsys.readouterr()
