"""Unit tests of the claim records, the registry's integrity rules and claim selection."""

import dataclasses

import pytest

from verify.records import CheckContext, CheckResult, Citation, Claim, Evidence, FigureSpec, Series, Verdict
from verify.registry import all_claims, get_claim, select_claims, validate_registry

SEED = "000_133b71fd0aa99eb4.txt"


def dummy_check(ctx):
    return CheckResult(claim_id="toy.ok", verdict=Verdict.CONFIRMED, summary="ok")


def dummy_reproduce(counterexample):
    return Evidence(measured=2.0, bound=1.0, holds=False, parameters=counterexample)


def make_claim(**overrides):
    fields = dict(id="toy.ok", paper="toy", title="t", citations=(Citation(seed=SEED, label="Lemma 1"),),
                  statement="s", hypotheses=("h",), check=dummy_check, expected=Verdict.CONFIRMED, reason="r")
    fields.update(overrides)
    return Claim(**fields)


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"id": "Toy.OK"}, "id must look like 'paper.label'"),
        ({"id": "toy"}, "id must look like 'paper.label'"),
        ({"paper": "other"}, "paper must be the first component"),
        ({"citations": ()}, "citations must name at least one source"),
        ({"expected": Verdict.ERROR}, "expected must be confirmed, refuted or not_checkable"),
        ({"expected": Verdict.REFUTED}, "needs a reproduce function"),
        ({"corrected_by": "toy.fix"}, "only a refuted claim has a corrected_by"),
        ({"expected": "maybe"}, "is not a valid Verdict"),
    ],
)
def test_claim_rejects_inconsistent_records(overrides, match):
    with pytest.raises(ValueError, match=match):
        make_claim(**overrides)


def test_citation_requires_a_source_and_a_real_seed_name():
    with pytest.raises(ValueError, match="needs a seed file or an external source"):
        Citation(label="Theorem I")
    with pytest.raises(ValueError, match="seed must be a seed file name"):
        Citation(seed="000.txt", label="Theorem I")
    assert str(Citation(seed=SEED, label="Theorem II", equation="(27)")) == f"seed {SEED}, Theorem II, eq. (27)"


def test_check_result_requires_counterexample_for_refuted_and_text_for_error():
    with pytest.raises(ValueError, match="refuted verdict needs a counterexample"):
        CheckResult(claim_id="toy.x", verdict=Verdict.REFUTED, summary="s")
    with pytest.raises(ValueError, match="error verdict needs the error text"):
        CheckResult(claim_id="toy.x", verdict="error", summary="s")


def test_figure_and_series_validation():
    with pytest.raises(ValueError, match="x has 2 points but y has 1"):
        Series(label="a", x=(1, 2), y=(1,))
    with pytest.raises(ValueError, match="figure name must match"):
        FigureSpec(name="Bad Name", title="t", xlabel="x", ylabel="y", series=(Series(label="a", x=(1,), y=(1,)),))


def test_context_validates_profile_and_seed_and_derives_per_claim_seeds():
    with pytest.raises(ValueError, match="profile must be 'ci' or 'thorough'"):
        CheckContext(profile="fast")
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        CheckContext(seed=-1)
    ctx = CheckContext(seed=7)
    a = ctx.seed_sequence("pgfl.x").generate_state(4)  # 4 words: 128 bits, collisions impossible in practice
    assert (a == CheckContext(seed=7).seed_sequence("pgfl.x").generate_state(4)).all()
    assert (a != ctx.seed_sequence("pgfl.y").generate_state(4)).any()
    assert (a != CheckContext(seed=8).seed_sequence("pgfl.x").generate_state(4)).any()


def test_registry_rejects_duplicates_and_dangling_or_one_sided_corrections():
    ok = make_claim()
    with pytest.raises(ValueError, match="declared twice"):
        validate_registry([ok, ok])
    bad = make_claim(id="toy.bad", expected=Verdict.REFUTED, reproduce=dummy_reproduce, corrected_by="toy.fix")
    with pytest.raises(ValueError, match="unknown claim 'toy.fix'"):
        validate_registry([bad])
    fix_without_link = make_claim(id="toy.fix")
    with pytest.raises(ValueError, match="must set corrects='toy.bad'"):
        validate_registry([bad, fix_without_link])
    fix = make_claim(id="toy.fix", corrects="toy.bad")
    validate_registry([bad, fix])
    with pytest.raises(ValueError, match="does not name it"):
        validate_registry([dataclasses.replace(bad, corrected_by=None), fix])


def test_the_real_registry_is_consistent_and_selectable():
    claims = all_claims()
    ids = [c.id for c in claims]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert {"pgfl.theorem2.bound_closed_form", "pgfl.corollary.bound_value", "dp.gaussian_zcdp"} <= set(ids)
    assert all(c.paper == "pgfl" for c in select_claims(["pgfl"]))
    assert [c.id for c in select_claims(["dp.gaussian_zcdp"])] == ["dp.gaussian_zcdp"]
    assert select_claims([]) == claims
    with pytest.raises(ValueError, match="'pg' matches no claim id"):
        select_claims(["pg"])  # prefixes match whole id components only
    with pytest.raises(ValueError, match="claim_id must be a registered claim"):
        get_claim("nope.nothing")


def test_result_json_is_plain_and_figure_names_are_unique():
    fig = FigureSpec(name="f", title="t", xlabel="x", ylabel="y", series=(Series(label="a", x=(1,), y=(1,)),))
    with pytest.raises(ValueError, match="figure names must be unique"):
        CheckResult(claim_id="toy.x", verdict=Verdict.CONFIRMED, summary="s", figures=(fig, fig))
    import json

    import numpy as np

    record = CheckResult(claim_id="toy.x", verdict=Verdict.CONFIRMED, summary="s", measured=float("inf"),
                         details={"holds": np.bool_(True), "v": np.float64("nan")}, runtime_s=float("nan"))
    text = json.dumps(record.to_json(), allow_nan=False)
    assert json.loads(text)["details"] == {"holds": True, "v": "nan"}
