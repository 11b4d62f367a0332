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


# Regression values: docs/papers/dp.md#test-vectors with docs/papers/dp.md#review-notes corrections.
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


# -- DP-SGD-style schedules: --sampling-rate q, --noise-multiplier z, --steps T --------------------------------------
def _oracle(kind, q, z, T, delta):
    """dp-accounting built here, independently of fedcheck's wrappers."""
    import dp_accounting
    from dp_accounting import pld, rdp

    acc = rdp.RdpAccountant() if kind == "rdp" else pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), T)
    return float(acc.get_epsilon(delta))


def test_subsampled_account_matches_dp_accounting(capsys):
    out = run_json(capsys, "account", "--steps", "1000", "--sampling-rate", "0.01", "--noise-multiplier", "1.1",
                   "--delta", "1e-5")
    assert out["mode"] == "subsampled_gaussian" and out["rounds"] == 1000 and out["sampling_rate"] == 0.01
    assert out["accountants"] == ["fedcheck-rdp", "rdp", "pld"]
    eps = out["epsilon"]
    assert eps["rdp_accountant"] == pytest.approx(_oracle("rdp", 0.01, 1.1, 1000, 1e-5), rel=1e-12)
    assert eps["pld_accountant"] == pytest.approx(_oracle("pld", 0.01, 1.1, 1000, 1e-5), rel=1e-12)
    assert eps["pld_accountant"] <= min(eps["rdp_accountant"], eps["fedcheck_rdp"])  # PLD: the tightest bound


def test_accountants_choose_which_run(capsys):
    out = run_json(capsys, "account", "--steps", "100", "--sampling-rate", "0.1", "--noise-multiplier", "2",
                   "--delta", "1e-5", "--accountants", "rdp")
    assert list(out["epsilon"]) == ["rdp_accountant"]
    out = run_json(capsys, "account", "--rounds", "10", "--delta", "1e-5", "--noise-multiplier", "2",
                   "--accountants", "exact,fedcheck-rdp")
    assert out["mode"] == "zcdp_schedule" and list(out["epsilon"]) == ["exact_gaussian", "fedcheck_rdp"]
    # without subsampling z is sigma / sensitivity: the zCDP total is T / (2 z^2)
    assert out["rho_total"] == pytest.approx(10 / 8, rel=1e-15)
    assert out["epsilon"]["exact_gaussian"] <= out["epsilon"]["fedcheck_rdp"]


def test_noise_multiplier_is_sigma_over_sensitivity(capsys):
    a = run_json(capsys, "account", "--steps", "200", "--sampling-rate", "0.05", "--noise-multiplier", "1.5",
                 "--delta", "1e-5", "--accountants", "fedcheck-rdp,rdp")
    b = run_json(capsys, "account", "--steps", "200", "--sampling-rate", "0.05", "--sigma", "3", "--sensitivity", "2",
                 "--delta", "1e-5", "--accountants", "fedcheck-rdp,rdp")
    assert a["epsilon"] == b["epsilon"] and b["noise_multiplier"] == 1.5


@pytest.mark.parametrize("solve", ["noise_multiplier", "steps"])
def test_subsampled_calibrate_round_trips(capsys, solve):
    given = ["--steps", "500"] if solve == "noise_multiplier" else ["--noise-multiplier", "1.2"]
    cal = run_json(capsys, "calibrate", "--epsilon", "2", "--delta", "1e-5", "--sampling-rate", "0.02", *given,
                   "--accountants", "rdp")
    assert cal["solved_for"] == solve and cal["epsilon_achieved"] <= 2.0
    back = run_json(capsys, "account", "--steps", str(cal["rounds"]), "--sampling-rate", "0.02", "--noise-multiplier",
                    repr(cal["noise_multiplier"]), "--delta", "1e-5", "--accountants", "fedcheck-rdp,rdp")
    assert back["epsilon"]["fedcheck_rdp"] == cal["epsilon_achieved"]
    assert back["epsilon"]["rdp_accountant"] == cal["epsilon"]["rdp_accountant"]
    if solve == "steps":  # the most steps: one more exceeds the target
        more = run_json(capsys, "account", "--steps", str(cal["rounds"] + 1), "--sampling-rate", "0.02",
                        "--noise-multiplier", "1.2", "--delta", "1e-5", "--accountants", "fedcheck-rdp")
        assert more["epsilon"]["fedcheck_rdp"] > 2.0


