"""Unit tests of reports.build.build_report on toy claims and results (no registry, no checks run)."""

from __future__ import annotations

import dataclasses
import json
from html.parser import HTMLParser
from pathlib import PurePosixPath

import matplotlib.image

from reports.build import build_report
from verify.records import CheckResult, Citation, Claim, Evidence, FigureSpec, Series, Verdict

META = {"profile": "ci", "seed": 0, "executor": "serial", "only": []}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SCRIPT = "<script>alert(1)</script>"
# The keys README.md documents under "results.json (schema fedcheck.results/1)".
TOP_KEYS = {"schema", "fedcheck_version", "generated_at", "profile", "seed", "executor", "only", "data", "claims",
            "results", "figure_errors"}
CLAIM_KEYS = {"id", "paper", "title", "citations", "statement", "hypotheses", "check", "expected", "reason",
              "expected_by_profile", "corrected_by", "corrects", "severity", "uncorrected_because", "data_files"}
RESULT_KEYS = {"claim_id", "verdict", "summary", "quantity", "measured", "bound", "margin", "counterexample",
               "corrected_claim", "monte_carlo", "seed", "figures", "details", "runtime_s", "cpu_s", "error"}


def toy_check(ctx):
    """Module-level stand-in for a check; build_report never calls it."""
    raise AssertionError("build_report must not run checks")


def toy_reproduce(counterexample):
    return Evidence(measured=2.0, bound=1.0, holds=False, parameters=counterexample)


def _claim(claim_id, expected=Verdict.CONFIRMED, **kw):
    return Claim(id=claim_id, paper=claim_id.split(".")[0], title=f"Toy claim {claim_id}",
                 citations=(Citation(label="Toy Lemma", external="Toy et al. 2024"),),
                 statement=f"Statement of {claim_id}.", hypotheses=("x > 0",), check=toy_check,
                 expected=expected, reason="toy reason", **kw)


def _figure(name, yscale="linear"):
    return FigureSpec(name=name, title=f"Figure {name}", xlabel="x", ylabel="y", yscale=yscale, series=(
        Series(label="bound", x=(1, 2, 3), y=(1.0, 2.0, 4.0), group="a"),
        Series(label="measured", x=(1, 2, 3), y=(0.5, 1.5, 3.0), style="points", group="a")))


def toy_records():
    """Claims and results: confirmed (two papers), refuted with its correction, and an error."""
    claims = [
        _claim("toy.ok"), _claim("alt.ok"),
        _claim("toy.bad", Verdict.REFUTED, reproduce=toy_reproduce, corrected_by="toy.fixed"),
        _claim("toy.fixed", corrects="toy.bad"),
        _claim("toy.boom"),
    ]
    results = [
        CheckResult(claim_id="toy.ok", verdict=Verdict.CONFIRMED, summary="holds", measured=0.5, bound=1.0,
                    margin=0.5, figures=(_figure("curve"),), runtime_s=0.1, seed=0),
        CheckResult(claim_id="alt.ok", verdict=Verdict.CONFIRMED, summary="holds", measured=0.25, bound=1.0),
        CheckResult(claim_id="toy.bad", verdict=Verdict.REFUTED, summary="violated", measured=float("inf"),
                    bound=1.0, margin=float("-inf"), counterexample={"n": 7, "tau": 0.125},
                    corrected_claim="toy.fixed", figures=(_figure("violation", yscale="log"),),
                    details={"ratio": float("nan")}),
        CheckResult(claim_id="toy.fixed", verdict=Verdict.CONFIRMED, summary="holds", measured=0.75, bound=1.0,
                    figures=(_figure("curve"), _figure("zoom"))),
        CheckResult(claim_id="toy.boom", verdict=Verdict.ERROR, summary="check raised",
                    error=f"Traceback (most recent call last):\nValueError: bad {SCRIPT} & more"),
    ]
    return claims, results


