"""Exit status 3 (valid input, a solver that did not converge), the mode of written files, ``--version``."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from fedcheck import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "fedcheck" / "examples"


def test_msd_whose_solver_does_not_converge_exits_3_not_2(monkeypatch, capsys):
    """A valid instance whose Arnoldi stops at its restart cap is not a usage error: exit 3, one line."""
    from theory.msd import routes

    def capped(instance):
        raise ValueError("rho(M_sym) at mu = 0.004: Arnoldi did not converge within 3000 restarts")

    monkeypatch.setattr(routes, "mean_threshold_fast", capped)
    assert cli.main(["msd", str(EXAMPLES / "paofed_reference.toml")]) == 3
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("fedcheck msd: not converged: instance: rho(M_sym)") and "3000 restarts" in err


def test_msd_other_value_errors_stay_usage_errors(monkeypatch, capsys):
    from theory.msd import routes

    def bad(instance):
        raise ValueError("the instance is degenerate")

    monkeypatch.setattr(routes, "mean_threshold_fast", bad)
    with pytest.raises(SystemExit) as exc:
        cli.main(["msd", str(EXAMPLES / "paofed_reference.toml")])
    assert exc.value.code == 2 and "instance: the instance is degenerate" in capsys.readouterr().err


def test_run_whose_ground_truth_solver_fails_exits_3(monkeypatch, capsys, tmp_path):
    """zCDP-NFL's CVXPY ground truth that does not reach 'optimal' on a valid config: exit 3, one line."""
    import reference_impl.zcdp_nfl as z

    def failing(problem, **kw):
        raise ArithmeticError("CVXPY/Clarabel solve of the centralised lad problem ended with status max_iter")

    monkeypatch.setattr(z, "centralized_optimum", failing)
    path = tmp_path / "c.toml"
    path.write_text("[graph]\nK = 6\n[data]\nP = 2\nM = 4\n[simulation]\niterations = 2\n")
    assert cli.main(["run", "zcdp-nfl", str(path)]) == 3
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("fedcheck run zcdp-nfl: not converged: the ground")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture()
def umask_022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_report_files_get_the_umask_mode(tmp_path, umask_022):
    """index.html, results.json, the manifest and every figure: 0644 under umask 022 (mkstemp's 0600 used to
    survive the rename)."""
    from reports.build import MANIFEST, build_report
    from tests.reports.test_build import META, _claim, _figure
    from verify.records import CheckResult, Verdict

    out = tmp_path / "report"
    claims = [_claim("toy.ok")]
    results = [CheckResult(claim_id="toy.ok", verdict=Verdict.CONFIRMED, summary="holds", figures=(_figure("c"),))]
    build_report(claims, results, out, META)
    written = [out / "index.html", out / "results.json", out / MANIFEST, out / "figures" / "toy.ok__c.png"]
    assert {p.name: oct(_mode(p)) for p in written} == {p.name: oct(0o644) for p in written}


def test_report_files_follow_a_stricter_umask(tmp_path):
    from reports.build import build_report
    from tests.reports.test_build import META, _claim
    from verify.records import CheckResult, Verdict

    old = os.umask(0o077)
    try:
        build_report([_claim("toy.ok")], [CheckResult(claim_id="toy.ok", verdict=Verdict.CONFIRMED, summary="s")],
                     tmp_path / "r", META)
    finally:
        os.umask(old)
    assert _mode(tmp_path / "r" / "results.json") == 0o600


def test_msd_csv_gets_the_umask_mode(tmp_path, capsys, umask_022):
    csv_path = tmp_path / "curve.csv"
    assert cli.main(["msd", str(EXAMPLES / "paofed_reference.toml"), "--model", "seed", "--transient", "3",
                     "--csv", str(csv_path), "--json"]) == 0
    capsys.readouterr()
    assert _mode(csv_path) == 0o644 and csv_path.read_text().startswith("n,msd_db_seed")


def test_version_from_the_package_metadata(capsys):
    from importlib import metadata

    import fedcheck

    assert fedcheck.__version__ == metadata.version("fedcheck")
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"fedcheck {fedcheck.__version__}"


