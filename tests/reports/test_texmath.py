r"""TeX between $...$ in claim texts: split, typeset offline as inline SVG, and every registered text typesets."""

from __future__ import annotations

import re

import pytest

from reports.texmath import (
    ALIASES,
    MathError,
    MathSheet,
    has_math,
    mathtext_source,
    plain_text,
    split_math,
    truncate,
    typeset,
)
from verify.registry import all_claims


def _texts(claim):
    return (claim.title, claim.statement, claim.reason, claim.uncorrected_because, *claim.hypotheses)


def test_split_math_pieces_and_escaped_dollars():
    assert split_math(r"cost \$5 for $\rho$-zCDP, $a$") == [
        (False, "cost $5 for "), (True, r"\rho"), (False, "-zCDP, "), (True, "a")]
    assert split_math("no math here") == [(False, "no math here")]
    assert split_math("one $ alone") == [(False, "one $ alone")]  # an unmatched dollar is text
    assert not has_math(r"\$1 and \$2") and has_math(r"$x$")


def test_plain_text_keeps_the_tex_for_search():
    assert plain_text(r"$\varepsilon$-DP at \$0") == r"\varepsilon-DP at $0"


@pytest.mark.parametrize("limit", [5, 12, 20, 33, 60])
def test_truncate_never_cuts_a_formula(limit):
    text = r"worst $\max_i \|w_i - \bar w\| \le 2$ of $n = 10$ points, far below the bound"
    short = truncate(text, limit)
    assert len(plain_text(short)) <= limit
    for is_math, piece in split_math(short):
        if is_math:
            assert f"${piece}$" in text  # whole formulas only
    assert short.count("$") % 2 == 0


def test_a_formula_is_one_svg_on_the_baseline_and_its_glyphs_are_defined_once():
    sheet = MathSheet()
    page = sheet.html(r"with $\rho = \Delta^2/(2\sigma^2)$ and $\rho$ again") + sheet.defs()
    assert page.startswith("with <svg class=\"math\"") and page.count("<svg class=\"math\"") == 2
    assert re.search(r'style="vertical-align:-0\.\d+em"', page)  # the depth below the baseline
    used = set(re.findall(r'<use href="#([^"]+)"', page))
    defined = re.findall(r'<path id="([^"]+)"', page)
    assert used and used == set(defined) and len(defined) == len(set(defined))
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing fetched


def test_fraction_and_root_rules_are_drawn():
    formula = typeset(r"\frac{a}{b} + \sqrt{x}")
    assert formula.rules.count("M") == 2  # the fraction bar and the root's overline
    assert formula.width > 0 and formula.height > formula.depth > 0


def test_plain_text_is_escaped_and_unchanged():
    assert MathSheet().html("a < b & c") == "a &lt; b &amp; c"


def test_a_bad_formula_shows_its_source_and_is_listed():
    sheet = MathSheet()
    out = sheet.html(r"ok $\frac{a}{$ end")
    assert '<code class="tex">$\\frac{a}{$</code>' in out and out.endswith(" end")
    assert sheet.errors and sheet.errors[0][0] == r"\frac{a}{"
    with pytest.raises(MathError, match="cannot be typeset"):
        typeset(r"\frac{a}{")


@pytest.mark.parametrize("macro", sorted(ALIASES))
def test_aliases_typeset(macro):
    tex = {r"\bm": r"\bm{x}", r"\operatorname*": r"\operatorname*{argmin}", r"\tfrac": r"\tfrac{1}{2}"}.get(
        macro, f"a {macro} b")
    typeset(tex)
    assert "$" in mathtext_source(f"${tex}$")


def test_every_registered_claim_text_typesets():
    """A claim that writes $...$ must be valid mathtext (after the aliases), with its dollars balanced: a stray or
    broken formula would show as TeX source on the report."""
    sheet = MathSheet()
    unbalanced = []
    for claim in all_claims():
        for text in _texts(claim):
            if len(re.findall(r"(?<!\\)\$", text or "")) % 2:
                unbalanced.append((claim.id, text))
            sheet.html(text)
    assert not unbalanced, unbalanced
    assert not sheet.errors, sheet.errors


def test_the_dp_claims_carry_math():
    """The showcase: the differential-privacy claims write their formulas in TeX."""
    dp = [c for c in all_claims() if c.paper == "dp"]
    assert dp and all(has_math(c.statement) for c in dp)