def _text_fields(out: str) -> set:
    fields = set()
    for line in out.splitlines():
        label = line.split("  ")[0].strip()
        fields.add(label[len("epsilon ("):-1] if label.startswith("epsilon (") else label)
    return fields


def _json_fields(document: dict) -> set:
    fields = set(document) - {"epsilon", "epsilon_status"}
    return fields | set(document.get("epsilon", {}))


@pytest.mark.parametrize("args", [
    ["account", "--rounds", "5", "--delta", "1e-5", "--sensitivity", "1", "--sigma", "3"],
    ["account", "--steps", "50", "--sampling-rate", "0.1", "--noise-multiplier", "2", "--delta", "1e-5",
     "--accountants", "fedcheck-rdp,rdp"],
    ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--rounds", "10", "--sensitivity", "1"],
    ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--steps", "100", "--sampling-rate", "0.01",
     "--accountants", "rdp"],
    ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--noise-multiplier", "2", "--sampling-rate", "0.01"],
])
def test_text_and_json_show_the_same_fields(capsys, args):
    assert cli.main(["privacy", *args]) == 0
    text = capsys.readouterr().out
    document = run_json(capsys, *args)
    assert _text_fields(text) == _json_fields(document)
    if args[0] == "calibrate" and "--sensitivity" in args:
        assert "sigma_first" in document and document["sigma_first"] ** 2 == pytest.approx(document["variance_first"])


def test_printed_privacy_losses_are_rounded_up(capsys):
    document = run_json(capsys, "account", "--steps", "1000", "--sampling-rate", "0.01", "--noise-multiplier", "1.1",
                        "--delta", "1e-5", "--accountants", "fedcheck-rdp")
    assert cli.main(["privacy", "account", "--steps", "1000", "--sampling-rate", "0.01", "--noise-multiplier", "1.1",
                     "--delta", "1e-5", "--accountants", "fedcheck-rdp"]) == 0
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("epsilon (fedcheck_rdp)")]
    value = float(printed[0].split()[-1])
    assert value >= document["epsilon"]["fedcheck_rdp"] and value == pytest.approx(
        document["epsilon"]["fedcheck_rdp"], rel=1e-3)