class Page(HTMLParser):
    """Parsed report: h2 ids in order, text per section, card classes/text/links, image sources."""

    VOID = {"img", "br", "meta", "hr", "link", "input"}

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.sections, self.cards, self.imgs = {}, {}, []
        self._section, self._stack = None, []
        self.feed(text)
        self.close()

    def _open_cards(self):
        return [self.cards[cid] for _, cid in self._stack if cid]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "h2":
            self._section = a["id"]
            self.sections[self._section] = ""
        if tag == "img":
            self.imgs.append(a["src"])
        if tag == "a":
            for card in self._open_cards():
                card["hrefs"].append(a.get("href"))
        card_id = None
        if tag == "div" and "card" in a.get("class", "").split():
            card_id = a["id"]
            self.cards[card_id] = {"classes": a["class"].split(), "section": self._section, "text": "", "hrefs": []}
        if tag not in self.VOID:
            self._stack.append((tag, card_id))

    def handle_endtag(self, tag):
        while self._stack and self._stack.pop()[0] != tag:
            pass

    def handle_data(self, data):
        if self._section is not None:
            self.sections[self._section] += data
        for card in self._open_cards():
            card["text"] += data


def _build(tmp_path, claims=None, results=None):
    if claims is None:
        claims, results = toy_records()
    out = tmp_path / "report"
    document = build_report(claims, results, out, META)
    return out, document, Page((out / "index.html").read_text(encoding="utf-8"))


def _reject_constant(token):
    raise AssertionError(f"results.json contains the non-JSON constant {token}")


def test_writes_html_json_and_loadable_png_figures(tmp_path):
    """index.html, results.json and one PNG per FigureSpec are written; every <img> is a valid PNG."""
    out, document, page = _build(tmp_path)
    assert (out / "index.html").is_file() and (out / "results.json").is_file()
    pngs = sorted(p.relative_to(out).as_posix() for p in (out / "figures").glob("*.png"))
    listed = sorted(f for r in document["results"] for f in r["figures"])
    assert pngs == sorted(set(listed)) and len(pngs) == 3  # four FigureSpecs, two of them identical ("curve")
    assert sorted(page.imgs) == listed
    for src in page.imgs:
        path = out / src
        assert path.is_file(), src
        assert path.read_bytes()[:8] == PNG_SIGNATURE, src  # the 8-byte PNG signature
        image = matplotlib.image.imread(path)
        assert image.ndim == 3 and image.shape[0] > 0 and image.shape[1] > 0, (src, image.shape)


def test_findings_come_first_and_show_refutation(tmp_path):
    """Findings precede every paper section and hold the refuted card with counterexample and fix link."""
    _, _, page = _build(tmp_path)
    order = list(page.sections)
    papers = [s for s in order if s.startswith("paper-")]
    assert sorted(papers) == ["paper-alt", "paper-toy"]
    assert all(order.index("findings") < order.index(p) for p in papers)
    card = page.cards["toy.bad"]
    assert card["section"] == "findings"
    assert '"n": 7' in card["text"] and '"tau": 0.125' in card["text"]
    assert "#toy.fixed" in card["hrefs"] and "toy.fixed" in card["text"]
    assert "toy.fixed" in page.cards and page.cards["toy.fixed"]["section"] == "paper-toy"
    assert "#toy.bad" in page.cards["toy.fixed"]["hrefs"]


def test_findings_without_refutations_says_none(tmp_path):
    """A run with no refuted result has no card under Findings and says that no claim is refuted."""
    claims, results = toy_records()
    keep = {"toy.ok", "alt.ok"}
    _, _, page = _build(tmp_path, [c for c in claims if c.id in keep], [r for r in results if r.claim_id in keep])
    assert "no claim" in page.sections["findings"].lower() and "refuted" in page.sections["findings"]
    assert not [cid for cid, card in page.cards.items() if card["section"] == "findings"]


