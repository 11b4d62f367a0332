"""The input contract of the older commands on a held-out hostile set (issue 28): a baseline's own parameter range,
inconsistent sizes, a huge --iterations, a derived quantity's overflow and an msd step far out of range all end in
exit status 2 and one stderr line naming the user's field or option."""

from __future__ import annotations

from pathlib import Path

import pytest

from fedcheck import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "fedcheck" / "examples"
PAOFED = (EXAMPLES / "paofed_reference.toml").read_text()
PGFL = (EXAMPLES / "pgfl_regression.toml").read_text()
RFF = '[data]\nsource = "synthetic-rff"\nK = 16\nD = 4\nhorizon = 10\ndata_groups = [1, 2]\ntest_size = 5\n'


@pytest.fixture(autouse=True)
def small_work_limit(monkeypatch):
    monkeypatch.setattr("fedcheck.run._budget.MAX_WORK", 10**9)


CASES = [
    ("paofed", PAOFED.replace("# pso_fed_m = 2 ", "pso_fed_m = 100"), ["--algorithm", "pso-fed"],
     "algorithm.pso_fed_m must be an integer in [1, D = 5]"),
    ("paofed", PAOFED.replace("# sign_noise = 0.0 ", "sign_noise = 1e308"), ["--algorithm", "signsgd"],
     "algorithm.sign_noise must be a real in [0, 1e+300]"),
    ("paofed", PAOFED.replace("# sign_step = 0.001 ", "sign_step = 0.1"), [],
     "algorithm.sign_step does not apply here (it applies only when --algorithm signsgd)"),
    ("paofed", RFF + "[environment]\np_groups = [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]\n", [],
     "data.K = 16 is fewer than the data groups x availability groups = 2 x 9 = 18"),
    ("paofed", PAOFED, ["--runs", "100000000"], "argument --runs:"),
    ("pgfl", PGFL.replace("clusters = 3", "clusters = 1000"), [], "data.clusters must be an integer in [1, K"),
    ("pgfl", PGFL.replace("tau = 0.4 ", "tau0 = 0.4\ntau_decay = 0.98 "), ["--iterations", "1000000000000"],
     "argument --iterations:"),
    ("pgfl", PGFL.replace("rho_over_Lmax = 0.25 ", "rho_over_Lmax = 1e308 "), [], "algorithm.rho_over_Lmax: rho ="),
    ("pgfl", PGFL.replace("servers = 10", "servers = 1000000"), [], "data."),
    ("pgfl", PGFL + "[privacy]\nphi0 = 0.1\n", [], "privacy: the [privacy] section does not apply"),
]


@pytest.mark.parametrize(("command", "text", "options", "needle"), CASES)
def test_older_run_commands_hold_the_contract(tmp_path, capsys, command, text, options, needle):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", command, str(path), "--iterations", "3", *options] if "--iterations" not in options
                 else ["run", command, str(path), *options])
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert needle in err, err


@pytest.mark.parametrize(("mu", "needle"), [("1e160", "instance.mu: mu lambda_max = 3.1e+160 is above 1e+100"),
                                             ("1e-320", "instance.mu: mu lambda_max = 3.1e-320 is below 1e-08")])
def test_msd_step_far_out_of_range_exits_2(tmp_path, capsys, mu, needle):
    """A step whose rho(F) ~ (mu lambda_max)^2 leaves the double range used to fail inside ARPACK (exit 1)."""
    path = tmp_path / "c.toml"
    path.write_text(PAOFED.replace("mu_times_lambda_max = 0.1 ", f"mu = {mu} "))
    with pytest.raises(SystemExit) as exc:
        cli.main(["msd", str(path)])
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and out == "" and err.count("\n") == 1 and needle in err, err