@pytest.mark.parametrize(("args", "option", "says"), [
    (["account", "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1", "--sampling-rate", "0"],
     "--sampling-rate", "(0, 1]"),
    (["account", "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1", "--sampling-rate", "1.5"],
     "--sampling-rate", "(0, 1]"),
    (["account", "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1", "--sampling-rate", "nan"],
     "--sampling-rate", "(0, 1]"),
    (["account", "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "0", "--sampling-rate", "0.1"],
     "--noise-multiplier", "(0, "),
    (["account", "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "-2", "--sampling-rate", "0.1"],
     "--noise-multiplier", "(0, "),
    (["account", "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1", "--accountants", "moments"],
     "--accountants", "rdp, pld"),
    (["account", "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1", "--accountants", "rdp,rdp"],
     "--accountants", "twice"),
    (["account", "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1", "--sampling-rate", "0.1",
      "--accountants", "exact"], "--accountants", "fedcheck-rdp, rdp or pld"),
    (["account", "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1", "--sensitivity", "1"],
     "--sensitivity", "sigma / sensitivity"),
    (["account", "--steps", "10", "--delta", "1e-5", "--rho-first", "1", "--sampling-rate", "0.1"],
     "--sampling-rate", "--noise-multiplier"),
    (["account", "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1", "--sampling-rate", "0.1",
      "--per-round"], "--per-round", "subsampled"),
    (["calibrate", "--epsilon", "1", "--delta", "1e-5", "--steps", "10", "--sampling-rate", "0.1", "--method",
      "exact"], "--method", "fedcheck-rdp, rdp or pld"),
    (["calibrate", "--epsilon", "1", "--delta", "1e-5", "--sampling-rate", "0.1"], "--steps", "--noise-multiplier"),
    (["calibrate", "--epsilon", "1", "--delta", "1e-5", "--steps", "10", "--sampling-rate", "0.1",
      "--noise-multiplier", "1"], "--noise-multiplier", "nothing to calibrate"),
    (["calibrate", "--epsilon", "1", "--delta", "1e-5", "--rounds", "10", "--sensitivity", "1",
      "--noise-multiplier", "1"], "--noise-multiplier", "--sampling-rate"),
    (["calibrate", "--epsilon", "0.001", "--delta", "1e-5", "--noise-multiplier", "0.5", "--sampling-rate", "0.5"],
     "--noise-multiplier", "single step"),
])
def test_subsampled_usage_errors_exit_2_with_one_line(capsys, args, option, says):
    with pytest.raises(SystemExit) as exc:
        cli.main(["privacy", *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and option in err and says in err and "Traceback" not in err


def test_a_tiny_zcdp_budget_is_accounted_not_a_traceback(capsys):
    """Found by an adversarial audit: rho = 1e-320 per round (or sigma = 1e160) is a valid schedule, but rounding the
    total up for people divided by 10^-324, which is 0 in double precision: a ZeroDivisionError traceback (exit 1).
    Accountants that fail at such inputs say why in words, not with an errno tuple."""
    assert cli.main(["privacy", "account", "--rounds", "10", "--rho-first", "1e-320", "--delta", "1e-5"]) == 0
    out = capsys.readouterr().out
    assert "rho_total" in out and "Traceback" not in out and "(34, " not in out
    doc = run_json(capsys, "account", "--rounds", "10", "--delta", "1e-5", "--sensitivity", "1", "--sigma", "1e160",
                   "--accountants", "bun-steinke,cks,exact")
    assert 0.0 < doc["rho_total"] < 1e-300


def test_formatting_rounds_up_without_underflow():
    from fedcheck.privacy import _failure, _up

    assert _up(0.1) == "0.1" and _up(0.12345) == "0.1235" and _up(0.30000000000000004) == "0.3001"
    assert _up(5e-324) == "4.941e-324" and _up(1e300) == "1e+300" and _up(123456.0) == "1.235e+05"
    assert _failure(OverflowError(34, "Numerical result out of range")) == \
        "OverflowError: Numerical result out of range"


def test_steps_at_the_cap_are_said_to_be_the_cap(capsys):
    """A target so large that the cap of 10^7 steps still meets it: the answer is 'at least the cap', not 'the most
    that meet the target' (a silent clamp)."""
    args = ["calibrate", "--epsilon", "1e300", "--delta", "1e-5", "--sampling-rate", "0.01", "--noise-multiplier", "1"]
    doc = run_json(capsys, *args)
    assert doc["rounds"] == 10**7 and doc["rounds_capped"] is True
    assert run_json(capsys, "calibrate", "--epsilon", "2", "--delta", "1e-5", "--sampling-rate", "0.01",
                    "--noise-multiplier", "1")["rounds_capped"] is False
    assert cli.main(["privacy", *args]) == 0
    assert "the cap of 10000000 rounds meets the target" in capsys.readouterr().out


def test_an_epsilon_beyond_the_conversions_range_names_the_range(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["privacy", "calibrate", "--epsilon", "1e300", "--delta", "1e-5", "--rounds", "10",
                  "--sensitivity", "1"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "argument --epsilon" in err[0] and "allowed (0, 1e154]" in err[0] and "(34" not in err[0]


def test_a_tiny_epsilon_is_a_target_that_is_met(capsys):
    """calibrate --epsilon 1e-300 used to be refused ('no finite zCDP budget meets epsilon'): the exact Gaussian
    inverse failed to bracket there (a bug, fixed in theory.privacy.conversions). A budget does meet it: the epsilon = 0
    budget, rho = 4 erfinv(delta)^2 in all."""
    doc = run_json(capsys, "calibrate", "--delta", "1e-5", "--rounds", "10", "--epsilon", "1e-300",
                   "--sensitivity", "1")
    assert doc["epsilon_achieved"] <= 1e-300 and doc["variance_first"] > 1e9