def test_results_json_is_strict_and_matches_readme_schema(tmp_path):
    """results.json is strict JSON (inf/nan as strings), with the README keys, in input order."""
    claims, results = toy_records()
    out, document, _ = _build(tmp_path, claims, results)
    text = (out / "results.json").read_text(encoding="utf-8")
    loaded = json.loads(text, parse_constant=_reject_constant)
    assert loaded == document
    assert set(loaded) == TOP_KEYS and loaded["schema"] == "fedcheck.results/1"
    assert {k: loaded[k] for k in META} == META
    assert [r["claim_id"] for r in loaded["results"]] == [r.claim_id for r in results]
    assert [c["id"] for c in loaded["claims"]] == [r.claim_id for r in results]
    for claim_json in loaded["claims"]:
        assert set(claim_json) == CLAIM_KEYS, claim_json["id"]
    for result_json in loaded["results"]:
        assert set(result_json) == RESULT_KEYS, result_json["claim_id"]
        for rel in result_json["figures"]:
            path = PurePosixPath(rel)
            assert not path.is_absolute() and ".." not in path.parts, rel
            assert (out / rel).is_file(), rel
    bad = loaded["results"][2]
    assert (bad["measured"], bad["margin"], bad["details"]["ratio"]) == ("inf", "-inf", "nan")


def test_error_traceback_is_html_escaped(tmp_path):
    """An ERROR verdict's traceback is shown as escaped text, never as live markup."""
    out, _, page = _build(tmp_path)
    raw = (out / "index.html").read_text(encoding="utf-8")
    assert SCRIPT not in raw and raw.count("<script") == 1  # only the page's own filter script
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in raw
    assert SCRIPT in page.cards["toy.boom"]["text"] and page.cards["toy.boom"]["section"] == "errors"


def test_unexpected_verdict_card_is_marked(tmp_path):
    """Cards whose verdict differs from the claim's expected verdict carry class 'unexpected'."""
    claims, results = toy_records()
    results[0] = CheckResult(claim_id="toy.ok", verdict=Verdict.NOT_CHECKABLE, summary="could not decide")
    _, _, page = _build(tmp_path, claims, results)
    marked = {cid for cid, card in page.cards.items() if "unexpected" in card["classes"]}
    assert marked == {"toy.ok", "toy.boom"}


def test_profile_expectation_decides_what_is_unexpected(tmp_path):
    """A claim expected not_checkable at ci (its paper-size verdict is confirmed) is not marked in a ci report,
    and its card names both verdicts; the same result in a thorough report is marked."""
    claim = _claim("toy.sized", expected_by_profile={"ci": Verdict.NOT_CHECKABLE})
    result = CheckResult(claim_id="toy.sized", verdict=Verdict.NOT_CHECKABLE, summary="ci does not decide")
    for profile, marked in (("ci", False), ("thorough", True)):
        out = tmp_path / profile
        build_report([claim], [result], out, {**META, "profile": profile})
        card = Page((out / "index.html").read_text(encoding="utf-8")).cards["toy.sized"]
        assert ("unexpected" in card["classes"]) is marked
        assert "confirmed at the paper's size" in card["text"] or profile == "thorough"


def test_details_are_shown_folded_and_escaped(tmp_path):
    """A result's details (evidence tables) appear in its card inside <details>, HTML-escaped."""
    claim = _claim("toy.detailed")
    result = CheckResult(claim_id="toy.detailed", verdict=Verdict.CONFIRMED, summary="s",
                         details={"steps": [{"arm": SCRIPT, "step": 0.14}]})
    out = tmp_path / "r"
    build_report([claim], [result], out, META)
    html = (out / "index.html").read_text(encoding="utf-8")
    card = Page(html).cards["toy.detailed"]["text"]
    assert "0.14" in card and "<details><summary>Details" in html
    assert SCRIPT not in html


