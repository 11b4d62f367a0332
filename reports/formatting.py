"""How numbers, durations, citations and the report's header read in the HTML page.

A number reads as a reader expects: a negative zero is ``0``, infinities are ``∞`` / ``−∞``, very small or large
magnitudes are ``1.05 × 10⁻⁸`` rather than ``1.05232e-08``, and a value that does not apply (``None``) is named
by the caller instead of printed as a placeholder (:func:`measured_html`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

from verify.papers import citation_parts
from verify.records import CheckResult, Citation, Verdict

__all__ = ["SLACK_KEYS", "citation_html", "format_number", "format_seconds", "grid_line", "measured_html", "meta_html",
           "slack_line"]

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_MINUS = "\u2212"


def _e(text: Any) -> str:
    return html.escape("" if text is None else str(text))


def format_number(x: Any, digits: int = 6) -> str:
    """``x`` as plain text for the page (not HTML-escaped: it holds no markup characters).

    Floats: ``0`` for either zero, ``∞``/``−∞``/``NaN``, ``digits`` significant digits between 1e-3 and 1e5 and
    ``m × 10ᵉ`` (four significant digits in ``m``) outside; a Unicode minus sign. Integers and other values as
    ``str``. ``None`` is ``"–"``.

    >>> [format_number(v) for v in (-0.0, 0.5, -1.05232e-8, float("inf"), 123456789.0, 3)]
    ['0', '0.5', '−1.052 × 10⁻⁸', '∞', '1.235 × 10⁸', '3']
    """
    if x is None:
        return "–"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, str):  # results.json writes non-finite numbers as "inf", "-inf", "nan"
        try:
            x = float(x)
        except ValueError:
            return x
    if isinstance(x, int):
        return str(x).replace("-", _MINUS)
    if not isinstance(x, float):
        try:
            x = float(x)
        except (TypeError, ValueError):
            return str(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else f"{_MINUS}∞"
    if x == 0.0:
        return "0"
    if 1e-3 <= abs(x) < 1e5:
        return f"{x:.{digits}g}".replace("-", _MINUS)
    mantissa, exponent = f"{x:.3e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}".replace("-", _MINUS)


def format_seconds(seconds: float | None) -> str:
    """A runtime: ``0.42 s``, ``12.3 s``, ``4 min 05 s``, ``1 h 02 min``; ``–`` when unknown.

    >>> [format_seconds(s) for s in (0.004, 12.34, 245.0, 3725.0)]
    ['0.00 s', '12.3 s', '4 min 05 s', '1 h 02 min']
    """
    if seconds is None or not math.isfinite(seconds):
        return "–"
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def measured_html(result: CheckResult) -> str:
    """The "measured" row of a card: measured, bound and margin, or a sentence saying why there are none."""
    measured, bound, margin = result.measured, result.bound, result.margin
    if measured is None and bound is None:
        if result.verdict is Verdict.NOT_CHECKABLE:
            return "<i>no measured value and no bound: the check could not decide (see the result above)</i>"
        if result.verdict is Verdict.ERROR:
            return "<i>none: the check raised before measuring</i>"
        return "<i>no single measured value (see the result above)</i>"
    parts = [f"{_e(format_number(measured))}" if measured is not None else "<i>not measured</i>"]
    if bound is None:
        parts.append("<b>bound</b> <i>none</i>")
    else:
        parts.append(f"<b>bound</b> {_e(format_number(bound))}")
        if margin is not None:
            parts.append(f"<b>margin</b> {_e(format_number(margin))}")
    return " &nbsp; ".join(parts)


def citation_html(citation: Citation) -> str:
    """One citation: "paper, label, eq. (n)" with the document's title on hover and the seed file as a detail."""
    main, detail, title = citation_parts(citation)
    attr = f' title="{_e(title)}"' if title else ""
    return (f"<span class='cite'{attr}>{_e(main)}</span>"
            + (f" <span class='seed'>({_e(detail)})</span>" if detail else ""))


def _meta_value(key: str, value: Any) -> str:
    if key == "data" and isinstance(value, Mapping):
        return ", ".join(f"{_e(name)} (sha256 {_e(str(info.get('sha256', ''))[:12])}…)"
                         if isinstance(info, Mapping) else _e(name) for name, info in value.items())
    if key == "only" and isinstance(value, (list, tuple)):
        return ", ".join(f"<code>{_e(v)}</code>" for v in value)
    if isinstance(value, (list, tuple)):
        return _e(", ".join(str(v) for v in value))
    if isinstance(value, Mapping):
        return _e(", ".join(f"{k}={v}" for k, v in value.items()))
    return _e(value)


_META_NAMES = {"generated_at": "generated", "only": "--only", "data": "data files", "fedcheck_version": "fedcheck"}


def meta_html(meta: Mapping[str, Any]) -> str:
    """The header line: one ``name: value`` per meta entry that has a value (empty ones are left out; the data
    files read as name and SHA-256 prefix)."""
    items = [(key, value) for key, value in meta.items() if value not in ([], (), {}, None, "")]
    return " · ".join(f"<span class='meta-item'>{_e(_META_NAMES.get(key, key))}: {_meta_value(key, value)}</span>"
                      for key, value in items)


#: Details keys of a non-bound result that measure its slack (a sufficient condition's margin, an ordering's ratios,
#: a range's sharpness, a monotone sequence's smallest step): shown on the card beside a bound's tightness.
SLACK_KEYS = ("condition_slack", "ordering_tightness", "boundary_attained", "monotonicity_margin")


def _compact(value: Any) -> str:
    """A detail as one short line, ``key = value; ...`` (its ``definition`` left out: it is in results.json), reals to
    4 significant digits, nested tables in parentheses."""
    def plain(v: Any, top: bool = False) -> str:
        if isinstance(v, Mapping):
            parts = [f"{k.replace('_', ' ')} = {plain(x)}" for k, x in v.items() if k != "definition"]
            return "; ".join(parts) if top else "(" + ", ".join(parts) + ")"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(plain(x) for x in v) + "]"
        if isinstance(v, bool) or v is None:
            return str(v).lower() if v is not None else "none"
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)

    text = plain(value, top=True)
    return text if len(text) <= 400 else text[:400] + " ..."


def slack_line(details: Mapping[str, Any]) -> str:
    """The measured slack of a non-bound result (:data:`SLACK_KEYS`), one ``key: value`` per line; '' if none."""
    return "\n".join(f"{key.replace('_', ' ')}: {_compact(details[key])}" for key in SLACK_KEYS if key in details)


def _point(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in point.items()) or "the default setting"


def grid_line(details: Mapping[str, Any]) -> str:
    """An experiment's grid in one line per point (its decision and replicates), or the grid it would run when its
    data file is absent, followed by the unreported choices it ranges over; '' for a result without a grid."""
    rows = []
    for row in details.get("grid") or ():
        if not isinstance(row, Mapping) or "point" not in row:
            continue
        decision = row.get("decision", row.get("verdict", ""))
        n = f" (n = {row['replicates']})" if "replicates" in row else ""
        rows.append(f"{_point(row['point'])}: {decision}{n}")
    if not rows and "grid_planned" in details:
        rows = [f"{_point(p)}: not run (needs its data file)" for p in details["grid_planned"]]
    if not rows:
        return ""
    choices = details.get("unreported_choices") or {}
    if isinstance(choices, Mapping) and choices:
        rows.append("unreported choices: " + "; ".join(f"{k}: {v}" for k, v in choices.items()))
    elif isinstance(choices, str) and choices:
        rows.append("unreported choices: " + choices)
    return "\n".join(rows)
