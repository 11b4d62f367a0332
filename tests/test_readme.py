"""The README's front door stays true: its papers table counts the registry's verdicts, and its links resolve."""

from __future__ import annotations

import collections
import pathlib
import re

import pytest

from verify.records import Verdict
from verify.registry import all_claims

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
_ROW = re.compile(r"^\| `(?P<slug>[a-z_]+)` \|.*\| (?P<c>\d+) / (?P<r>\d+) / (?P<n>\d+) \|$", re.M)
_LINK = re.compile(r"\]\((?P<target>[^)#\s]+)(?:#(?P<anchor>[^)\s]+))?\)")


def table_counts(text: str) -> dict[str, tuple[int, int, int]]:
    """``{slug: (confirmed, refuted, not checkable)}`` from the README's papers table."""
    return {m["slug"]: (int(m["c"]), int(m["r"]), int(m["n"])) for m in _ROW.finditer(text)}


def registry_counts() -> dict[str, tuple[int, int, int]]:
    counts = collections.Counter((claim.paper, claim.expected) for claim in all_claims())
    papers = sorted({claim.paper for claim in all_claims()})
    return {p: (counts[p, Verdict.CONFIRMED], counts[p, Verdict.REFUTED], counts[p, Verdict.NOT_CHECKABLE])
            for p in papers}


def test_the_papers_table_counts_the_registry():
    """Every paper has a row, and its counts are the registry's expected verdicts at the papers' sizes."""
    assert table_counts(README.read_text()) == registry_counts()


def test_the_claim_total_is_the_registry_size():
    total = re.search(r"lists the registry \((\d+) claims", README.read_text())
    assert total and int(total.group(1)) == len(all_claims())


def test_a_stale_row_is_caught():
    row = "| `toy` | *A toy* | A. Author | 2026 | 1 / 2 / 3 |"
    assert table_counts(row) == {"toy": (1, 2, 3)}


def _anchors(path: pathlib.Path) -> set[str]:
    text = path.read_text()
    ids = set(re.findall(r'<a id="([^"]+)"', text))
    ids |= {re.sub(r"[^a-z0-9 -]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.+)$", text, re.M)}
    return ids


@pytest.mark.parametrize("page", [README, *sorted((ROOT / "docs").glob("*.md"))],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    """Every relative link of the README and of the top-level docs pages names a file (and anchor) that exists."""
    broken = []
    for m in _LINK.finditer(page.read_text()):
        target = m["target"]
        if "://" in target or target.startswith("mailto:"):
            continue
        path = (page.parent / target).resolve()
        if not path.exists():
            broken.append(target)
        elif m["anchor"] and path.suffix == ".md" and m["anchor"] not in _anchors(path):
            broken.append(f"{target}#{m['anchor']}")
    assert not broken, f"{page.name}: broken links {broken}"
