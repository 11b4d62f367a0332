"""`fedcheck run fedpdm CONFIG.toml`: the example config, JSON output, baselines, accounting, one-line field errors."""

import json
from pathlib import Path

import pytest

from tests.fedcheck.plugin_harness import load_setup, run_plugin

EXAMPLE = Path(__file__).resolve().parents[2] / "fedcheck" / "examples" / "fedpdm.toml"


def _main(argv):
    return run_plugin(argv)


def _write(tmp_path, text):
    path = tmp_path / "c.toml"
    path.write_text(text)
    return path


NC = ('[problem]\nsource = "nc"\nN = 10\nn = 60\nd = 20\n[algorithm]\nK = 5\nrounds = 8\nbatch_size = 10\nrho = 10.0\n'
      'eta0 = 0.08\neta_schedule = "constant"\nnu = 0.001\nQ_max = 5\n')


def test_example_config_parses_every_field():
    setup = load_setup("fedpdm", EXAMPLE)
    assert setup.v["arm.name"] == "fedpdm" and setup.v["problem.source"] == "digits"
    assert setup.n_features * setup.n_classes == 650
    cfg = setup.config
    assert (cfg.K, cfg.rounds, cfg.batch_size, cfg.Q_max, cfg.noise, cfg.noise_Q) == (5, 60, 5, 5, "dp", "cap")
    # the example's privacy is a bound: the default model with a fixed number of local steps
    assert (cfg.privacy_model, cfg.nu) == ("history_gaussian", 0.0)


PRIVACY_KEYS = {"model", "is_bound", "status", "delta", "q", "participations", "epsilon_per_client", "epsilon_max",
                "worst_client", "mu_per_client", "pT", "paper", "history_factor_busiest_client",
                "history_factor_status"}


