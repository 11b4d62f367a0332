"""Figures a reader decodes at a glance and that print in grey (reports/figures.py).

Each figure of a representative set (the shapes the checks draw: closed form against its check, many series,
categorical instance axes with per-instance bounds, bands, symlog and log axes with tiny values, long titles and
legend entries, dense point clouds, and real figures of the differential-privacy checks) is drawn and checked for:
a distinct (colour, marker, line style) per series, every font >= 9 pt at the size the report shows it, >= 150 dpi,
a legend that covers no data point and stays inside the image, titles inside the image, categorical axes labelled
by category, no line joining the points of a categorical axis, and compact tick labels.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from matplotlib.collections import LineCollection
from matplotlib.image import imread
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text

from reports.figures import DISPLAY_DPI, DPI, categorical_axis, display_size, draw_figure, render_figure
from verify.records import FigureSpec, Series

MIN_FONT_PT = 9.0


def _curve(n=60, scale=1.0):
    x = np.arange(1, n + 1, dtype=float)
    return x, scale / np.sqrt(x)


def representative_figures() -> list[FigureSpec]:
    x, y = _curve()
    rng = np.random.default_rng(0)
    specs = [
        FigureSpec(name="closed_form_vs_check", title="Closed form and its Monte-Carlo check", xlabel="iteration n",
                   ylabel="error", yscale="log", series=(
                       Series(label="closed form", x=x, y=y, group="a"),
                       Series(label="Monte Carlo", x=x[::5], y=y[::5] * 1.02, style="points", group="a"),
                       Series(label="bound", x=x, y=2 * y, style="dashed"))),
        FigureSpec(name="many_series", title="Nine step sizes and a bound, every curve its own style",
                   xlabel="iteration n", ylabel="D_n / B_n", xscale="log", yscale="log", series=tuple(
                       Series(label=f"rho = {r:g} L_max", x=x, y=y * r, style="line" if k % 2 else "dashed")
                       for k, r in enumerate((0.1, 0.5, 1, 2.5, 5, 10, 25, 100, 200))) + (
                       Series(label="bound (ratio 1)", x=(1, 60), y=(1, 1), style="dashed"),)),
        FigureSpec(name="instances_with_tolerance", title="Algorithm objective minus CVXPY optimum (relative)",
                   xlabel="instance", ylabel="(P_alg - P_cvxpy) / (1 + |P_cvxpy|)", yscale="symlog", series=(
                       Series(label="measured", x=range(5), y=(-4.6e-10, 3.9e-12, 5e-16, -5e-16, -2e-11),
                              style="points"),
                       Series(label="CVXPY tolerance used", x=range(5), y=(1e-8, 1e-10, 1e-10, 1e-10, 1e-8),
                              style="dashed"))),
        FigureSpec(name="replicates", title="Digits stand-in: test accuracy of every replicate", xlabel="replicate",
                   ylabel="test accuracy (%)", series=tuple(
                       Series(label=label, x=range(8), y=np.round(rng.uniform(93, 100, 8), 1), style="points")
                       for label in ("Algorithm 1 (validated lambda)", "IFCA", "local training (lambda = 0)",
                                     "one pooled model (lambda -> inf, FedAvg's fixed point)",
                                     "oracle cluster-wise models"))),
        FigureSpec(name="named_categories", title="Per setting", xlabel="setting", ylabel="violations",
                   xcategories=("ridge, constant step", "ridge, growing step", "LAD, constant step", "LAD, growing"),
                   series=(Series(label="violated iterations", x=range(4), y=(141, 149, 149, 149), style="points"),
                           Series(label="iterations run", x=range(4), y=(150, 150, 150, 150), style="marks"),
                           Series(label="allowed band", x=range(4), y=(0, 0, 0, 0), lower=(0, 0, 0, 0),
                                  upper=(5, 5, 5, 5), style="band"))),
        FigureSpec(name="bands", title="NMSD (dB): median over replicates with 95 % bands and the windows compared "
                                       "by the decision rule, which makes this a long title that must wrap",
                   xlabel="iteration n", ylabel="NMSD (dB): median over replicates, 95% band",
                   spans=((10, 12), (55, 60)), series=tuple(
                       Series(label=f"PGFL tau = {t} {name}", x=x, y=-10 * np.log10(1 + t * x), lower=-10 *
                              np.log10(1 + t * x) - 1, upper=-10 * np.log10(1 + t * x) + 1, style=style)
                       for t, name, style in ((0.4, "R-1", "line"), (0.4, "R-2 (scheduled)", "dashed"),
                                              (0.1, "V1 R-1", "line"), (0.1, "V1 R-2 (scheduled)", "dashed")))),
        FigureSpec(name="tiny_linear", title="Residual", xlabel="tau", ylabel="relative residual",
                   series=(Series(label="residual", x=x, y=1.05232e-8 + 1e-12 * np.sin(x)),)),
        FigureSpec(name="dense_points", title="Per-client accounted zCDP after 60 iterations", xlabel="client (sorted)",
                   ylabel="total zCDP", series=(
                       Series(label="accounted from the implementation's variances", x=range(1500),
                              y=np.sort(rng.uniform(0.01, 0.05, 1500)), style="points"),
                       Series(label="full participation (closed form)", x=(0, 1499), y=(0.083, 0.083),
                              style="dashed"))),
        FigureSpec(name="math_labels", title=r"Gaussian mechanism: Rényi divergence vs $\alpha\rho$",
                   xlabel=r"order $\alpha$", ylabel=r"$D_\alpha$", xscale="log", yscale="log", series=(
                       Series(label=r"$\alpha\rho$, $\Delta = 1$", x=x, y=x / 2, group="g"),
                       Series(label=r"quadrature, $\Delta \le 1$", x=x[::6], y=x[::6] / 2, style="points",
                              group="g"))),
        FigureSpec(name="steps", title="tau of the lowest client", xlabel="iteration n", ylabel="tau",
                   series=(Series(label="tau_k^(n)", x=x, y=np.minimum(0.05, 0.001 * x), style="step"),
                           Series(label="0", x=(1, 60), y=(0, 0), style="dashed"))),
    ]
    from theory.privacy.conversions import (
        zcdp_to_approx_dp_bun_steinke,
        zcdp_to_approx_dp_cks,
        zcdp_to_approx_dp_exact_gaussian,
    )
    from verify.dp.conversions import _ordering_figure, _tightness_figure
    from verify.dp.gaussian_zcdp import _figure as renyi_figure

    specs += [renyi_figure(), _tightness_figure(zcdp_to_approx_dp_bun_steinke),
              _ordering_figure(zcdp_to_approx_dp_exact_gaussian, zcdp_to_approx_dp_cks, zcdp_to_approx_dp_bun_steinke)]
    return specs


SPECS = representative_figures()


def _handle_style(handle) -> tuple:
    if isinstance(handle, Patch):
        return ("patch", str(handle.get_facecolor()), handle.get_hatch())
    return (str(handle.get_color()), str(handle.get_marker()), str(handle.get_linestyle()))


def _drawn(spec):
    fig = draw_figure(spec)
    fig.canvas.draw()
    return fig


def _mantissa_digits(label: str) -> int:
    text = label.replace("\u2212", "-").replace("$", "").replace("\\mathdefault", "").replace("{", "").replace("}", "")
    mantissa = re.split(r"\\times|×|e|\^", text)[0]
    return len(re.sub(r"[^0-9]", "", mantissa).lstrip("0"))


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_every_series_has_its_own_colour_marker_and_line_style(spec):
    fig = _drawn(spec)
    legend = fig.legends[0] if fig.legends else None
    handles = legend.legend_handles if legend is not None else []
    if len(spec.series) > 1:
        assert len(handles) == len(spec.series)
        styles = [_handle_style(h) for h in handles]
        assert len(set(styles)) == len(styles), styles


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_fonts_are_at_least_9_pt_as_displayed_at_150_dpi(spec, tmp_path):
    rendered = render_figure(spec, tmp_path / "f.png")
    assert rendered.dpi >= 150 and DPI >= 150
    image = imread(rendered.path)
    assert image.shape[1] == rendered.width_px and image.shape[0] == rendered.height_px
    css_width, _ = display_size(rendered)
    scale = css_width / rendered.width_px * rendered.dpi / DISPLAY_DPI  # displayed pt per drawn pt
    fig = _drawn(spec)
    sizes = [t.get_fontsize() * scale for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert sizes and min(sizes) >= MIN_FONT_PT - 1e-9, min(sizes)


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_legend_covers_no_data_and_texts_stay_inside_the_image(spec):
    fig = _drawn(spec)
    renderer = fig.canvas.get_renderer()
    figure_box = fig.bbox
    ax = fig.axes[0]
    texts = [ax.title, ax.xaxis.label, ax.yaxis.label]
    for text in texts:
        box = text.get_window_extent(renderer)
        assert figure_box.x0 - 1 <= box.x0 and box.x1 <= figure_box.x1 + 1, (text.get_text(), box, figure_box)
        assert figure_box.y0 - 1 <= box.y0 and box.y1 <= figure_box.y1 + 1, (text.get_text(), box, figure_box)
    if not fig.legends:
        return
    legend_box = fig.legends[0].get_window_extent(renderer)
    assert figure_box.x0 - 1 <= legend_box.x0 and legend_box.x1 <= figure_box.x1 + 1
    assert figure_box.y0 - 1 <= legend_box.y0 and legend_box.y1 <= figure_box.y1 + 1
    for series in spec.series:
        points = np.column_stack([series.x, series.y]).astype(float)
        points = points[np.all(np.isfinite(points), axis=1)]
        shown = ax.transData.transform(points)
        inside = ((shown[:, 0] >= legend_box.x0) & (shown[:, 0] <= legend_box.x1)
                  & (shown[:, 1] >= legend_box.y0) & (shown[:, 1] <= legend_box.y1))
        assert not inside.any(), (series.label, points[inside][:3])


@pytest.mark.parametrize("spec", [s for s in SPECS if categorical_axis(s)], ids=lambda s: s.name)
def test_categorical_axes_are_labelled_by_category_and_never_joined(spec):
    fig = _drawn(spec)
    ax = fig.axes[0]
    low, high = ax.get_xlim()
    ticks = [t for t in ax.get_xticks() if low <= t <= high]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks
    if spec.xcategories:
        assert [t.get_text() for t in ax.get_xticklabels()] == list(spec.xcategories)
    for line in ax.get_lines():  # a line through the points of several categories is a zig-zag
        if line.get_linestyle() not in ("None", "none", " ", ""):
            assert len(line.get_xdata()) <= 1, line.get_label()
    assert any(isinstance(c, LineCollection) for c in ax.collections) or all(
        s.style == "points" for s in spec.series)


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_tick_labels_are_compact(spec):
    fig = _drawn(spec)
    ax = fig.axes[0]
    for axis in (ax.xaxis, ax.yaxis):
        for label in axis.get_ticklabels():
            text = label.get_text()
            if text and not re.search(r"[A-Za-z]{3,}", text.replace("mathdefault", "").replace("times", "")):
                assert _mantissa_digits(text) <= 4, (spec.name, text)
        offset = axis.get_offset_text().get_text()
        assert _mantissa_digits(offset) <= 4, (spec.name, offset)


def test_styles_and_lines_in_grey():
    """Printed in grey, the series of a figure still differ: their line styles or markers differ even where two
    colours have the same lightness."""
    spec = SPECS[1]
    fig = _drawn(spec)
    handles = fig.legends[0].legend_handles
    shapes = {(h.get_marker(), str(h.get_linestyle())) for h in handles}
    assert len(shapes) == len(handles)


def test_a_categorical_line_series_is_drawn_as_marks_and_a_constant_one_as_one_line():
    spec = FigureSpec(name="t", title="t", xlabel="instance", ylabel="y", series=(
        Series(label="measured", x=range(4), y=(1, 2, 3, 4), style="points"),
        Series(label="per-instance bound", x=range(4), y=(2, 3, 4, 5), style="dashed"),
        Series(label="constant bound", x=(0, 3), y=(6, 6), style="dashed")))
    ax = _drawn(spec).axes[0]
    collections = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert sorted(len(c.get_segments()) for c in collections) == [1, 4]
    assert all(isinstance(h, Line2D) for h in ax.get_lines())


def test_a_figure_with_more_groups_than_colours_is_refused():
    from reports.figures import PALETTE, series_styles

    spec = FigureSpec(name="crowded", title="t", xlabel="x", ylabel="y", series=tuple(
        Series(label=f"s{i}", x=(0, 1), y=(0, i)) for i in range(len(PALETTE) + 1)))
    with pytest.raises(ValueError, match="distinct colours"):
        series_styles(spec)
    assert not math.isnan(len(PALETTE))
