"""fedcheck's pytest plug-in, used as a researcher would: ``pytest --pyargs verify...`` from a directory of their own.

The fast tests use this checkout's installation from a temporary directory outside it; the slow one builds a wheel
from the checkout, installs it (not the editable install) in a clean virtual environment and runs the documented CI
workflow (``docs/ci.md``) there for every paper.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import venv

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAPERS = ("dp", "pgfl", "paofed", "zcdp_nfl", "gtv", "fedpdm", "npfl_rl")


def _clean_env() -> dict[str, str]:
    """The environment of a user's shell: none of this session's fedcheck/Hypothesis/pytest settings."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HYPOTHESIS_", "FEDCHECK_", "PYTEST_")) and k != "PYTHONPATH"}
    return env


def _pytest(python: str, cwd: pathlib.Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd, env=_clean_env(),
                          capture_output=True, text=True, timeout=timeout)


def _tree(path: pathlib.Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


def test_pyargs_from_another_directory_strict_markers_and_nothing_written(tmp_path):
    """Property: from a directory outside the checkout, ``pytest --pyargs verify.dp.test_conversions --strict-markers``
    collects and passes (the plug-in registers ``claim`` and ``slow``), and leaves the directory empty (no
    ``.hypothesis/``, no result cache)."""
    done = _pytest(sys.executable, tmp_path, "--pyargs", "verify.dp.test_conversions", "--strict-markers",
                   "--hypothesis-profile=ci", "-q")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "passed" in done.stdout
    assert _tree(tmp_path) == set(), _tree(tmp_path)


def test_profiles_known_outside_the_checkout(tmp_path):
    """Property: ``--hypothesis-profile=thorough`` (and ci, dev) are known wherever fedcheck is installed: no
    INTERNALERROR at start-up."""
    for profile in ("ci", "dev", "thorough"):
        done = _pytest(sys.executable, tmp_path, "--pyargs", "verify.dp.test_conversions", "--strict-markers",
                       f"--hypothesis-profile={profile}", "--collect-only", "-q")
        assert done.returncode == 0, (profile, done.stdout[-2000:] + done.stderr[-2000:])
        assert "INTERNALERROR" not in done.stdout + done.stderr


def test_slow_tests_skipped_unless_asked_for(tmp_path):
    """Property: a ``slow`` test is skipped by default, with the reason naming how to run it; ``--run-slow`` selects
    it again (checked by collection of the skip marks, not by running the long test)."""
    selection = ("--pyargs", "verify.pgfl.test_theorem1", "-k", "at_the_paper_size", "-q", "--strict-markers", "-rs")
    skipped = _pytest(sys.executable, tmp_path, *selection)
    assert skipped.returncode == 0, skipped.stdout[-2000:] + skipped.stderr[-2000:]
    assert " skipped" in skipped.stdout and "passed" not in skipped.stdout, skipped.stdout[-2000:]
    assert "select with -m slow or --run-slow" in skipped.stdout, skipped.stdout[-2000:]
    asked = _pytest(sys.executable, tmp_path, *selection, "--run-slow", "--collect-only")
    assert asked.returncode == 0 and "collected" in asked.stdout and "skipped" not in asked.stdout, asked.stdout[-2000:]


def _wheel_venv(tmp_path: pathlib.Path) -> str:
    """A clean virtual environment holding the wheel built from this checkout (not the editable install).

    Its dependencies come from this session's environment by a path entry (not a site directory: the editable
    install's ``.pth`` finder there is not processed), so nothing is downloaded.
    """
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist),
                    str(ROOT)], check=True, env=_clean_env(), capture_output=True, timeout=600)
    wheel = next(dist.glob("fedcheck-*.whl"))
    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = str(env_dir / "bin" / "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True,
                          capture_output=True, text=True).stdout.strip()
    deps = [p for p in sys.path if p.endswith("site-packages")]
    pathlib.Path(site, "fedcheck-test-deps.pth").write_text("\n".join(deps) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", str(wheel)],
                   check=True, env=_clean_env(), capture_output=True, timeout=600)
    where = subprocess.run([python, "-c", "import verify, fedcheck; print(verify.__file__)"], check=True,
                           capture_output=True, text=True, cwd=tmp_path).stdout
    assert str(env_dir) in where and str(ROOT) not in where, where
    return python


@pytest.mark.slow
@pytest.mark.parametrize("paper", PAPERS)
def test_wheel_in_a_clean_environment_runs_every_paper(tmp_path, paper):
    """Property: with only the built wheel installed, in an empty directory, ``pytest --pyargs verify.<paper>
    --strict-markers -m "not slow"`` passes for every paper and writes nothing there."""
    python = _wheel_venv(tmp_path / "build")
    work = tmp_path / "work"
    work.mkdir()
    done = _pytest(python, work, "--pyargs", f"verify.{paper}", "--strict-markers", "-m", "not slow",
                   "--hypothesis-profile=ci", "-q", timeout=3600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert _tree(work) == set(), _tree(work)


@pytest.mark.slow
def test_wheel_in_a_clean_environment_checks_a_config(tmp_path):
    """Property: with only the built wheel installed, in an empty directory, ``fedcheck check my_config.toml`` (the
    workflow's step in docs/ci.md) exits 0 on a shipped example copied there and 1 on a broken copy (a gradient
    clip above the privacy calibration's c1), naming the claim."""
    python = _wheel_venv(tmp_path / "build")
    work = tmp_path / "work"
    work.mkdir()
    shipped = subprocess.run([python, "-c", "from fedcheck import api; print(api.example('zcdp_nfl.toml'))"],
                             check=True, capture_output=True, text=True, cwd=work, env=_clean_env()).stdout.strip()
    assert str(ROOT) not in shipped, shipped
    text = pathlib.Path(shipped).read_text(encoding="utf-8")
    (work / "my_config.toml").write_text(text, encoding="utf-8")
    (work / "broken.toml").write_text(text.replace('objective = "lad"', 'objective = "ridge"\nclip = 2.0', 1),
                                      encoding="utf-8")
    fedcheck = str(pathlib.Path(python).with_name("fedcheck"))
    ok = subprocess.run([fedcheck, "check", "my_config.toml"], cwd=work, env=_clean_env(), capture_output=True,
                        text=True, timeout=900)
    assert ok.returncode == 0, ok.stdout[-3000:] + ok.stderr[-2000:]
    broken = subprocess.run([fedcheck, "check", "broken.toml"], cwd=work, env=_clean_env(), capture_output=True,
                            text=True, timeout=900)
    assert broken.returncode == 1, broken.stdout[-3000:] + broken.stderr[-2000:]
    assert "zcdp_nfl.theorem1" in broken.stdout and "zcdp_nfl." in broken.stderr
    assert _tree(work) == {"my_config.toml", "broken.toml"}, _tree(work)
