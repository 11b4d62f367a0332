"""`fedcheck msd CONFIG.toml`: docs/papers/paofed.md#instance-reference table, naive = structured, unstable mu,
transient, bad fields."""

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

from fedcheck import cli
from theory.msd.routes import RADIUS_TOLS
from verify.tolerance import MSD_AGREEMENT_RTOL, SPECTRAL_RADIUS_RTOL

EXAMPLE = Path(__file__).resolve().parents[2] / "fedcheck" / "examples" / "paofed_reference.toml"

# Regression values: docs/papers/paofed.md#instance-reference table (re-derived by docs/papers/paofed.md#review-notes).
TABLE = {0.05: (0.987778, 0.987891, -33.321, -33.125), 0.1: (0.975762, 0.976213, -30.496, -30.073),
         0.2: (0.952393, 0.954209, -27.683, -26.734)}


def _config(tmp_path, mu_lambda=0.1, extra=""):
    text = EXAMPLE.read_text().replace("mu_times_lambda_max = 0.1 ", f"mu_times_lambda_max = {mu_lambda} ")
    path = tmp_path / "c.toml"
    path.write_text(text + extra)
    return path


def _run(capsys, *args):
    assert cli.main(["msd", *map(str, args), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("mu_lambda", sorted(TABLE))
def test_reference_table(tmp_path, capsys, mu_lambda):
    out = _run(capsys, _config(tmp_path, mu_lambda))
    rho_seed, rho_exact, msd_seed, msd_exact = TABLE[mu_lambda]
    # docs/papers/paofed.md#instance-reference table values: lambda_max and the radii to half a unit in their last
    # printed place, the dB values to one unit (3 decimals), the thresholds (printed to 4) to 5e-4 (measured within 4e-7
    # of them)
    assert out["lambda_max"] == pytest.approx(3.1030, abs=5e-5)
    assert out["models"]["seed"]["spectral_radius"] == pytest.approx(rho_seed, abs=5e-7)
    assert out["models"]["exact"]["spectral_radius"] == pytest.approx(rho_exact, abs=5e-7)
    assert out["models"]["seed"]["msd_db"] == pytest.approx(msd_seed, abs=1e-3)
    assert out["models"]["exact"]["msd_db"] == pytest.approx(msd_exact, abs=1e-3)
    lam = out["lambda_max"]
    assert out["thresholds"]["mean"][0] * lam == pytest.approx(2.0856, abs=5e-4)
    assert out["thresholds"]["seed"][0] * lam == pytest.approx(1.0711, abs=5e-4)
    assert out["thresholds"]["exact"][0] * lam == pytest.approx(0.6724, abs=5e-4)


def test_naive_and_structured_agree(tmp_path, capsys):
    path = _config(tmp_path, 0.2)
    naive = _run(capsys, path, "--method", "naive")
    structured = _run(capsys, path, "--method", "structured")
    for model in ("seed", "exact"):
        a, b = naive["models"][model]["msd"], structured["models"][model]["msd"]
        assert abs(a - b) <= MSD_AGREEMENT_RTOL * abs(b)
        ra, rb = naive["models"][model]["spectral_radius"], structured["models"][model]["spectral_radius"]
        # the structured route reports rho(F) at mu with its Ritz residual (to the precision the report needs,
        # routes.RADIUS_TOLS); the naive route's rho is converged to 1e-13
        precision = structured["models"][model].get("spectral_radius_residual", SPECTRAL_RADIUS_RTOL)
        assert precision <= RADIUS_TOLS[0]
        assert abs(ra - rb) <= max(precision, SPECTRAL_RADIUS_RTOL)


def test_unstable_mu_reports_the_threshold(tmp_path, capsys):
    out = _run(capsys, _config(tmp_path, 0.9), "--model", "exact")
    entry = out["models"]["exact"]
    assert not entry["stable"] and entry["msd_db"] is None and "stable for mu <" in entry["note"]


def test_transient_json_and_csv(tmp_path, capsys):
    csv_path = tmp_path / "curve.csv"
    out = _run(capsys, _config(tmp_path), "--model", "seed", "--transient", "20", "--csv", csv_path)
    curve = out["models"]["seed"]["transient_db"]
    # 20 iterations + the start; MSD(0) = ||w_star||^2 of the example config; a header row in the CSV
    assert len(curve) == 21 and curve[0] == pytest.approx(10 * np.log10(1 + 0.25 + 0.0625 + 0.25), rel=1e-12)
    rows = list(csv.reader(csv_path.open()))
    assert rows[0] == ["n", "msd_db_seed"] and len(rows) == 22


def test_covariance_from_npy_and_white_variances(tmp_path, capsys):
    R = np.stack([np.eye(5) * v for v in (0.5, 1.0, 1.5, 2.0)])
    np.save(tmp_path / "R.npy", R)
    text = EXAMPLE.read_text().replace("toeplitz_rho = [0.1, 0.3, 0.5, 0.7]", 'R_npy = "R.npy"')
    (tmp_path / "a.toml").write_text(text)
    a = _run(capsys, tmp_path / "a.toml", "--model", "seed")
    text = EXAMPLE.read_text().replace("toeplitz_rho = [0.1, 0.3, 0.5, 0.7]", "white_variances = [0.5, 1.0, 1.5, 2.0]")
    (tmp_path / "b.toml").write_text(text)
    b = _run(capsys, tmp_path / "b.toml", "--model", "seed")
    assert a["models"]["seed"]["msd"] == b["models"]["seed"]["msd"] and a["lambda_max"] == 2.0


@pytest.mark.parametrize(("replace", "field"), [
    (("K = 4", "K = 0"), "instance.K"),
    (("m = 2", "m = 9"), "instance.m"),
    (("delta = 0.3", "delta = 1.5"), "instance.delta"),
    (("w_star = [1.0, -0.5, 0.25, 0.0, 0.5]", "w_star = [1.0]"), "instance.w_star"),
    (("selection = \"subset\"", "selection = \"random\""), "instance.selection"),
    (("toeplitz_rho = [0.1, 0.3, 0.5, 0.7]", "R_npy = \"missing.npy\""), "instance.R_npy"),
])
def test_malformed_config_exits_2_naming_the_field(tmp_path, capsys, replace, field):
    (tmp_path / "c.toml").write_text(EXAMPLE.read_text().replace(*replace))
    with pytest.raises(SystemExit) as exc:
        cli.main(["msd", str(tmp_path / "c.toml")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and field in err


def test_small_mu_answers_with_capped_solvers(tmp_path, capsys):
    """Issue 12 hang: mu lambda_max = 0.003 on the reference config answers (capped Krylov, naive where it fits)."""
    out = _run(capsys, _config(tmp_path, 0.003), "--model", "exact")
    entry = out["models"]["exact"]
    assert entry["stable"] and entry["msd_db"] is not None
    from fedcheck.msd import load_instance
    from theory.msd import msd_steady_state_naive

    inst = load_instance(_config(tmp_path, 0.003))
    # small mu: I - F ill-conditioned (condition ~ 1/mu): 10 x MSD_AGREEMENT_RTOL
    assert abs(entry["msd"] / msd_steady_state_naive(inst, "exact", solver="sparse") - 1) <= 1e-9


def test_white_route_is_chosen_and_reported_with_progress(tmp_path, capsys):
    text = EXAMPLE.read_text().replace("toeplitz_rho = [0.1, 0.3, 0.5, 0.7]", "white_variances = [0.5, 1.0, 1.5, 2.0]")
    (tmp_path / "w.toml").write_text(text)
    assert cli.main(["msd", str(tmp_path / "w.toml"), "--json", "--progress"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["route"] == "white" and out["models"]["exact"]["route"] == "white"
    assert "route: white" in captured.err and "threshold search" in captured.err
    structured = _run(capsys, tmp_path / "w.toml", "--method", "structured")
    for model in ("seed", "exact"):
        assert abs(out["models"][model]["msd"] / structured["models"][model]["msd"] - 1) <= MSD_AGREEMENT_RTOL


def test_paper_scale_example_parses_to_the_grouped_route():
    """The shipped paper-scale example is the paper's set-up with white features in four classes of 64 clients:
    the grouped route applies."""
    from fedcheck.msd import load_instance
    from theory.msd.routes import choose_route

    path = EXAMPLE.parent / "paofed_paper_white.toml"
    inst = load_instance(path)
    assert (inst.K, inst.D, inst.l_max, inst.m, inst.selection) == (256, 200, 10, 4, "window")
    assert sorted(set(inst.p.tolist())) == [0.005, 0.025, 0.1, 0.25] and inst.lambda_max == pytest.approx(1.02)
    assert choose_route(inst) == "grouped"


GROUPS = """
[[instance.group]]
count = 4
p = 0.9
sigma2_eta = 0.01
white_variance = 1.0

[[instance.group]]
count = 2
p = 0.4
sigma2_eta = 0.02
white_variance = 1.5
"""


def _grouped_config(tmp_path, groups=GROUPS, drop=("K", "p", "sigma2_eta", "toeplitz_rho")):
    lines = [ln for ln in EXAMPLE.read_text().splitlines() if ln.split(" = ")[0] not in drop]
    text = "\n".join(lines).replace("\n[data]\n", groups + "\n[data]\n", 1)  # the section, not the comment
    path = tmp_path / "g.toml"
    path.write_text(text)
    return path


def test_group_shorthand_equals_the_per_client_lists(tmp_path, capsys):
    """[[instance.group]] writes the clients group by group; fedcheck msd takes the grouped route and agrees
    with the white route on the same instance."""
    from fedcheck.msd import load_instance

    inst = load_instance(_grouped_config(tmp_path))
    assert inst.K == 6 and inst.p.tolist() == [0.9] * 4 + [0.4] * 2
    assert inst.sigma2_eta.tolist() == [0.01] * 4 + [0.02] * 2
    assert np.array_equal(inst.R, np.array([1.0] * 4 + [1.5] * 2)[:, None, None] * np.eye(5)[None])
    grouped = _run(capsys, _grouped_config(tmp_path))
    white = _run(capsys, _grouped_config(tmp_path), "--method", "white")
    assert grouped["route"] == "grouped" and white["route"] == "white"
    for model in ("seed", "exact"):
        assert abs(grouped["models"][model]["msd"] / white["models"][model]["msd"] - 1) <= MSD_AGREEMENT_RTOL
        assert grouped["models"][model]["solver"].startswith("grouped")


@pytest.mark.parametrize(("groups", "drop", "field"), [
    (GROUPS, ("K", "toeplitz_rho"),
     "instance.p does not apply here (it applies only when [[instance.group]] is absent)"),
    (GROUPS.replace("count = 2", "count = 0"), None, "instance.group[1].count must be an integer >= 1"),
    (GROUPS.replace("p = 0.4", "p = 1.5"), None, "instance.group[1].p must be a real in (0, 1]"),
    (GROUPS.replace("white_variance = 1.5", "toeplitz_rho = 0.5"), None, "instance.group[1].toeplitz_rho: every"),
    (GROUPS.replace("white_variance = 1.5", ""), None, "instance.group[1]: give exactly one"),
    (GROUPS.replace("count = 4", "count = 4\ncolour = 1"), None, "instance.group[0].colour is not a field"),
    (GROUPS, ("p", "sigma2_eta", "toeplitz_rho"), "instance.K = 4 differs"),  # the example's K = 4, groups: 6
])
def test_group_shorthand_bad_fields(tmp_path, capsys, groups, drop, field):
    path = _grouped_config(tmp_path, groups, drop or ("K", "p", "sigma2_eta", "toeplitz_rho"))
    with pytest.raises(SystemExit) as exc:
        cli.main(["msd", str(path)])
    assert exc.value.code == 2 and field in capsys.readouterr().err


def test_classes_route_leaves_stability_undecided(tmp_path, capsys):
    """On the classes route rho(F) is not computed: 'stable' is null with the reason, the MSD equals the
    structured route's (an (S2) solution alone does not show rho(F) < 1)."""
    path = _config(tmp_path, 0.1)
    out = _run(capsys, path, "--method", "classes")
    structured = _run(capsys, path, "--method", "structured")
    for model in ("seed", "exact"):
        entry = out["models"][model]
        assert entry["stable"] is None and "not decided" in entry["stability"] and entry["spectral_radius"] is None
        assert abs(entry["msd"] / structured["models"][model]["msd"] - 1) <= MSD_AGREEMENT_RTOL
        assert structured["models"][model]["stable"] is True


def test_models_in_parallel_processes_give_the_same_report(monkeypatch):
    """msd_report analyses the two models on the shared process pool: the same numbers as one after the other."""
    from fedcheck import msd
    from theory.msd.instance import reference_instance

    monkeypatch.setattr(msd, "PARALLEL_MIN_N", 0)  # the pool even for this small instance
    inst = reference_instance(0.1)
    one = msd.msd_report(inst, ("seed", "exact"), method="structured", workers=1)
    two = msd.msd_report(inst, ("seed", "exact"), method="structured", workers=2)
    for rep in (one, two):
        for entry in rep["models"].values():
            entry.pop("seconds")
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)  # bit for bit


def test_a_model_that_fails_in_its_worker_process_fails_the_report(monkeypatch):
    """The exact model runs in a worker process: its ValueError reaches the caller as it was raised, and a worker
    that dies without an answer is named (never a hang, never a silently missing model)."""
    from concurrent.futures.process import BrokenProcessPool

    from fedcheck import msd
    from tests.fedcheck.plugin_harness import dying_analysis, failing_analysis
    from theory.msd.instance import reference_instance

    inst = reference_instance(0.1)
    monkeypatch.setattr(msd, "PARALLEL_MIN_N", 0)
    monkeypatch.setattr(msd, "_analyse", failing_analysis)
    with pytest.raises(ValueError, match="did not converge"):
        msd.msd_report(inst, ("seed", "exact"), method="structured", workers=2)
    monkeypatch.setattr(msd, "_analyse", dying_analysis)
    with pytest.raises(BrokenProcessPool):
        msd.msd_report(inst, ("seed", "exact"), method="structured", workers=2)


def test_classes_route_models_run_one_after_the_other_when_two_would_not_fit(monkeypatch):
    """Two classes-route solves at once hold two sets of reduced states (3.6 GB each at the paper's scale): when that
    exceeds the memory available, the models run one after the other, and the user is told."""
    from fedcheck import msd as msd_cli
    from theory.msd import classes
    from theory.msd.instance import reference_instance

    inst = reference_instance(0.1)
    said = []
    monkeypatch.setattr(classes, "classes_peak_bytes", lambda x: 3.6e9)  # the paper's scale
    monkeypatch.setattr(msd_cli, "_available_memory", lambda: 6.0e9)  # 7.2 GB needed: does not fit
    assert msd_cli._workers_that_fit(inst, "classes", 2, said.append) == 1
    assert said and "one after the other" in said[0] and "7.2 GB" in said[0]
    monkeypatch.setattr(msd_cli, "_available_memory", lambda: 16.0e9)  # fits within 80 %
    assert msd_cli._workers_that_fit(inst, "classes", 2, said.append) == 2
    assert msd_cli._workers_that_fit(inst, "structured", 2, said.append) == 2  # other routes: not estimated
    assert len(said) == 1


def test_classes_peak_bytes_at_the_paper_scale_matches_the_measured_peak(tmp_path):
    """The estimate is PEAK_STATES reduced states, calibrated on the measured 3.63 GB peak RSS of one model at the
    paper's scale (K = 256 in 4 classes, D = 200, l_max = 10: 1.0036e8 unknowns)."""
    from fedcheck.msd import load_instance
    from theory.msd.classes import PEAK_STATES, classes_peak_bytes
    from theory.msd.classes_operator import class_unknowns

    assert 3.5e9 <= PEAK_STATES * 8 * class_unknowns(10, 4, 200)[1] <= 3.9e9  # 3.63 GB measured
    inst = load_instance(_grouped_config(tmp_path))
    g = class_unknowns(inst.l_max, 2, inst.D)[1]  # GROUPS: two classes
    assert classes_peak_bytes(inst) == PEAK_STATES * 8 * g


@pytest.mark.parametrize("mu_lambda", [0.1, 0.8])
def test_classes_route_certifies_the_exact_models_stability_on_request(tmp_path, capsys, mu_lambda):
    """--certify-stability: on the classes route the exact model's stability is decided by S - F(S) = I (S positive
    definite iff stable), as the structured route decides it by rho(F): stable at mu lambda = 0.1, unstable at 0.8
    (the exact model's threshold: mu lambda_max = 0.6724); the seed model stays undecided, saying why."""
    path = _config(tmp_path, mu_lambda)
    out = _run(capsys, path, "--method", "classes", "--certify-stability")
    structured = _run(capsys, path, "--method", "structured")
    exact, seed = out["models"]["exact"], out["models"]["seed"]
    assert exact["stable"] is structured["models"]["exact"]["stable"] is (mu_lambda < 0.5)  # threshold 0.6724
    cert = exact["stability_certificate"]
    assert cert["stable"] is exact["stable"] and cert["perturbation"] < 1 and cert["residual"] <= 1e-9  # decided
    if exact["stable"]:
        assert abs(exact["msd"] / structured["models"]["exact"]["msd"] - 1) <= MSD_AGREEMENT_RTOL
    else:
        assert exact["msd_db"] is None and "no positive definite solution" in exact["note"]
    assert seed["stable"] is None and any("not completely positive" in n for n in seed["notes"])
    undecided = _run(capsys, path, "--method", "classes")["models"]["exact"]  # without the option: as before
    assert undecided["stable"] is None and "stability_certificate" not in undecided


def test_class_mean_estimate_is_labelled_and_simulated_per_client(tmp_path, capsys, monkeypatch):
    """--method class-mean answers a federation with a different R_k per client by its class-mean federation, says so
    (certified false, the classes, the spread, the note) in JSON and text, and --simulate simulates the per-client
    federation, not the class means (a default of 2,000 iterations, lengthened by the plan to 7,606, instead of the
    route's 20,000: 18 -> 10 s)."""
    import importlib

    from theory.msd.classes_rff import rff_client_covariances

    tvs = importlib.import_module("reference_impl.paofed.theory_vs_simulation")  # the module, not the function
    monkeypatch.setattr(tvs, "default_iterations", lambda radius: 2000)
    from theory.msd.per_client import class_mean_msd_estimate

    R, _ = rff_client_covariances(5, 4, np.random.default_rng(7), ridge=1e-2)
    np.save(tmp_path / "R.npy", R)
    text = (EXAMPLE.read_text().replace("toeplitz_rho = [0.1, 0.3, 0.5, 0.7]", 'R_npy = "R.npy"')
            .replace("p = [0.9, 0.6, 0.4, 0.2]", "p = [0.6, 0.6, 0.3, 0.3]"))
    path = tmp_path / "pc.toml"
    path.write_text(text)
    est = _run(capsys, path, "--method", "class-mean", "--simulate", "2")
    assert est["route"].startswith("class-mean estimate") and est["method"] == "class-mean"
    info = est["class_mean_estimate"]
    assert info["certified"] is False and info["classes"] == 2 and info["spread"] > 0.01
    assert "docs/msd.md#per-client" in info["note"]
    from fedcheck.msd import load_instance

    for model in ("seed", "exact"):
        ref = class_mean_msd_estimate(load_instance(path), model)
        assert est["models"][model]["msd"] == pytest.approx(ref.msd, rel=MSD_AGREEMENT_RTOL)
    sim = est["simulation"]
    # 2,000 would average before rho(M)^2's four-decade time: the plan lengthens the run to twice that time
    assert sim["runs"] == 2 and sim["iterations"] == 2 * sim["settlement"]["start_needed"] > 2000
    assert cli.main(["msd", str(path), "--method", "class-mean", "--model", "seed"]) == 0
    assert "NOT CERTIFIED" in capsys.readouterr().out


@pytest.mark.parametrize("extra, field", [
    ("foo = 1\n", "foo"), ("[simulation]\niterationz = 5\n", "simulation.iterationz"),
    ("[data]\nsourcee = 'linear'\n", "data.sourcee"), ("paper = 'gtv'\n", "paper"),
])
def test_keys_outside_instance_are_checked_not_ignored(tmp_path, capsys, extra, field):
    """Found by an adversarial audit: msd used only [instance] and ignored everything else, so a misspelt key or
    another paper's declaration passed silently; the whole file is now checked as `fedcheck run paofed` checks it."""
    path = tmp_path / "c.toml"
    path.write_text(extra + "[instance]\n" if not extra.startswith("[") else "[instance]\n" + extra)
    with pytest.raises(SystemExit) as exc:
        cli.main(["msd", str(path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and field in err[0]


def test_inputs_whose_scales_overflow_or_vanish_are_refused(tmp_path, capsys):
    """Found by an adversarial audit: a client whose covariance lies 300 decades below another's was accepted (its
    mu lambda_k = 1e-301, and the MSD came out as 0), and w* with an entry of 1e308 made the initial MSD overflow (run
    paofed: a 'diverged' run of nulls at a stable step)."""
    path = tmp_path / "c.toml"
    path.write_text("[instance]\nK = 2\nD = 2\nl_max = 0\nm = 1\np = [0.5, 0.5]\nalpha = [1.0]\n"
                    "sigma2_eta = [0.01, 0.01]\nw_star = [1.0, 0.0]\n"
                    "R = [[[1e300, 0.0], [0.0, 1e300]], [[1.0, 0.0], [0.0, 1.0]]]\n")
    with pytest.raises(SystemExit) as exc:
        cli.main(["msd", str(path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and "instance.R: client 1" in err[0] and "300 decades" in err[0]
    text = EXAMPLE.read_text()
    path.write_text(re.sub(r"^w_star = .*$", "w_star = [1.0, -0.5, 1e308, 0.0, 0.5]", text, flags=re.M))
    for argv in (["msd", str(path)], ["run", "paofed", str(path), "--iterations", "5"]):
        with pytest.raises(SystemExit) as exc:
            cli.main(argv)
        err = capsys.readouterr().err.strip().splitlines()
        assert exc.value.code == 2 and len(err) == 1 and "instance.w_star" in err[0] and "overflows" in err[0]
