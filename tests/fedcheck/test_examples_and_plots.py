"""Every shipped example runs through its command (fast settings) without a traceback or a non-zero exit, and says
why where its output could alarm a newcomer; ``run --plot`` draws each algorithm's curves in the report's style."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fedcheck import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "fedcheck" / "examples"

#: example -> the commands a newcomer runs on it, with fast settings (iterations cut, one run).
COMMANDS = {
    "pgfl_regression.toml": [["run", "pgfl", "--iterations", "5"]],
    "zcdp_nfl.toml": [["run", "zcdp-nfl", "--iterations", "5"]],
    "gtv.toml": [["run", "gtv", "--iterations", "20"]],
    "fedpdm.toml": [["run", "fedpdm", "--rounds", "3"]],
    "npfl_rl.toml": [["run", "npfl-rl", "--iterations", "5"]],
    "paofed_reference.toml": [["run", "paofed", "--iterations", "20"], ["msd"]],
    # the paper's scale: the simulation's set-up alone takes about 40 CPU-s (eigendecompositions of 256 covariances
    # 200 x 200), the white msd about 15 CPU-s, the Toeplitz msd about 4 CPU-minutes
    "paofed_paper_white.toml": [pytest.param(["run", "paofed", "--iterations", "2"], marks=pytest.mark.slow),
                                ["msd"]],
    "paofed_paper_groups.toml": [pytest.param(["run", "paofed", "--iterations", "2"], marks=pytest.mark.slow),
                                 pytest.param(["msd"], marks=pytest.mark.slow)],
}

def _cases():
    for name, commands in COMMANDS.items():
        for c in commands:
            command = c.values[0] if hasattr(c, "values") else c
            yield pytest.param(name, command, marks=getattr(c, "marks", ()), id=f"{name}-{' '.join(command[:2])}")


CASES = list(_cases())


def test_every_shipped_example_is_covered():
    assert sorted(p.name for p in EXAMPLES.glob("*.toml")) == sorted(COMMANDS)


@pytest.mark.parametrize(("name", "command"), CASES)
def test_shipped_example_runs(capsys, name, command):
    head, rest = (command[:2], command[2:]) if command[0] == "run" else (command[:1], command[1:])
    code = cli.main([*head, str(EXAMPLES / name), *rest, "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Traceback" not in err and "Warning" not in err, err
    assert out.strip()
    # nothing alarming without a word of why: a diverging curve says so, an unstable model says why
    assert "diverging" not in out or "beyond the algorithm's mean-square stable range" in out
    if "outside the mean-square stable range" in out:
        assert "fourth-moment" in out or "stable for mu <" in out
    if name == "paofed_paper_white.toml" and command == ["msd"]:  # mu = 0.004: both models have a steady state
        assert out.count("MSD_inf = ") == 2, out


def test_paper_white_example_is_stable_for_both_models_and_says_why_not_the_papers_mu():
    text = (EXAMPLES / "paofed_paper_white.toml").read_text()
    assert re.search(r"^mu = 0\.004$", text, re.M)
    assert "not the paper's 0.4" in text and "fourth-moment" in text


def test_a_diverging_paofed_run_is_reported(tmp_path, capsys):
    """A step beyond the exact model's threshold (mu lambda_max = 1.2 > 0.672 on the reference instance) makes the
    curve rise: status 'diverging' with the reason, not a bare '151.5 dB' (as the paper-scale example's mu = 0.4
    printed '1238.867 dB')."""
    text = (EXAMPLES / "paofed_reference.toml").read_text()
    path = tmp_path / "c.toml"
    path.write_text(re.sub(r"mu_times_lambda_max = 0\.1 ", "mu_times_lambda_max = 1.2 ", text))
    assert cli.main(["run", "paofed", str(path), "--iterations", "300", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rise = out["curve_db"][-1] - out["curve_db"][0]
    assert rise > 10.0 and out["status"] == "diverging" and "stable range" in out["warning"]
    assert out["window"]["settled"] is False and "diverges" in out["window"]["note"]
    assert cli.main(["run", "paofed", str(path), "--iterations", "300"]) == 0
    assert "diverging: the MSD rose by" in capsys.readouterr().out


def test_a_small_w_star_rising_to_its_noise_floor_is_not_diverging(tmp_path, capsys):
    """With w* / 1000 the MSD starts at -58 dB, below the noise floor of -31 dB it settles at: it rises by 28 dB, and
    that rise alone used to report 'diverging: mu is beyond the stable range' at a stable step. Diverging now also
    needs the curve still rising in its second half (more than 3 dB)."""
    text = (EXAMPLES / "paofed_reference.toml").read_text()
    path = tmp_path / "c.toml"
    path.write_text(re.sub(r"^w_star = .*$", "w_star = [0.001, -0.0005, 0.00025, 0.0, 0.0005]", text, flags=re.M))
    assert cli.main(["run", "paofed", str(path), "--runs", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["curve_db"][-1] - out["curve_db"][0] > 20.0
    assert out["status"] == "ok" and "warning" not in out and out["window"]["settled"] is None


#: plug-in -> (example, fast options, words in the figure (SVG text)).
PLOTS = {
    "pgfl": ("pgfl_regression.toml", ["--iterations", "5"], ["NMSD"]),
    "paofed": ("paofed_reference.toml", ["--iterations", "30"], ["learning curve", "mean over n"]),
    "zcdp-nfl": ("zcdp_nfl.toml", ["--iterations", "5"], ["normalised error"]),
    "gtv": ("gtv.toml", ["--iterations", "20"], ["objective", "fixed-point residual"]),
    "fedpdm": ("fedpdm.toml", ["--rounds", "3"], ["global objective", "test accuracy"]),
    "npfl-rl": ("npfl_rl.toml", ["--iterations", "5"], ["Test MSE", "tau trajectories"]),
}


@pytest.mark.parametrize("name", sorted(PLOTS))
def test_run_plot_draws_the_algorithms_curves(tmp_path, capsys, name):
    from xml.etree import ElementTree

    from fedcheck._plot import written_by_fedcheck

    example, options, words = PLOTS[name]
    svg = tmp_path / "curves.svg"
    assert cli.main(["run", name, str(EXAMPLES / example), *options, "--plot", str(svg), "--quiet"]) == 0
    text = svg.read_text()
    ElementTree.fromstring(text.split("?>", 1)[1])  # well-formed XML (several panels nested in one svg)
    for word in words:
        assert word in text, word
    assert written_by_fedcheck(svg)
    png = tmp_path / "curves.png"
    assert cli.main(["run", name, str(EXAMPLES / example), *options, "--plot", str(png), "--quiet"]) == 0
    assert png.read_bytes().startswith(b"\x89PNG") and written_by_fedcheck(png)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curves.png", "curves.svg"]  # no temporary left


@pytest.mark.parametrize(("plot", "extra", "says"), [
    ("a.pdf", [], "must end in .png or .svg"),
    ("no/such/dir/a.png", [], "does not exist"),
    ("theirs.png", [], "fedcheck did not write it; add --force"),
    ("adir.png", [], "is a directory"),
    (None, ["--force"], "only allowed with --plot"),
])
def test_run_plot_refusals_exit_2_before_the_work(tmp_path, capsys, plot, extra, says):
    (tmp_path / "theirs.png").write_bytes(b"someone else's")
    (tmp_path / "adir.png").mkdir()
    args = ["run", "paofed", str(EXAMPLES / "paofed_reference.toml"), "--iterations", "5", *extra]
    if plot is not None:
        args += ["--plot", str(tmp_path / plot)]
    with pytest.raises(SystemExit) as exc:
        cli.main(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and says in err and "--" in err
    assert (tmp_path / "theirs.png").read_bytes() == b"someone else's"


def test_run_plot_force_and_replacing_its_own_file(tmp_path, capsys):
    theirs = tmp_path / "theirs.png"
    theirs.write_bytes(b"someone else's")
    args = ["run", "paofed", str(EXAMPLES / "paofed_reference.toml"), "--iterations", "5", "--quiet"]
    assert cli.main([*args, "--plot", str(theirs), "--force"]) == 0
    assert theirs.read_bytes().startswith(b"\x89PNG")
    assert cli.main([*args, "--plot", str(theirs)]) == 0  # fedcheck's own file now: replaced without --force


def test_pgfl_plot_without_true_models_is_refused_before_the_run(tmp_path, capsys):
    import numpy as np

    rng = np.random.default_rng(0)
    arrays = {f"X_{k}": rng.normal(size=(6, 2)) for k in range(4)}
    arrays.update({f"y_{k}": rng.normal(size=6) for k in range(4)})
    arrays.update(client_server=np.array([0, 0, 1, 1]), client_cluster=np.array([0, 1, 0, 1]))
    np.savez(tmp_path / "d.npz", **arrays)
    (tmp_path / "c.toml").write_text('[data]\nsource = "npz"\npath = "d.npz"\n[algorithm]\nrho = 0.1\n')
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", "pgfl", str(tmp_path / "c.toml"), "--plot", str(tmp_path / "p.png")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "argument --plot: nothing to draw" in err and "true_models" in err
    assert not (tmp_path / "p.png").exists()
