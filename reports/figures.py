"""Render FigureSpec records to PNG files with matplotlib's Agg backend, for a reader who prints in grey.

Every series gets its own (colour, marker, line style): colours from the Okabe-Ito palette, then Paul Tol's muted
one (both colour-blind safe); series of one ``group`` (a closed form and its check) share a colour and differ by
marker and line style. A figure is :data:`WIDTH_IN` inches wide at :data:`DPI` dots per inch and is shown in the
report at its physical size (:func:`display_size`), so the fonts of :data:`FONT_PT` are the point sizes a reader
sees. The legend sits below the axes, outside the data; long titles, axis labels and legend entries wrap.

A categorical x axis (``FigureSpec.xcategories``, or integer x on an axis named like "instance" / "replicate")
is labelled by category, points of several series are spread apart within a category, and a line-like series is
drawn as one short horizontal mark per category: a bound or tolerance at discrete instances never zig-zags.
Tick labels are compact (mathtext powers of ten and offsets, at most four significant digits), a ``symlog`` axis
takes its linear range from the data, and text between ``$...$`` is mathtext, as in the report's HTML
(:mod:`reports.texmath`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import (  # noqa: E402
    FixedLocator,
    LogFormatterSciNotation,
    MaxNLocator,
    NullLocator,
    ScalarFormatter,
)

from reports.texmath import mathtext_source, split_math  # noqa: E402
from verify.records import FigureSpec, Series  # noqa: E402

__all__ = ["DISPLAY_DPI", "DPI", "FONT_PT", "PALETTE", "RenderedFigure", "categorical_axis", "display_size",
           "draw_figure", "figure_digest", "render_figure", "series_styles"]

#: Resolution of the PNG files.
DPI = 150
#: CSS pixels per inch: an image shown ``pixels * DISPLAY_DPI / DPI`` CSS pixels wide is at its physical size.
DISPLAY_DPI = 96
#: Figure width (inches) and the height of its axes area (the figure grows with the legend and a wrapped title).
WIDTH_IN = 6.0
AXES_HEIGHT_IN = 3.3
#: Font sizes in points, as displayed.
FONT_PT = {"tick": 9.0, "label": 10.0, "title": 10.5, "legend": 9.0, "offset": 9.0}
#: Okabe & Ito's colour-blind-safe palette (without its yellow, too faint on white), then Paul Tol's muted scheme
#: (its lightest colours last).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#332288", "#117733", "#882255", "#44AA99", "#999933", "#AA4499", "#CC6677", "#88CCEE", "#DDCC77")
#: One marker per series, in order (filled shapes, distinct in grey).
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p")
#: Line styles: solid ones first for measured curves, dashed ones first for references ("dashed").
_SOLID_FIRST = ("-", "--", "-.", ":", (0, (6, 2, 1, 2, 1, 2)), (0, (1, 1)), (0, (8, 3)), (0, (3, 1, 1, 1)))
_DASHED_FIRST = ("--", "-.", ":", (0, (6, 2, 1, 2, 1, 2)), (0, (8, 3)), (0, (3, 1, 1, 1)), (0, (1, 1)), "-")
#: The first word of an x label that makes integer x values categories (instances, replicates, settings, ...).
_CATEGORY_WORDS = {"instance", "instances", "replicate", "replicates", "setting", "settings", "case", "cases",
                   "property", "configuration", "client"}
#: Bump when the drawing changes: part of :func:`figure_digest`.
_RENDER_VERSION = 2


@dataclass(frozen=True, kw_only=True)
class RenderedFigure:
    """A PNG written by :func:`render_figure`: its path and pixel size."""

    path: Path
    width_px: int
    height_px: int
    dpi: int = DPI


def display_size(rendered: RenderedFigure) -> tuple[int, int]:
    """The CSS size (width, height in px) that shows ``rendered`` at its physical size (fonts at :data:`FONT_PT`)."""
    scale = DISPLAY_DPI / rendered.dpi
    return round(rendered.width_px * scale), round(rendered.height_px * scale)


def figure_digest(spec: FigureSpec) -> str:
    """SHA-256 of what the image shows (not the figure's name nor its caption): equal digests, equal images."""
    content = {
        "v": _RENDER_VERSION, "title": spec.title, "xlabel": spec.xlabel, "ylabel": spec.ylabel,
        "xscale": spec.xscale, "yscale": spec.yscale, "spans": spec.spans, "xcategories": spec.xcategories,
        "series": [[s.label, s.style, s.group, s.x, s.y, s.lower, s.upper] for s in spec.series],
    }
    return hashlib.sha256(json.dumps(content, default=repr).encode()).hexdigest()


def categorical_axis(spec: FigureSpec) -> bool:
    """Whether x is categorical: ``xcategories`` given, or every x an integer on an axis whose label starts with
    one of the category words ("instance", "replicate", "setting", ...) on a linear scale."""
    if spec.xcategories:
        return True
    words = re.findall(r"[a-z]+", spec.xlabel.lower())
    return (spec.xscale == "linear" and bool(words) and words[0] in _CATEGORY_WORDS
            and all(float(v).is_integer() for s in spec.series for v in s.x))


def series_styles(spec: FigureSpec) -> list[dict]:
    """The matplotlib style of every series: ``color``, ``marker``, ``linestyle`` (and ``drawstyle`` for a step).

    One colour per group (series without a group each get their own), one marker per series, and a line style per
    line-like series, so the (colour, marker, line style) of the series of a figure are all distinct.
    ValueError when the figure needs more colours than :data:`PALETTE` has, or the styles run out.
    """
    keys = [s.group or f"#{i}" for i, s in enumerate(spec.series)]
    order = list(dict.fromkeys(keys))
    if len(order) > len(PALETTE):
        raise ValueError(f"figure {spec.name!r} needs {len(order)} distinct colours; at most {len(PALETTE)} exist")
    styles, seen, kinds = [], set(), {"dashed": 0, "line": 0}
    for i, (series, key) in enumerate(zip(spec.series, keys, strict=True)):
        style = {"color": PALETTE[order.index(key)], "marker": MARKERS[i % len(MARKERS)]}
        if series.style == "points":
            style["linestyle"] = "none"
        elif series.style == "band":
            style["linestyle"] = "none"
            style["marker"] = "none"
        else:
            kind = "dashed" if series.style == "dashed" else "line"
            cycle = _DASHED_FIRST if kind == "dashed" else _SOLID_FIRST
            style["linestyle"] = cycle[kinds[kind] % len(cycle)]
            kinds[kind] += 1
        if series.style == "step":
            style["drawstyle"] = "steps-post"
        signature = (style["color"], style["marker"], str(style["linestyle"]), series.style == "band")
        if signature in seen:
            raise ValueError(f"figure {spec.name!r}: series {series.label!r} has no distinct style left "
                             f"({len(spec.series)} series)")
        seen.add(signature)
        styles.append(style)
    return styles


def _wrap(text: str, width: int) -> str:
    """``text`` wrapped at ``width`` characters, never inside a ``$...$`` formula (counted at half its length)."""
    if not text:
        return text
    words: list[tuple[str, int]] = []
    for is_math, piece in split_math(text):
        if is_math:
            token = f"${piece}$"
            if words and not words[-1][0].endswith(" "):  # glued to the previous word: one unit
                prev, n = words.pop()
                words.append((prev + token, n + len(piece) // 2))
            else:
                words.append((token, len(piece) // 2))
            continue
        escaped = piece.replace("$", r"\$")
        for k, part in enumerate(re.split(r"(\s+)", escaped)):
            if not part:
                continue
            if part.isspace():
                words.append((" ", 1))
            elif k == 0 and words and words[-1][0] != " ":
                prev, n = words.pop()
                words.append((prev + part, n + len(part)))
            else:
                words.append((part, len(part)))
    lines, line, used = [], "", 0
    for token, n in words:
        if token == " ":
            if line:
                line, used = line + " ", used + 1
            continue
        if used + n > width and line.strip():
            lines.append(line.rstrip())
            line, used = "", 0
        line, used = line + token, used + n
    lines.append(line.rstrip())
    return "\n".join(lines)


def _finite(values) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    return arr[np.isfinite(arr)]


def _symlog_threshold(spec: FigureSpec, axis: str) -> float:
    """A symlog axis's linear range from the data: the 5 % quantile of its non-zero |values| (so that the few values
    closest to 0 are drawn in the linear part and the rest on log scales), 1 when every value is 0."""
    arrays = ([s.x for s in spec.series] if axis == "x"
              else [v for s in spec.series for v in (s.y, s.lower or (), s.upper or ())])
    values = np.abs(np.concatenate([_finite(v) for v in arrays] or [np.zeros(0)]))
    values = values[values > 0]
    if values.size == 0:
        return 1.0
    return float(np.quantile(values, 0.05))


def _symlog_ticks(low: float, high: float, linthresh: float, most: int = 8) -> list[float]:
    """Ticks of a symlog axis on [low, high]: 0 and signed powers of ten at least a decade outside the linear range
    (so no label crowds 0); every decade, or every other (third, ...) one on both sides alike so that there are
    about ``most`` ticks at most, counted from the largest magnitude on each side."""
    first = math.floor(math.log10(linthresh)) + 1
    sides = [(sign, list(range(first, math.floor(math.log10(end)) + 1)) if end > 10.0 ** first else [])
             for sign, end in ((1.0, high), (-1.0, -low))]
    stride = max(1, math.ceil((len(sides[0][1]) + len(sides[1][1]) + 1) / most))
    ticks = [0.0] if low <= 0.0 <= high else []
    for sign, decades in sides:
        ticks += [sign * 10.0 ** k for k in decades[::-1][::stride]]
    return sorted(ticks)


def _compact_formatter(axis) -> None:
    formatter = ScalarFormatter(useMathText=False, useOffset=True)
    formatter.set_powerlimits((-3, 4))
    axis.set_major_formatter(formatter)


def _legend_layout(labels: list[str]) -> tuple[int, int]:
    """(columns, wrap width in characters) of the legend below the axes."""
    longest = max((len(label) for label in labels), default=0)
    if len(labels) >= 3 and longest <= 18:
        return 3, 18
    if len(labels) >= 2 and longest <= 34:
        return 2, 34
    return (1, 68) if len(labels) <= 4 else (2, 34)


def _dodge(spec: FigureSpec, categorical: bool) -> dict[int, float]:
    """Horizontal offsets of the point series of a categorical figure, so that coinciding points stay visible."""
    points = [i for i, s in enumerate(spec.series) if s.style == "points"]
    if not categorical or len(points) < 2:
        return {}
    width = min(0.5, 0.12 * (len(points) - 1))
    return {i: -width / 2 + width * k / (len(points) - 1) for k, i in enumerate(points)}


def _mark_width(spec: FigureSpec, categorical: bool) -> float:
    """Width (x units) of a mark drawn at each discrete x."""
    xs = np.unique(np.concatenate([np.asarray(s.x, dtype=float) for s in spec.series]))
    step = float(np.min(np.diff(xs))) if xs.size > 1 else 1.0
    return (0.7 if categorical else 0.6) * step


def _draw_series(ax, series: Series, style: dict, categorical: bool, offset: float, mark_width: float,
                 with_points: bool = False) -> object:
    """Draw one series; returns its legend handle."""
    x = np.asarray(series.x, dtype=float) + offset
    y = np.asarray(series.y, dtype=float)
    color, marker, linestyle = style["color"], style["marker"], style["linestyle"]
    if series.style == "band":
        if categorical:
            ax.bar(x, np.subtract(series.upper, series.lower), bottom=series.lower, width=mark_width, color=color,
                   alpha=0.22, hatch="//", edgecolor=color, linewidth=0.0, zorder=1)
        else:
            ax.fill_between(x, series.lower, series.upper, color=color, alpha=0.22, hatch="//", edgecolor=color,
                            linewidth=0.0, zorder=1)
        return Patch(facecolor=color, alpha=0.35, hatch="//", edgecolor=color, label=series.label)
    as_marks = series.style == "marks" or (categorical and series.style != "points")
    finite = y[np.isfinite(y)]
    if as_marks and series.style != "marks" and len(x) >= 2 and finite.size == len(y) and np.all(finite == finite[0]):
        # a constant reference over the categories: one line across them, not one mark per category
        ax.hlines(finite[0], x.min() - mark_width / 2, x.max() + mark_width / 2, colors=color, linestyles=linestyle,
                  linewidth=1.6, zorder=3)
        return Line2D([], [], color=color, linestyle=linestyle, linewidth=1.6, label=series.label)
    if as_marks:
        ax.hlines(y, x - mark_width / 2, x + mark_width / 2, colors=color, linestyles=linestyle, linewidth=2.0,
                  zorder=3)
        if series.lower is not None:
            ax.errorbar(x, y, yerr=[y - np.asarray(series.lower), np.asarray(series.upper) - y], fmt="none",
                        ecolor=color, elinewidth=1.0, capsize=3, zorder=3)
        return Line2D([], [], color=color, linestyle=linestyle, linewidth=2.0, marker="|", markersize=8,
                      label=series.label)
    if series.style == "points":
        dense = len(x) > 150  # many points: small, without the white rim that would wash them out
        kwargs = {"linestyle": "none", "markersize": 3.0 if dense else 5.5, "zorder": 5,
                  "markeredgecolor": color if dense else "white", "markeredgewidth": 0.0 if dense else 0.6}
        if categorical and series.lower is not None:
            ax.errorbar(x, y, yerr=[y - np.asarray(series.lower), np.asarray(series.upper) - y], fmt="none",
                        ecolor=color, elinewidth=1.0, capsize=3, zorder=3)
    else:
        # Markers along a line tell it apart in grey print; sparse where points of a check sit on the same x.
        sparse = len(x) > 15 or with_points
        every = (0.03 + 0.021 * (MARKERS.index(marker) if marker in MARKERS else 0), 0.14) if sparse else 1
        kwargs = {"linestyle": linestyle, "linewidth": 1.6, "markersize": 4.5 if with_points else 5.0,
                  "markevery": every, "zorder": 4}
        if "drawstyle" in style:
            kwargs["drawstyle"] = style["drawstyle"]
    (line,) = ax.plot(x, y, color=color, marker=marker, label=series.label, **kwargs)
    if series.lower is not None and not categorical:
        ax.fill_between(x, series.lower, series.upper, color=color, alpha=0.15, linewidth=0, zorder=1)
    return line


def draw_figure(spec: FigureSpec) -> Figure:
    """The matplotlib figure of ``spec`` on an Agg canvas (not drawn nor saved; see :func:`render_figure`)."""
    styles = series_styles(spec)
    categorical = categorical_axis(spec)
    labels = [mathtext_source(s.label) for s in spec.series]
    ncol, label_width = _legend_layout(labels) if len(spec.series) > 1 else (1, 86)
    labels = [_wrap(label, label_width) for label in labels]
    title = _wrap(mathtext_source(spec.title), 64)
    legend_lines = (sum(label.count("\n") + 1 for label in labels) + ncol - 1) // ncol if len(labels) > 1 else 0
    xticks_rotated = bool(spec.xcategories) and (len(spec.xcategories) > 8
                                                 or max(len(c) for c in spec.xcategories) > 8)
    height = (AXES_HEIGHT_IN + 0.62 + 0.2 * (title.count("\n") + 1)
              + (0.21 * legend_lines + 0.15 if legend_lines else 0.0) + (0.5 if xticks_rotated else 0.0))
    fig = Figure(figsize=(WIDTH_IN, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)  # so that fig.canvas.draw() lays it out and renders it, as savefig does
    fig.get_layout_engine().set(h_pad=0.04, w_pad=0.04)
    ax = fig.add_subplot()
    for start, end in spec.spans:
        ax.axvspan(start, end, color="0.88", zorder=0, linewidth=0)
    offsets = _dodge(spec, categorical)
    mark_width = _mark_width(spec, categorical)
    handles = []
    with_points = any(s.style == "points" for s in spec.series)
    for i, (series, style, label) in enumerate(zip(spec.series, styles, labels, strict=True)):
        handle = _draw_series(ax, series, style, categorical, offsets.get(i, 0.0), mark_width, with_points)
        handle.set_label(label)
        handles.append(handle)
    thresholds = {}
    for name, scale, setter in (("x", spec.xscale, ax.set_xscale), ("y", spec.yscale, ax.set_yscale)):
        if scale == "symlog":
            thresholds[name] = _symlog_threshold(spec, name)
            setter("symlog", linthresh=thresholds[name])
        else:
            setter(scale)
    for name, axis, scale in (("x", ax.xaxis, spec.xscale), ("y", ax.yaxis, spec.yscale)):
        if scale == "linear":
            _compact_formatter(axis)
            continue
        axis.set_major_formatter(LogFormatterSciNotation(labelOnlyBase=scale == "symlog"))
        if scale == "symlog":
            ax.autoscale_view()
            low, high = ax.get_xlim() if name == "x" else ax.get_ylim()
            axis.set_major_locator(FixedLocator(_symlog_ticks(low, high, thresholds[name])))
            axis.set_minor_locator(NullLocator())
    if spec.xcategories:
        ax.set_xticks(range(len(spec.xcategories)), labels=[mathtext_source(c) for c in spec.xcategories])
        if xticks_rotated:
            for tick in ax.get_xticklabels():
                tick.set_rotation(30)
                tick.set_horizontalalignment("right")
        ax.set_xlim(-0.6, len(spec.xcategories) - 0.4)
    elif categorical:
        xs = np.concatenate([np.asarray(s.x, dtype=float) for s in spec.series])
        ax.xaxis.set_major_locator(MaxNLocator(nbins="auto", integer=True, min_n_ticks=1))
        if xs.size:
            ax.set_xlim(xs.min() - 0.6, xs.max() + 0.6)
    ax.set_title(title, fontsize=FONT_PT["title"])
    ax.set_xlabel(_wrap(mathtext_source(spec.xlabel), 80), fontsize=FONT_PT["label"])
    ax.set_ylabel(_wrap(mathtext_source(spec.ylabel), 44), fontsize=FONT_PT["label"])
    ax.tick_params(labelsize=FONT_PT["tick"])
    for axis in (ax.xaxis, ax.yaxis):
        axis.get_offset_text().set_fontsize(FONT_PT["offset"])
    ax.grid(True, alpha=0.3, linewidth=0.6)
    if len(spec.series) > 1:
        fig.legend(handles=handles, loc="outside lower center", ncols=ncol, fontsize=FONT_PT["legend"],
                   frameon=False, handlelength=2.6, columnspacing=1.2)
    return fig


def render_figure(spec: FigureSpec, path: Path) -> RenderedFigure:
    """Draw ``spec`` and save it as a PNG at ``path`` (parent directories are created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = draw_figure(spec)
    fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    with path.open("rb") as fh:  # the PNG's IHDR chunk: width and height, big-endian, after the 16-byte header
        width, height = struct.unpack(">II", fh.read(24)[16:24])
    return RenderedFigure(path=path, width_px=width, height_px=height, dpi=DPI)