def test_example_json_has_curves_noise_and_a_bound_by_default(capsys):
    from theory.privacy.conversions import gaussian_delta_exact

    assert _main(["run", "fedpdm", str(EXAMPLE), "--rounds", "6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"arm", "rounds", "runs", "seed", "problem", "curves", "noise", "privacy", "notes", "status"}
    assert [len(out["curves"][k]) for k in ("loss", "accuracy", "stationarity")] == [7, 7, 7]
    priv = out["privacy"]
    assert set(priv) == PRIVACY_KEYS
    assert priv["model"] == "history_gaussian" and priv["is_bound"] is True and priv["status"].startswith("bound")
    assert len(priv["participations"]) == 10 and len(priv["epsilon_per_client"]) == 10
    worst = priv["worst_client"]
    assert priv["epsilon_max"] == max(priv["epsilon_per_client"]) == priv["epsilon_per_client"][worst]
    # the bound is mu-GDP exactly: delta_G(epsilon_max; mu) meets delta (a round trip of the conversion)
    assert gaussian_delta_exact(priv["epsilon_max"], priv["mu_per_client"][worst]) <= priv["delta"] * (1 + 1e-9)
    # the paper's numbers beside it, labelled: not a bound, and smaller than the bound here
    assert priv["paper"]["model"] == "paper" and priv["paper"]["is_bound"] is False
    assert "not a bound" in priv["paper"]["label"] and priv["paper"]["epsilon_max"] < priv["epsilon_max"]
    assert out["noise"]["z"] == pytest.approx((2 * __import__("math").log(1.25e5)) ** 0.5)
    sm = out["problem"]["smoothness"]
    assert sm["L_lower"] <= sm["L_smooth"] == out["problem"]["L_smooth"] and sm["converged"] is True


@pytest.mark.parametrize("arm", ["fedavg", "fedprox", "scaffold"])
def test_baseline_arms_run_with_the_independent_rounds_label(tmp_path, capsys, arm):
    path = _write(tmp_path, NC + f'[arm]\nname = "{arm}"\neta_cap = 0.2\n')
    assert _main(["run", "fedpdm", str(path), "--json", "--runs", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    priv = out["privacy"]
    assert out["arm"] == arm and "stationarity" not in out["curves"]
    assert priv["model"] == "independent_rounds" and priv["is_bound"] is False
    assert priv["label"] == "independent-rounds model (not a bound with kept state)"
    assert priv["status"].startswith(priv["label"])
    assert 0 < priv["epsilon_pld_max_client"] <= priv["epsilon_rdp_max_client"]


def test_privacy_model_does_not_apply_to_a_baseline(tmp_path, capsys):
    path = _write(tmp_path, NC + 'privacy_model = "paper"\n[arm]\nname = "fedavg"\n')
    with pytest.raises(SystemExit) as exc:
        _main(["run", "fedpdm", str(path)])
    assert exc.value.code == 2
    assert "algorithm.privacy_model does not apply here (it applies only when arm.name = 'fedpdm')" in \
        capsys.readouterr().err


#: (extra [algorithm] lines, model, is_bound, what the status says, the target epsilon_max must meet or None)
PRIVACY_MODELS = [
    ("nu = 0.0\n", "history_gaussian", True, "bound: every upload is a Gaussian mechanism", None),
    ("", "history_gaussian", False, "not a bound: nu = 0.001 > 0: rule (11)", None),
    ('nu = 0.0\nprivacy_model = "paper"\n', "paper", False, "not a bound for Algorithm 1 as run", None),
    ('nu = 0.0\ndp_calibration = "target_total_eps_bound"\nepsilon_total = 3.0\n', "history_gaussian", True,
     "bound:", 3.0),
    ('nu = 0.0\ndp_calibration = "target_total_eps"\nepsilon_total = 2.0\nprivacy_model = "paper"\n', "paper", False,
     "not a bound", 2.0),
]


@pytest.mark.parametrize(("extra", "model", "is_bound", "needle", "target"), PRIVACY_MODELS)
def test_privacy_models_say_whether_they_bound_the_run(tmp_path, capsys, extra, model, is_bound, needle, target):
    text = NC.replace("nu = 0.001\n", "") if "nu = " in extra else NC
    path = _write(tmp_path, text.replace("rounds = 8", "rounds = 30") + extra)
    assert _main(["run", "fedpdm", str(path), "--json"]) == 0
    priv = json.loads(capsys.readouterr().out)["privacy"]
    assert (priv["model"], priv["is_bound"]) == (model, is_bound) and needle in priv["status"], priv["status"]
    assert ("paper" in priv) is (model == "history_gaussian")
    if target is not None and model == "paper":  # calibrated with the same in-house RDP accountant: never above
        assert target * 0.98 <= priv["epsilon_max"] <= target
    elif target is not None:
        # calibrated so that delta_G(target; mu) <= delta for every client (the defining property) at the calibration's
        # mu = A/z; account_run recomputes mu = sqrt(sum (kappa s/sigma)^2) from the run's sigma, whose rounding differs
        # by a few ulps (1.6e-15 relative in delta here), and epsilon_max is the exact profile's inverse at delta, which
        # rounds up: both at most a few ulps beyond the target
        from theory.privacy.conversions import gaussian_delta_exact

        ulps = 16 * 2.0**-52
        assert max(gaussian_delta_exact(target, mu) for mu in priv["mu_per_client"]) <= priv["delta"] * (1 + ulps)
        assert target * 0.98 <= priv["epsilon_max"] <= target * (1 + ulps)
    if not is_bound and model == "history_gaussian":
        assert priv["epsilon_max"] is None  # no sensitivity bound: no finite total


def test_text_output_says_bound_or_not(tmp_path, capsys):
    assert _main(["run", "fedpdm", str(_write(tmp_path, NC)), "--rounds", "3"]) == 0
    text = capsys.readouterr().out
    assert "fedpdm on nc" in text and "privacy (history_gaussian)  " in text and "NOT a bound (nu = 0.001" in text
    assert _main(["run", "fedpdm", str(_write(tmp_path, NC.replace("nu = 0.001", "nu = 0.0"))), "--rounds", "3"]) == 0
    text = capsys.readouterr().out
    assert "a bound\n" in text and "epsilon_max at delta = 1e-05" in text and "the paper's accountant (NOT a bound)" \
        in text


def test_divergence_is_null_with_status(tmp_path, capsys):
    """The literal step eta^0 = 1, rho = 10 (docs/papers/fedpdm.md#erratum-e25) with 400 local steps: (19) overflows and
    the run diverges."""
    text = (NC.replace("eta0 = 0.08", "eta0 = 1.0").replace('eta_schedule = "constant"', 'eta_schedule = "inv_sqrt"')
            .replace("Q_max = 5", "Q_max = 400").replace("rounds = 8", "rounds = 2").replace("nu = 0.001", "nu = 0.0")
            + 'batch_rule = "fresh"\n')
    assert _main(["run", "fedpdm", str(_write(tmp_path, text)), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["curves"]["loss"][0] is not None and out["curves"]["loss"][-1] is None
    assert "divergence" in out["status"] and out["noise"]["sigma_max_per_round"][0] is None


@pytest.mark.parametrize(("extra", "needle"), [
    ("[algorithm]\nrho = -1.0\n", "algorithm.rho"),
    ('[problem]\nsource = "digits"\nd = 5\n',
     "problem.n does not apply here (it applies only when problem.source = 'nc')"),
    ("[algorithm]\nQ_max = 7\n", "algorithm.Q_max * batch_size must be <= |D_i| = 60"),
    ('[arm]\nname = "sgd"\n', "arm.name must be"),
    ('[arm]\nmu = 0.5\n', "arm.mu does not apply here (it applies only when arm.name = 'fedprox')"),
    ("[algorithm]\nnoise = 3\n", "algorithm.noise must be one of 'dp', 'none', 'fixed', got 3"),
    ("[extra]\nx = 1\n", "extra is not a section"),
])
def test_bad_field_exits_2_naming_it(tmp_path, capsys, extra, needle):
    base = NC
    for section in ("[algorithm]", "[problem]"):
        if extra.startswith(section):
            lines = extra.splitlines()[1:]
            for line in lines:
                key = line.split("=")[0].strip()
                base = "\n".join(ln for ln in base.splitlines() if not ln.startswith(key + " ")) + "\n"
            base = base.replace(section + "\n", section + "\n" + "\n".join(lines) + "\n")
            extra = ""
    path = _write(tmp_path, base + extra)
    with pytest.raises(SystemExit) as exc:
        _main(["run", "fedpdm", str(path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1, err


def test_missing_required_field(tmp_path, capsys):
    path = _write(tmp_path, NC.replace("rho = 10.0\n", ""))
    with pytest.raises(SystemExit) as exc:
        _main(["run", "fedpdm", str(path)])
    assert exc.value.code == 2 and "algorithm.rho must be given" in capsys.readouterr().err


def test_history_factor_is_reported_and_history_model_runs(tmp_path, capsys):
    assert _main(["run", "fedpdm", str(_write(tmp_path, NC)), "--json"]) == 0
    priv = json.loads(capsys.readouterr().out)["privacy"]
    assert priv["history_factor_busiest_client"] > 1.0 and "assumes kappa = 1" in priv["history_factor_status"]
    assert _main(["run", "fedpdm", str(_write(tmp_path, NC + 'sensitivity_model = "history"\n')), "--json"]) == 0
    priv = json.loads(capsys.readouterr().out)["privacy"]
    status = priv["history_factor_status"]
    # kappa-calibrated noise makes each upload DP given the history, but the subsampled totals still fail
    assert "given the released history" in status and "do not hold" in status
    assert "fedpdm.theorem2_history_subsampled" in status and "hold given the released history" not in status


def _variant(tmp_path, changes):
    import re

    text = EXAMPLE.read_text()
    for pattern, replacement in changes:
        text, n = re.subn(pattern, replacement, text, flags=re.M)
        assert n == 1, pattern
    path = tmp_path / "c.toml"
    path.write_text(text)
    return path


def test_a_tiny_epsilon_total_and_a_huge_fedprox_weight_are_no_tracebacks(tmp_path, capsys):
    """Found by an adversarial audit: epsilon_total = 1e-300 raised ArithmeticError in the exact Gaussian inverse, and
    FedProx's mu = 1e300 an OverflowError in its sensitivity (both tracebacks, exit 1). The first is a valid target
    (it now runs: the noise is huge and the note says so); the second is refused naming arm.mu."""
    path = _variant(tmp_path, [(r'^dp_calibration = "per_round_eps"', 'dp_calibration = "target_total_eps_bound"'),
                               (r"^epsilon = 1\.0 ", "epsilon_total = 1e-300 ")])
    assert _main(["run", "fedpdm", str(path), "--rounds", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["noise"]["z"] > 1e4   # 9.2e4: all but no signal
    path = _variant(tmp_path, [(r'^privacy_model = "history_gaussian".*$', ""),
                               (r'^name = "fedpdm" .*$', 'name = "fedprox"\nmu = 1e300')])
    with pytest.raises(SystemExit) as exc:
        _main(["run", "fedpdm", str(path), "--rounds", "3"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and "arm.mu" in err[0] and "overflows" in err[0]
