"""Render FigureSpec records to PNG files with matplotlib's Agg backend."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (backend must be chosen first)

from verify.records import FigureSpec  # noqa: E402

__all__ = ["render_figure"]

_STYLES = {
    "line": {"linestyle": "-"},
    "dashed": {"linestyle": "--", "color": "0.4"},
    "step": {"drawstyle": "steps-post"},
    "points": {"linestyle": "none", "marker": "o", "markersize": 4, "markerfacecolor": "none"},
}


def render_figure(spec: FigureSpec, path: Path) -> Path:
    """Draw ``spec`` and save it as a PNG at ``path`` (parent directories are created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
    try:
        colours: dict[str, str] = {}
        cycle = iter(plt.rcParams["axes.prop_cycle"].by_key()["color"] * 4)
        for series in spec.series:
            style = dict(_STYLES[series.style])
            if series.group:
                style["color"] = colours.setdefault(series.group, next(cycle))
            ax.plot(series.x, series.y, label=series.label, **style)
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