def test_claim_ids_that_differ_only_in_dots_get_distinct_figure_files(tmp_path):
    """Two claims whose ids differ only by '.' versus '_' must not overwrite each other's (different) figures."""
    claims = [_claim(cid, Verdict.CONFIRMED) for cid in ("toy.a.b", "toy.a_b")]
    results = [CheckResult(claim_id=c.id, verdict=Verdict.CONFIRMED, summary="s", figures=(FigureSpec(
        name="curve", title="t", xlabel="x", ylabel="y", series=(Series(label="a", x=(0, 1), y=(0, k)),)),))
        for k, c in enumerate(claims, start=1)]
    document = build_report(claims, results, tmp_path, {})
    paths = [r["figures"][0] for r in document["results"]]
    assert len(set(paths)) == 2 and all((tmp_path / p).is_file() for p in paths)


def test_a_figure_that_cannot_be_drawn_is_named_and_loses_nothing(tmp_path):
    """Too many ungrouped series for distinct colours: the figure is named in results.json and on its card, the
    results and the other figures are written (a report of a whole profile must never be lost to one plot)."""
    claims, results = toy_records()
    crowded = FigureSpec(name="crowded", title="crowded", xlabel="x", ylabel="y", series=tuple(
        Series(label=f"s{i}", x=(1, 2), y=(1.0, 2.0)) for i in range(40)))  # 40 > the palette's 18 colours
    results[0] = dataclasses.replace(results[0], figures=(*results[0].figures, crowded))
    out, document, page = _build(tmp_path, claims, results)
    [failed] = document["figure_errors"]
    assert failed["claim_id"] == "toy.ok" and failed["figure"] == "crowded" and "distinct colours" in failed["error"]
    assert json.loads((out / "results.json").read_text())["figure_errors"] == [failed]
    assert "Figure crowded not drawn" in page.cards["toy.ok"]["text"]
    assert "figures/toy.ok__crowded.png" not in document["results"][0]["figures"]
    assert page.imgs and all((out / src).is_file() for src in page.imgs)  # every other figure drawn


def test_identical_figures_are_written_once_and_linked_from_every_card(tmp_path):
    """Two claims whose figures show the same thing share one PNG; each card links it and names the other claim."""
    claims = [_claim("toy.one"), _claim("toy.two"), _claim("toy.three")]
    results = [CheckResult(claim_id=c.id, verdict=Verdict.CONFIRMED, summary="s", figures=(_figure("curve"),))
               for c in claims[:2]]
    results.append(CheckResult(claim_id="toy.three", verdict=Verdict.CONFIRMED, summary="s",
                               figures=(_figure("other", yscale="log"),)))
    out, document, page = _build(tmp_path, claims, results)
    paths = [r["figures"] for r in document["results"]]
    assert paths[0] == paths[1] == ["figures/toy.one__curve.png"] and paths[2] == ["figures/toy.three__other.png"]
    assert sorted(p.name for p in (out / "figures").glob("*.png")) == ["toy.one__curve.png", "toy.three__other.png"]
    assert "#toy.two" in page.cards["toy.one"]["hrefs"] and "#toy.one" in page.cards["toy.two"]["hrefs"]
    html = (out / "index.html").read_text(encoding="utf-8")
    assert 'width="' in html and 'height="' in html and 'loading="lazy"' in html  # shown at its physical size


def test_index_shows_paper_titles_runtimes_and_a_clean_header(tmp_path):
    """The index names papers by title, shows each claim's runtime and each paper's total; the header has no raw
    dict and no empty entry; a negative zero reads 0."""
    claims, results = toy_records()
    results[1] = dataclasses.replace(results[1], bound=-0.0, runtime_s=61.0)
    out, _, page = _build(tmp_path, claims, results)
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "data: {}" not in html and "{}" not in html.split("<h2", 1)[0] and "only:" not in html
    assert "1 min 01 s" in html and "check time" in html
    assert "<b>bound</b> -0" not in html
    assert "bound 0" in page.cards["alt.ok"]["text"].replace("\xa0", " ")
    assert "id='claim-filter'" in html and "<script>" in html