def test_python_dash_m_fedcheck_runs_the_console_script():
    done = subprocess.run([sys.executable, "-m", "fedcheck", "--version"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("fedcheck ")


def test_json_of_run_is_strict_and_progress_stays_off_stderr_when_not_a_terminal(tmp_path, capsys):
    assert cli.main(["run", "gtv", str(EXAMPLES / "gtv.toml"), "--iterations", "3", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["iterations"] == 3


# -- outputs never replace a file fedcheck may not replace (found by an adversarial audit) ------------------------
def test_a_file_that_appears_during_the_run_is_not_replaced(tmp_path, capsys):
    """--plot's path was checked before the run and renamed over after it: a file created in between (here by the
    run's own progress hook) was silently replaced. The finished figure now takes the name with a hard link, which
    fails when the name exists; the user's file stays and the command says so (exit 2)."""
    import fedcheck.run as run_pkg

    target = tmp_path / "race.png"
    real = run_pkg.load

    def load_then_someone_writes(*args, **kwargs):
        out = real(*args, **kwargs)
        target.write_text("user's precious file")
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(run_pkg, "load", load_then_someone_writes)
        with pytest.raises(SystemExit) as exc:
            cli.main(["run", "paofed", str(EXAMPLES / "paofed_reference.toml"), "--iterations", "20",
                      "--plot", str(target)])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and "argument --plot" in err[0] and "appeared during the run" in err[0]
    assert target.read_text() == "user's precious file"
    assert [p.name for p in tmp_path.iterdir()] == ["race.png"]      # no temporary left behind


def test_write_new_or_replace(tmp_path):
    from fedcheck._errors import ConfigError
    from fedcheck._files import write_new_or_replace

    path = tmp_path / "out.bin"
    write_new_or_replace(path, lambda fh: fh.write(b"one"), may_replace=lambda p: False, option="--x")
    assert path.read_bytes() == b"one"
    with pytest.raises(ConfigError, match="--x"):
        write_new_or_replace(path, lambda fh: fh.write(b"two"), may_replace=lambda p: False, option="--x")
    assert path.read_bytes() == b"one"
    write_new_or_replace(path, lambda fh: fh.write(b"three"), may_replace=lambda p: True, option="--x")
    assert path.read_bytes() == b"three" and [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_an_output_is_never_the_configuration_nor_two_outputs_one_file(tmp_path, capsys):
    config = tmp_path / "c.svg"   # a configuration may have any name, even one that --plot accepts
    config.write_text((EXAMPLES / "paofed_reference.toml").read_text())
    before = config.read_text()
    for argv in (["msd", str(config), "--transient", "3", "--csv", str(config), "--force"],
                 ["msd", str(config), "--transient", "3", "--plot", str(config), "--force"],
                 ["msd", str(config), "--transient", "3", "--csv", str(tmp_path / "a.svg"), "--plot",
                  str(tmp_path / "a.svg")],
                 ["run", "paofed", str(config), "--iterations", "5", "--plot", str(tmp_path / "c.svg"), "--force"]):
        with pytest.raises(SystemExit) as exc:
            cli.main(argv)
        assert exc.value.code == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and ("configuration itself" in err[0] or "same file as --csv" in err[0]), err
    assert config.read_text() == before and sorted(p.name for p in tmp_path.iterdir()) == ["c.svg"]


def test_msd_seed_without_simulate_is_refused_whatever_its_value(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["msd", str(EXAMPLES / "paofed_reference.toml"), "--seed", "0"])
    assert exc.value.code == 2 and "--seed" in capsys.readouterr().err


def test_report_workers_beyond_a_few_per_cpu_are_refused(tmp_path, capsys):
    """Found by an adversarial audit: --workers 100000 was accepted on a 2-core machine."""
    from fedcheck.cli import MAX_WORKERS_PER_CPU

    most = MAX_WORKERS_PER_CPU * (os.cpu_count() or 1)
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", "--only", "dp.", "--workers", str(most + 1), "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and f"[1, {most}]" in err[0] and not (tmp_path / "r").exists()


def test_run_accepts_its_own_paper_under_the_commands_spelling(tmp_path, capsys):
    """`paper = "zcdp-nfl"` (the command's spelling, which `fedcheck check` accepts) was refused by `run zcdp-nfl`."""
    path = tmp_path / "c.toml"
    path.write_text('paper = "zcdp-nfl"\n' + (EXAMPLES / "zcdp_nfl.toml").read_text())
    assert cli.main(["run", "zcdp-nfl", str(path), "--iterations", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["iterations"] == 2
