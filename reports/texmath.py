r"""TeX between ``$...$`` in claim and result texts, rendered offline as inline SVG.

The convention: a text (title, statement, hypothesis, reason, summary, quantity) may carry inline math between
single dollar signs, ``"$\rho$-zCDP with $\rho = \Delta^2/(2\sigma^2)$"``; ``\$`` is a literal dollar sign. The TeX
is matplotlib's mathtext subset (fractions, roots, sub/superscripts, Greek, ``\mathcal``, ``\mathrm``,
``\mathbb``, ``\operatorname``, ``\left( ... \right)``, the usual relations); the few common macros it lacks
(``\le``, ``\ge``, ``\lVert``, ``\tfrac``, ``\implies``, ...) are mapped to equivalents by :data:`ALIASES`.
A text without ``$`` renders exactly as plain escaped text.

Each formula is typeset by mathtext (its own fonts, no LaTeX installation, nothing fetched at view time) and
written as an inline ``<svg>`` sized in ``em`` on the text's baseline, so it scales with the surrounding font and
takes its colour. The glyph outlines are written once per page (:meth:`MathSheet.defs`) and referenced by every
formula with ``<use>``, so a page of many formulas stays small. Typesetting is cached per formula for the life of
the process.
"""

from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass, field

from matplotlib.font_manager import FontProperties
from matplotlib.path import Path as MplPath
from matplotlib.textpath import text_to_path

__all__ = ["ALIASES", "FONTSET", "MATH_SCALE", "Formula", "MathError", "MathSheet", "has_math", "mathtext_source",
           "plain_text", "split_math", "truncate", "typeset"]

#: mathtext's font set for formulas: Computer Modern, the look of TeX.
FONTSET = "cm"
#: TeX macros mathtext lacks, and what they are typeset as.
ALIASES = {
    r"\le": r"\leq", r"\ge": r"\geq", r"\lVert": r"\Vert", r"\rVert": r"\Vert", r"\lvert": "|", r"\rvert": "|",
    r"\tfrac": r"\frac", r"\coloneqq": ":=", r"\bm": r"\boldsymbol", r"\operatorname*": r"\operatorname",
    r"\land": r"\wedge", r"\lor": r"\vee", r"\implies": r"\Rightarrow", r"\iff": r"\Leftrightarrow",
}
_ALIAS = re.compile("|".join(re.escape(k) + (r"(?![A-Za-z])" if k[-1].isalpha() else "")
                             for k in sorted(ALIASES, key=len, reverse=True)))
# A formula: an unescaped "$", at least one character that is not an unescaped "$", an unescaped "$".
_MATH = re.compile(r"(?<!\\)\$((?:\\.|[^$\\])+?)(?<!\\)\$", re.DOTALL)
#: mathtext lays formulas out in units where the font size is this (text_to_path's scale).
_EM = float(text_to_path.FONT_SCALE)
#: Computer Modern has a smaller x-height than the page's sans-serif: formulas are drawn this many em per font size.
MATH_SCALE = 1.15


class MathError(ValueError):
    """A formula that mathtext cannot typeset; the message names the formula."""


def split_math(text: str) -> list[tuple[bool, str]]:
    r"""The pieces of ``text`` in order: ``(False, plain)`` and ``(True, tex)`` (without the dollars).

    ``\$`` in a plain piece becomes ``$``; an unmatched ``$`` stays plain text.

    Examples
    --------
    >>> split_math(r"a $\rho$ b \$5")
    [(False, 'a '), (True, '\\rho'), (False, ' b $5')]
    """
    pieces: list[tuple[bool, str]] = []
    pos = 0
    for match in _MATH.finditer(text):
        if match.start() > pos:
            pieces.append((False, text[pos:match.start()].replace(r"\$", "$")))
        pieces.append((True, match.group(1)))
        pos = match.end()
    if pos < len(text):
        pieces.append((False, text[pos:].replace(r"\$", "$")))
    return pieces


def has_math(text: str) -> bool:
    """Whether ``text`` holds at least one ``$...$`` formula."""
    return _MATH.search(str(text)) is not None


def plain_text(text: object) -> str:
    r"""``text`` with the formulas' dollar signs removed and their TeX kept: for search, ``alt`` and ``title``.

    >>> plain_text(r"$\rho$-zCDP costs \$0")
    '\\rho-zCDP costs $0'
    """
    return "".join(piece for _, piece in split_math("" if text is None else str(text)))


def mathtext_source(text: object) -> str:
    r"""``text`` for matplotlib (figure titles, labels, legends): formulas with :data:`ALIASES` applied, the rest
    unchanged (a ``\$`` stays escaped).

    >>> mathtext_source(r"$a \le b$ costs \$1")
    '$a \\leq b$ costs \\$1'
    """
    out = []
    for is_math, piece in split_math("" if text is None else str(text)):
        out.append(f"${_ALIAS.sub(lambda m: ALIASES[m.group(0)], piece)}$" if is_math else piece.replace("$", r"\$"))
    return "".join(out)


def truncate(text: str, limit: int) -> str:
    r"""``text`` on one line with at most ``limit`` visible characters; a formula counts by its TeX length and is
    kept whole or dropped, never cut. An ellipsis marks a shortened text.

    >>> truncate(r"bound $\rho \le 1$ holds everywhere", 12)
    'bound…'
    """
    line = " ".join(str(text).split())
    if len(plain_text(line)) <= limit:
        return line
    out, used = [], 0
    for is_math, piece in split_math(line):
        room = limit - 1 - used
        if room <= 0 or (is_math and len(piece) > room):
            break
        out.append(f"${piece}$" if is_math else piece[:room].replace("$", r"\$"))
        used += min(len(piece), room)
    return "".join(out).rstrip() + "…"


