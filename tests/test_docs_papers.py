"""docs/papers: one page per paper, the sections every page has, the claim ids and links it names, and spec_map.json.

The pages are the repository's own account of the papers (issue 31): code, claim texts and examples cite
``docs/papers/<slug>.md#<anchor>``, so every anchor they or ``spec_map.json`` name must exist, and every claim id a page
names must be a claim of the registry.
"""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from verify.registry import all_claims

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAPERS = ROOT / "docs" / "papers"
SLUGS = ("pgfl", "zcdp_nfl", "paofed", "gtv", "fedpdm", "npfl_rl")
PAGES = (*SLUGS, "dp")
#: Anchors every page has, in this order, each followed by a level-2 heading.
SECTIONS = ("the-paper", "notation", "algorithms", "choices", "errata", "experiments")
#: The headings those anchors introduce on a paper page (dp.md words its algorithm section differently).
HEADINGS = {"the-paper": "## The paper", "notation": "## Notation", "algorithms": "## The algorithm",
            "choices": "## Readings and choices", "errata": "## Errata", "experiments": "## Experiments"}

ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
LINK = re.compile(r"\]\(((?:[\w./-]+\.(?:md|json))?(?:#[\w.-]+)?)\)")
CLAIM_ID = re.compile(r"`((?:dp|pgfl|paofed|zcdp_nfl|gtv|fedpdm|npfl_rl)\.[a-z0-9_.]+)`")
FORBIDDEN = (re.compile(r"shared/spec"), re.compile(r"/work/"), re.compile(r"/tmp/"),
             re.compile(r"\bspec\s+[0-9]"), re.compile(r"\bReview notes\b"))


def _text(page: str) -> str:
    return (PAPERS / f"{page}.md").read_text(encoding="utf-8")


def _anchors(page: str) -> list[str]:
    return ANCHOR.findall(_text(page))


def test_every_page_exists():
    missing = [p for p in (*PAGES, "README") if not (PAPERS / f"{p}.md").is_file()]
    assert not missing, f"missing pages in docs/papers: {missing}"
    assert (PAPERS / "spec_map.json").is_file()


@pytest.mark.parametrize("page", PAGES)
def test_required_sections_in_order(page):
    text = _text(page)
    lines = text.splitlines()
    positions = []
    for anchor in SECTIONS:
        tag = f'<a id="{anchor}"></a>'
        assert tag in lines, f"{page}.md: no section anchor {tag}"
        i = lines.index(tag)
        heading = next(line for line in lines[i + 1:] if line.strip())
        assert heading.startswith("## "), f"{page}.md: anchor {anchor!r} is not followed by a level-2 heading"
        if page != "dp" or anchor != "algorithms":
            assert heading.startswith(HEADINGS[anchor]), f"{page}.md: {anchor!r} heads {heading!r}"
        positions.append(i)
    assert positions == sorted(positions), f"{page}.md: sections out of order"


@pytest.mark.parametrize("page", PAGES)
def test_anchors_are_unique(page):
    anchors = _anchors(page)
    repeated = sorted({a for a in anchors if anchors.count(a) > 1})
    assert not repeated, f"{page}.md: anchors declared twice: {repeated}"


@pytest.mark.parametrize("page", PAGES)
def test_choices_and_errata_have_anchors(page):
    anchors = _anchors(page)
    assert any(a.startswith("choice-") for a in anchors), f"{page}.md: no choice-* anchor"
    assert any(a.startswith("erratum-") for a in anchors), f"{page}.md: no erratum-* anchor"


@pytest.mark.parametrize("page", (*PAGES, "README"))
def test_claim_ids_exist(page):
    known = {claim.id for claim in all_claims()}
    named = set(CLAIM_ID.findall(_text(page)))
    unknown = sorted(named - known)
    assert not unknown, f"{page}.md names claims the registry does not have: {unknown}"


@pytest.mark.parametrize("page", SLUGS)
def test_paper_page_names_claims_of_its_paper(page):
    named = set(CLAIM_ID.findall(_text(page)))
    assert any(name.startswith(f"{page}.") for name in named), f"{page}.md names none of its own claims"


@pytest.mark.parametrize("page", (*PAGES, "README"))
def test_links_resolve(page):
    bad = []
    for target in LINK.findall(_text(page)):
        if target.startswith(("http://", "https://")):
            continue
        path, _, fragment = target.partition("#")
        doc = page if not path else path.removesuffix(".md")
        if path and not (PAPERS / path).is_file():
            bad.append(target)
        elif fragment and fragment not in _anchors(doc):
            bad.append(target)
    assert not bad, f"{page}.md: links to missing files or anchors: {bad}"


@pytest.mark.parametrize("page", (*PAGES, "README"))
def test_pages_stand_alone(page):
    """No machine path and no citation of the internal specifications on a page."""
    text = _text(page)
    hits = [(pattern.pattern, m.group(0)) for pattern in FORBIDDEN for m in pattern.finditer(text)]
    assert not hits, f"{page}.md: {hits}"


def test_spec_map_targets_exist():
    spec_map = json.loads((PAPERS / "spec_map.json").read_text(encoding="utf-8"))
    assert set(spec_map["spec_files"].values()) == set(PAGES)
    assert set(spec_map["forms"]) == set(PAGES)
    for entry in spec_map["file_paper"]:
        assert set(entry) == {"glob", "paper"} and entry["paper"] in (*PAGES, "mixed"), entry
    bad = []
    for paper, forms in spec_map["forms"].items():
        assert forms, f"spec_map.json: no forms for {paper}"
        for form, target in forms.items():
            path, _, fragment = target.partition("#")
            page = path.removeprefix("docs/papers/").removesuffix(".md")
            if not path.startswith("docs/papers/") or page not in PAGES:
                bad.append((paper, form, target))
            elif fragment and fragment not in _anchors(page):
                bad.append((paper, form, target))
    assert not bad, f"spec_map.json names missing pages or anchors: {bad}"


def test_spec_map_covers_the_errata_anchors():
    """Every erratum anchor of a page is reachable from its paper's forms (the sweep maps old numbers to them)."""
    forms = json.loads((PAPERS / "spec_map.json").read_text(encoding="utf-8"))["forms"]
    for page in PAGES:
        targets = {t.partition("#")[2] for t in forms[page].values()}
        errata = {a for a in _anchors(page) if a.startswith("erratum-")}
        assert errata <= targets, f"{page}: errata anchors without a form: {sorted(errata - targets)}"
