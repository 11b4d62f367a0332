"""Render FigureSpec records to PNG files with matplotlib's Agg backend."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (backend must be chosen first)

from verify.records import FigureSpec  # noqa: E402

__all__ = ["render_figure", "series_styles"]

_STYLES = {
    "line": {"linestyle": "-"},
    "dashed": {"linestyle": "--"},
    "step": {"drawstyle": "steps-post"},
    "points": {"linestyle": "none", "marker": "o", "markersize": 4, "markerfacecolor": "none"},
}
#: Distinct colours (matplotlib's tab10 then Dark2): series that are not grouped never share one.
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
            "#17becf", "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666")
#: Line styles cycled with the colours, so arms stay apart in grey-scale print too.
_DASHES = ("-", "--", "-.", ":")


def series_styles(spec: FigureSpec) -> list[dict]:
    """The matplotlib style of every series: one colour per group (a closed form and its check share one), and
    otherwise one colour and line style per series. ValueError when the figure needs more colours than exist."""
    colours: dict[str, str] = {}
    styles = []
    n_colours = len({s.group or f"#{i}" for i, s in enumerate(spec.series)})
    if n_colours > len(_PALETTE):
        raise ValueError(f"figure {spec.name!r} needs {n_colours} distinct colours; at most {len(_PALETTE)} exist")
    for i, series in enumerate(spec.series):
        key = series.group or f"#{i}"
        if key not in colours:
            colours[key] = _PALETTE[len(colours)]
        style = dict(_STYLES[series.style], color=colours[key])
        if series.style == "line" and not series.group:
            style["linestyle"] = _DASHES[(len(colours) - 1) % len(_DASHES)]
        styles.append(style)
    return styles


def render_figure(spec: FigureSpec, path: Path) -> Path:
    """Draw ``spec`` and save it as a PNG at ``path`` (parent directories are created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
    try:
        for start, end in spec.spans:
            ax.axvspan(start, end, color="0.85", alpha=0.6, zorder=0)
        for series, style in zip(spec.series, series_styles(spec)):
            ax.plot(series.x, series.y, label=series.label, **style)
            if series.lower is not None:
                ax.fill_between(series.x, series.lower, series.upper, color=style["color"], alpha=0.18, linewidth=0)
        ax.set_xscale(spec.xscale)
        ax.set_yscale(spec.yscale)
        ax.set_title(spec.title, fontsize=10)
        ax.set_xlabel(spec.xlabel)
        ax.set_ylabel(spec.ylabel)
        ax.grid(True, alpha=0.3)
        if len(spec.series) > 1:
            ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path
