"""``fedcheck check`` on GTV: the shipped example passes; Theorem 2 decided on a well-connected partition; steps
violating Algorithm 1's primal-dual condition exit 1 naming the claim and the value."""

from __future__ import annotations

import dataclasses
import json
import pathlib

from fedcheck import cli
from fedcheck.check import load_instance
from verify.instance import CheckOptions, check_instance

EXAMPLES = pathlib.Path(cli.__file__).resolve().parent / "examples"

SMALL = """paper = "gtv"
[graph]
generator = "dense"
N = 8
k = 2
n_inter = 2
[data]
d = 3
m = 10
noise = 0.001
[model]
lam = 0.5
[algorithm]
theta = 1.0
iterations = 5000
tol = 1e-10
"""


def check(capsys, *args):
    try:
        status = cli.main(["check", *map(str, args)])
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def test_gtv_example_passes_and_theorem2_is_not_applicable_without_35(capsys):
    status, out, err = check(capsys, EXAMPLES / "gtv.toml", "--json")
    assert status == 0, err
    by_id = {o["claim_id"]: o for o in json.loads(out)["outcomes"]}
    conv = by_id["gtv.algorithm1_convergence"]
    assert conv["status"] == "holds" and conv["value"] <= conv["bound"]
    assert conv["hypotheses"][0]["met"] and conv["hypotheses"][0]["value"] <= 1.0
    # the example's SBM partition is not well connected (every anchor fails (35)): no guarantee, listed with its slack
    thm = by_id["gtv.theorem2"]
    assert thm["status"] == "not_applicable" and not any(h["met"] for h in thm["hypotheses"])


def test_gtv_well_connected_partition_decides_theorem2(tmp_path, capsys):
    path = tmp_path / "small.toml"
    path.write_text(SMALL, encoding="utf-8")
    status, out, err = check(capsys, path, "--json")
    assert status == 0, err
    by_id = {o["claim_id"]: o for o in json.loads(out)["outcomes"]}
    for cid in ("gtv.theorem2", "gtv.theorem2_sharper", "gtv.gap_projected_stopping_rule"):
        assert by_id[cid]["status"] == "holds", by_id[cid]
    thm = by_id["gtv.theorem2"]
    assert all(h["met"] for h in thm["hypotheses"]) and 0 < thm["value"] <= thm["bound"]
    assert by_id["gtv.theorem2_sharper"]["bound"] * 2 == thm["bound"]


def test_gtv_steps_violating_the_primal_dual_condition_exit_1(tmp_path):
    path = tmp_path / "small.toml"
    path.write_text(SMALL, encoding="utf-8")
    user = load_instance(path)
    # theta cancels in tau_i sigma_e = 1/(2 |N(i)|): the configuration cannot break the condition, the API can
    broken = dataclasses.replace(user, settings={**user.settings, "sigma": 2.0})   # sigma_e = 4x the seed's 1/2
    result = check_instance(broken, CheckOptions(simulate=False))
    assert result.exit_status == 1
    first = result.failures[0]
    assert first.claim_id == "gtv.algorithm1_convergence" and first.status == "hypotheses_not_met"
    hyp = first.evaluation.hypotheses[0]
    assert hyp.name == "||Sigma^1/2 D T^1/2||^2" and hyp.value > 1.0 and not hyp.met


def test_gtv_single_well_connected_cluster_is_learnt_as_the_pooled_minimiser(tmp_path, capsys):
    edges = [[i, j] for i in range(6) for j in range(i + 1, 6)]
    path = tmp_path / "one.toml"
    path.write_text(f'paper = "gtv"\n[graph]\ngenerator = "edges"\nedges = {edges}\nclusters = [0, 0, 0, 0, 0, 0]\n'
                    "[data]\nd = 3\nm = 10\nnoise = 0.001\n[model]\nlam = 0.5\n[algorithm]\niterations = 5000\n"
                    "tol = 1e-10\n", encoding="utf-8")
    status, out, err = check(capsys, path, "--json")
    assert status == 0, err
    cor = {o["claim_id"]: o for o in json.loads(out)["outcomes"]}["gtv.corollary38"]
    assert cor["status"] == "holds" and cor["bound"] == 0.0 and cor["value"] < 1e-8
    assert all(h["met"] for h in cor["hypotheses"])


def test_a_run_that_overflows_is_not_told_to_run_longer(tmp_path):
    """Found by an adversarial audit: theta = 1e300 meets the step condition, but the run's values overflow; the claim
    said 'raise algorithm.iterations', which would not help. It now says the values left the double range."""
    import re

    path = tmp_path / "c.toml"
    path.write_text(re.sub(r"^theta = 10\.0", "theta = 1e300", (EXAMPLES / "gtv.toml").read_text(), flags=re.M))
    result = check_instance(load_instance(path), CheckOptions(simulate=True))
    outcome = next(o for o in result.outcomes if o.claim_id == "gtv.algorithm1_convergence")
    assert outcome.evaluation.status == "not_evaluable"
    assert "left the double range" in outcome.evaluation.summary and "raise algorithm" not in outcome.evaluation.summary