def _num(value: float) -> str:
    text = f"{value:.1f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _path_data(vertices, codes, flip: bool = True) -> str:
    """SVG path data of a (vertices, codes) outline, y flipped (SVG's y axis points down)."""
    path = MplPath(vertices, codes)
    out = []
    letters = {MplPath.MOVETO: "M", MplPath.LINETO: "L", MplPath.CURVE3: "Q", MplPath.CURVE4: "C"}
    for points, code in path.iter_segments(simplify=False, curves=True):
        if code == MplPath.CLOSEPOLY:
            out.append("Z")
            continue
        out.append(letters[code] + " ".join(_num(-v if (flip and i % 2) else v) for i, v in enumerate(points)))
    return "".join(out)


def _glyph_id(key: str) -> str:
    return "mg-" + re.sub(r"[^A-Za-z0-9_-]", "_", key)


@dataclass(frozen=True, kw_only=True)
class Formula:
    """One typeset formula, in mathtext units (the font size is 100 units; y up from the baseline).

    ``glyphs`` are ``(glyph id, x, y, scale)``; ``outlines`` maps each glyph id to its SVG path data (y down);
    ``rules`` is the path data of the fraction bars and root overlines.
    """

    tex: str
    width: float
    height: float
    depth: float
    glyphs: tuple[tuple[str, float, float, float], ...]
    outlines: dict[str, str] = field(compare=False)
    rules: str = ""

    def svg(self) -> str:
        """The inline ``<svg>`` element; its glyphs refer to the page's :meth:`MathSheet.defs`."""
        pad = 0.03 * _EM  # antialiasing room around the box
        x0, x1, top, bottom = -pad, self.width + pad, self.height - self.depth + pad, self.depth + pad
        uses = "".join(f'<use href="#{gid}" transform="translate({_num(x)} {_num(-y)})'
                       + (f' scale({scale:.4g})' if abs(scale - 1.0) > 1e-9 else "") + '"/>'
                       for gid, x, y, scale in self.glyphs)
        rules = f'<path d="{self.rules}"/>' if self.rules else ""
        label = html.escape(self.tex, quote=True)
        return (f'<svg class="math" role="img" aria-label="{label}" '
                f'viewBox="{_num(x0)} {_num(-top)} {_num(x1 - x0)} {_num(top + bottom)}" '
                f'width="{(x1 - x0) * MATH_SCALE / _EM:.3f}em" height="{(top + bottom) * MATH_SCALE / _EM:.3f}em" '
                f'style="vertical-align:{-bottom * MATH_SCALE / _EM:.3f}em"><title>{html.escape(self.tex)}</title>'
                f'<g fill="currentColor">{uses}{rules}</g></svg>')


@functools.lru_cache(maxsize=8192)
def typeset(tex: str) -> Formula:
    r"""Typeset one formula (without the dollars) with mathtext.

    Raises
    ------
    MathError
        When mathtext cannot parse ``tex`` (after :data:`ALIASES`).

    Examples
    --------
    >>> f = typeset(r"\rho = \Delta^2/(2\sigma^2)")
    >>> f.width > f.height > f.depth > 0 and len(f.glyphs) == 10
    True
    """
    source = _ALIAS.sub(lambda m: ALIASES[m.group(0)], tex)
    prop = FontProperties(size=10.0, math_fontfamily=FONTSET)
    try:
        glyphs, outlines, rects = text_to_path.get_glyphs_mathtext(prop, f"${source}$")
        big = prop.copy()
        big.set_size(_EM)
        width, height, depth = text_to_path.mathtext_parser.parse(f"${source}$", text_to_path.DPI, big)[:3]
    except (ValueError, RuntimeError, KeyError) as exc:
        raise MathError(f"formula ${tex}$ cannot be typeset: {' '.join(str(exc).split())}") from None
    ids = {key: _glyph_id(key) for key in outlines}
    return Formula(
        tex=tex, width=float(width), height=float(height), depth=float(depth),
        glyphs=tuple((ids[key], float(x), float(y), float(scale)) for key, x, y, scale in glyphs),
        outlines={ids[key]: _path_data(*outline) for key, outline in outlines.items()},
        rules="".join(_path_data(vertices, codes) for vertices, codes in rects),
    )


class MathSheet:
    """Renders the texts of one page and collects the glyph outlines they use (:meth:`defs`, written once)."""

    def __init__(self) -> None:
        self._outlines: dict[str, str] = {}
        #: Formulas that could not be typeset: (TeX, message). Shown as their TeX source on the page.
        self.errors: list[tuple[str, str]] = []

    def html(self, text: object) -> str:
        """``text`` as HTML: plain pieces escaped, formulas as inline SVG (a formula mathtext cannot typeset is
        shown as its escaped TeX source in ``<code class="tex">`` and listed in :attr:`errors`, so one bad formula
        never loses the report). ``None`` is the empty string."""
        if text is None:
            return ""
        out = []
        for is_math, piece in split_math(str(text)):
            if not is_math:
                out.append(html.escape(piece))
                continue
            try:
                formula = typeset(piece)
            except MathError as exc:
                self.errors.append((piece, str(exc)))
                out.append(f'<code class="tex">${html.escape(piece)}$</code>')
                continue
            self._outlines.update(formula.outlines)
            out.append(formula.svg())
        return "".join(out)

    def defs(self) -> str:
        """One hidden ``<svg>`` holding every glyph outline used so far (empty when no formula was rendered)."""
        if not self._outlines:
            return ""
        paths = "".join(f'<path id="{gid}" d="{d}"/>' for gid, d in sorted(self._outlines.items()))
        return (f'<svg class="math-defs" aria-hidden="true" width="0" height="0" '
                f'style="position:absolute;width:0;height:0;overflow:hidden"><defs>{paths}</defs></svg>')
