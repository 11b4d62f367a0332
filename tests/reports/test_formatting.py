"""How numbers, runtimes, citations and the header read on the report page."""

from __future__ import annotations

import pytest

from reports.formatting import citation_html, format_number, format_seconds, measured_html, meta_html
from verify.papers import SEED_DOCUMENTS, SEED_PGFL_A, citation_parts
from verify.records import CheckResult, Citation, Verdict
from verify.registry import paper_short_title


@pytest.mark.parametrize(("value", "text"), [
    (-0.0, "0"), (0.0, "0"), (0, "0"), (-3, "−3"), (0.5, "0.5"), (-0.25, "−0.25"), (1.05232e-8, "1.052 × 10⁻⁸"),
    (-2.5e12, "−2.5 × 10¹²"), (float("inf"), "∞"), (float("-inf"), "−∞"), (float("nan"), "NaN"), ("-inf", "−∞"),
    (None, "–"), (True, "True"), (123456.0, "1.235 × 10⁵"), (0.999667, "0.999667"),
])
def test_format_number(value, text):
    assert format_number(value) == text


def test_format_seconds():
    assert [format_seconds(s) for s in (0.0, 9.994, 59.9, 61, 3600 * 2 + 5 * 60)] == [
        "0.00 s", "9.99 s", "59.9 s", "1 min 01 s", "2 h 05 min"]
    assert format_seconds(None) == "–"


def test_a_not_checkable_card_without_bound_says_so():
    nc = CheckResult(claim_id="toy.a", verdict=Verdict.NOT_CHECKABLE, summary="needs a data file")
    assert "no bound" in measured_html(nc) and "–" not in measured_html(nc)
    ok = CheckResult(claim_id="toy.b", verdict=Verdict.CONFIRMED, summary="s", measured=0.5, bound=-0.0, margin=-0.5)
    html = measured_html(ok)
    assert "-0" not in html and "<b>bound</b> 0" in html and "−0.5" in html
    only_measured = CheckResult(claim_id="toy.c", verdict=Verdict.NOT_CHECKABLE, summary="s", measured=900.0)
    assert "<b>bound</b> <i>none</i>" in measured_html(only_measured)


def test_header_omits_empty_values_and_shows_data_files_by_hash_prefix():
    html = meta_html({"profile": "ci", "seed": 0, "only": [], "data": {}, "executor": "serial"})
    assert "data" not in html and "only" not in html and "{}" not in html and "seed: 0" in html
    html = meta_html({"data": {"mnist": {"path": "/somewhere/mnist.npz", "sha256": "ab" * 32}}})
    assert "mnist (sha256 abababababab…)" in html and "/somewhere" not in html


def test_citation_reads_paper_label_equation_with_the_seed_file_as_detail():
    citation = Citation(seed=SEED_PGFL_A, label="Theorem III", equation="(46)", lines="374-381")
    main, detail, title = citation_parts(citation)
    assert main == "PGFL paper (text A), Theorem III, eq. (46)"
    assert detail == f"seed file {SEED_PGFL_A}, lines 374-381"
    assert title == SEED_DOCUMENTS[SEED_PGFL_A].title
    html = citation_html(citation)
    assert html.index("Theorem III") < html.index(SEED_PGFL_A) and "class='seed'" in html
    external = Citation(external="Bun & Steinke 2016", label="Lemma 2.3")
    assert citation_parts(external) == ("Bun & Steinke 2016, Lemma 2.3", "", "")


def test_every_seed_has_a_document_and_short_titles_are_short():
    from verify import papers

    seeds = {getattr(papers, name) for name in papers.__all__ if name.startswith("SEED_") and name != "SEED_DOCUMENTS"}
    assert seeds == set(SEED_DOCUMENTS)
    for paper in ("dp", "pgfl", "paofed", "zcdp_nfl", "gtv", "fedpdm", "npfl_rl"):
        assert 0 < len(paper_short_title(paper)) <= 60 and "(" not in paper_short_title(paper)


def test_the_card_shows_a_non_bound_results_slack_and_an_experiments_grid():
    """A sufficient condition's measured slack and an experiment's grid (each point's decision, its replicates, the
    unreported choices) get rows of their own on the card, not only the folded details; a grid not run (its data file
    absent) shows the points it would run; a result with neither gets neither row."""
    from reports.formatting import grid_line, slack_line
    from reports.html import _card
    from reports.texmath import MathSheet
    from verify.records import CheckResult, Verdict
    from verify.registry import get_claim

    claim = get_claim("gtv.corollary38")
    slack = {"definition": "long text", "holds_down_to_factor": 0.05, "threshold_over_needed_at_least": 20.0}
    grid = [{"point": {"rho": 1.0}, "decision": "confirmed", "replicates": 80},
            {"point": {"rho": 0.3}, "decision": "effect below the practical margin", "replicates": 40}]
    details = {"condition_slack": slack, "grid": grid, "unreported_choices": {"rho": "not reported"}}
    result = CheckResult(claim_id=claim.id, verdict=Verdict.CONFIRMED, summary="s", quantity="q", details=details)
    html = _card(claim, result, {}, {claim.id: claim}, "ci", sheet=MathSheet())
    card = html.split("<details>")[0]  # the rows, not the folded details
    assert "<td>slack</td>" in card and "holds down to factor = 0.05" in card and "long text" not in card
    assert "<td>grid</td>" in html and "rho = 0.3: effect below the practical margin (n = 40)" in html
    assert "unreported choices: rho: not reported" in html
    planned = grid_line({"grid_planned": [{"N": 100}], "unreported_choices": "none can change it"})
    assert planned == "N = 100: not run (needs its data file)\nunreported choices: none can change it"
    bare = CheckResult(claim_id=claim.id, verdict=Verdict.CONFIRMED, summary="s", quantity="q", details={})
    bare_html = _card(claim, bare, {}, {claim.id: claim}, "ci", sheet=MathSheet())
    assert "<td>slack</td>" not in bare_html and "<td>grid</td>" not in bare_html
    assert slack_line({}) == "" and grid_line({}) == ""
