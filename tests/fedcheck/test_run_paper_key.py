"""One configuration file serves `fedcheck run` and `fedcheck check`: `run` accepts the `paper` declaration of its own
paper and refuses another paper's, with one line naming the field."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "fedcheck" / "examples"


def _run(*args):
    return subprocess.run([sys.executable, "-m", "fedcheck", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture()
def declared(tmp_path):
    def write(paper: str) -> pathlib.Path:
        path = tmp_path / "npfl_rl.toml"
        path.write_text(f'paper = "{paper}"\n' + (EXAMPLES / "npfl_rl.toml").read_text())
        return path

    return write


def test_run_accepts_its_own_paper_declaration(declared):
    done = _run("run", "npfl-rl", str(declared("npfl_rl")), "--iterations", "2", "--json")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("paper", ["gtv", "nonsense"])
def test_run_refuses_another_papers_declaration(declared, paper):
    done = _run("run", "npfl-rl", str(declared(paper)), "--iterations", "2")
    assert done.returncode == 2 and not done.stdout
    assert done.stderr.count("\n") == 1 and "error: paper: the file declares paper" in done.stderr
