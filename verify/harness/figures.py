"""Figures a reader can decode: one colour and style per arm, its band, the compared windows, the decision."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from verify.harness.sign_test import sign_bounds
from verify.records import FigureSpec, Series

__all__ = ["curve_figure"]


def curve_figure(name: str, title: str, x, curves: Mapping[str, np.ndarray], *, xlabel: str, ylabel: str,
                 windows: Sequence[tuple[float, float]] = (), caption: str = "", band_alpha: float = 0.025,
                 yscale: str = "linear") -> FigureSpec:
    """Median curve of each arm over replicates with its pointwise sign-test band (level ``1 - 2 band_alpha``).

    ``curves``: ``{label: (replicates, len(x))}``. Every arm gets its own colour and line style (the renderer
    never shares a colour between ungrouped series); ``windows`` are the read-out ranges the statements compare.
    """
    x = np.asarray(x, dtype=np.float64)
    series = []
    for label, c in curves.items():
        c = np.asarray(c, dtype=np.float64)
        if c.ndim != 2 or c.shape[1] != x.size:
            raise ValueError(f"curves[{label!r}] must have shape (replicates, {x.size}), got {c.shape}")
        med = np.median(c, axis=0)
        bounds = np.array([sign_bounds(col, band_alpha) for col in c.T])
        lo = np.where(np.isfinite(bounds[:, 0]), bounds[:, 0], c.min(axis=0))
        hi = np.where(np.isfinite(bounds[:, 1]), bounds[:, 1], c.max(axis=0))
        series.append(Series(label=label, x=x, y=med, lower=lo, upper=hi))
    return FigureSpec(name=name, title=title, xlabel=xlabel, ylabel=ylabel, series=tuple(series), yscale=yscale,
                      spans=tuple(windows), caption=caption)
