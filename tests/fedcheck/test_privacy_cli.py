"""`fedcheck privacy account|calibrate`: test vectors, JSON shape, round trip and usage errors."""

import json

import pytest

from fedcheck import cli
from verify.tolerance import RDP_GRID_RTOL


def run_json(capsys, *args):
    assert cli.main(["privacy", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_issue_vector_constant_noise(capsys):
    # Regression values from issue 3 ("Done when"): S = 1, sigma = 2, N = 100, delta = 1e-5.
    out = run_json(capsys, "account", "--rounds", "100", "--delta", "1e-5", "--sensitivity", "1", "--sigma", "2")
    assert out["rho_total"] == pytest.approx(12.5, rel=1e-12)  # 100 / (2 x 2^2), a 100-term sum's rounding
    eps = out["epsilon"]
    assert set(eps) == {"bun_steinke", "cks", "exact_gaussian", "rdp_accountant", "pld_accountant"}
    # printed to 4 / 3 / 3 decimals: half a unit in the last place
    assert eps["bun_steinke"] == pytest.approx(36.4926, abs=5e-5)
    assert eps["cks"] == pytest.approx(35.067, abs=5e-4)
    assert eps["exact_gaussian"] == pytest.approx(33.104, abs=5e-4)
    # Independent oracles: PLD (pessimistic) sits just above the exact profile, RDP just above CKS.
    assert eps["exact_gaussian"] <= eps["pld_accountant"] <= eps["exact_gaussian"] * (1 + 1e-6)
    assert eps["cks"] <= eps["rdp_accountant"] <= eps["cks"] * (1 + RDP_GRID_RTOL)


# Regression values: shared/spec/dp_background.md section 8 with its Review-notes corrections.
@pytest.mark.parametrize(("rho", "delta", "bs", "cks", "gauss"), [
    (0.025, 1e-6, 1.200394, 1.014074, 0.940516),
    (0.0221303461, 1e-5, 1.031655, 0.839166, 0.766815),
    (0.2, 1e-5, 3.234854, 2.813632, 2.594383),
    (0.639918, 1e-5, 6.068483, 5.451648, 5.052410),
    (2.020034, 1e-5, 11.665033, 10.790273, 10.058831),
])
def test_spec_vectors_through_the_cli(capsys, rho, delta, bs, cks, gauss):
    out = run_json(capsys, "account", "--rounds", "1", "--delta", str(delta), "--rho-first", repr(rho))
    eps = out["epsilon"]
    for key, value in (("bun_steinke", bs), ("cks", cks), ("exact_gaussian", gauss)):
        assert eps[key] == pytest.approx(value, abs=5e-7), key  # printed to 6 decimals: half a unit


def test_per_round_schedules(capsys):
    out = run_json(capsys, "account", "--rounds", "4", "--delta", "1e-5", "--rho-first", "0.1", "--rho-growth", "2",
                   "--per-round")
    assert out["rho_per_round"] == pytest.approx([0.1, 0.2, 0.4, 0.8], rel=1e-15)  # doublings: a few ulps
    out = run_json(capsys, "account", "--rounds", "3", "--delta", "1e-5", "--sensitivity", "2",
                   "--variance-first", "4", "--variance-decay", "0.5", "--per-round")
    # round n uses variance 4 * 0.5^(n-1): rho_n = 4 / (2 * 4 * 0.5^(n-1))
    assert out["rho_per_round"] == pytest.approx([0.5, 1.0, 2.0], rel=1e-15)


@pytest.mark.parametrize("method", ["exact", "cks", "bun-steinke"])
def test_calibrate_meets_the_target_and_accounts_back(capsys, method):
    cal = run_json(capsys, "calibrate", "--epsilon", "2", "--delta", "1e-5", "--rounds", "50", "--sensitivity", "0.3",
                   "--variance-decay", "0.98", "--method", method)
    assert cal["method"] == method and cal["epsilon_achieved"] <= 2.0
    # sharp inverse, then the variance rounded up by ulps
    assert cal["epsilon_achieved"] == pytest.approx(2.0, rel=1e-9)
    back = run_json(capsys, "account", "--rounds", "50", "--delta", "1e-5", "--sensitivity", "0.3",
                    "--variance-first", repr(cal["variance_first"]), "--variance-decay", "0.98")
    key = {"exact": "exact_gaussian", "cks": "cks", "bun-steinke": "bun_steinke"}[method]
    assert back["epsilon"][key] <= 2.0


def test_human_readable_table(capsys):
    assert cli.main(["privacy", "account", "--rounds", "2", "--delta", "1e-3", "--rho-first", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "rho_total" in out and "epsilon (pld_accountant)" in out


@pytest.mark.parametrize(("args", "option"), [
    (["account", "--rounds", "0", "--delta", "1e-5", "--rho-first", "1"], "--rounds"),
    (["account", "--rounds", "3", "--delta", "1", "--rho-first", "1"], "--delta"),
    (["account", "--rounds", "3", "--delta", "0.1", "--sensitivity", "-1", "--sigma", "1"], "--sensitivity"),
    (["account", "--rounds", "3", "--delta", "0.1", "--sensitivity", "1", "--sigma", "0"], "--sigma"),
    (["account", "--rounds", "3", "--delta", "0.1", "--sigma", "1"], "--sensitivity"),
    (["account", "--rounds", "3", "--delta", "0.1", "--sensitivity", "1", "--variance-first", "1",
      "--variance-decay", "1.5"], "--variance-decay"),
    (["account", "--rounds", "3", "--delta", "0.1", "--rho-first", "1", "--sensitivity", "1"], "--sensitivity"),
    (["account", "--rounds", "3", "--delta", "0.1", "--sensitivity", "1", "--sigma", "1", "--rho-growth", "2"],
     "--rho-growth"),
    (["calibrate", "--epsilon", "0", "--delta", "0.1", "--rounds", "3", "--sensitivity", "1"], "--epsilon"),
    (["calibrate", "--epsilon", "1", "--delta", "0.1", "--rounds", "3", "--sensitivity", "1", "--method", "x"],
     "--method"),
])
def test_usage_errors_exit_2_with_one_line_naming_the_option(capsys, args, option):
    with pytest.raises(SystemExit) as exc:
        cli.main(["privacy", *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and option in err
