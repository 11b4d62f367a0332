"""``--plot FILE``: a command's figures as one PNG or SVG, drawn by the report's renderer.

Each figure is a :class:`verify.records.FigureSpec` drawn by :func:`reports.figures.draw_figure` (the report's
palette, fonts, line styles and legend), so a CLI figure looks like the report's. Several figures of one command are
stacked top to bottom in the one file. The format follows the extension (``.png`` or ``.svg``; any other is refused).

The file is written to a temporary name in its directory and renamed into place, with the mode the user's umask gives
a new file. Every file it writes carries a mark (the PNG's ``Software`` text chunk, the SVG's creator), and an
existing file without that mark -- one fedcheck did not write -- is replaced only with ``--force``. The path is
checked before any work (:func:`check_plot_path`), so a refused path costs nothing.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from fedcheck._errors import ConfigError

__all__ = ["PLOT_FORMATS", "PLOT_MARK", "check_plot_path", "figure_spec", "series", "write_plot",
           "written_by_fedcheck"]

#: Extension -> format of ``--plot``.
PLOT_FORMATS = {".png": "png", ".svg": "svg"}
#: The mark in every file ``--plot`` writes (an existing file without it is not replaced without ``--force``).
PLOT_MARK = "fedcheck --plot"
#: Bytes read from an existing file to look for the mark (PNG text chunks and the SVG metadata come first).
_HEAD_BYTES = 1 << 16


def written_by_fedcheck(path: Path) -> bool:
    """Whether the regular file at ``path`` carries :data:`PLOT_MARK` near its start."""
    try:
        if path.is_symlink() or not path.is_file():
            return False
        with path.open("rb") as fh:
            return PLOT_MARK.encode("ascii") in fh.read(_HEAD_BYTES)
    except OSError:
        return False


def check_plot_path(path: Path | None, *, force: bool, option: str = "--plot") -> None:
    """Refuse (ConfigError naming ``option``) a path ``--plot`` cannot write: another extension, a directory, a missing
    directory, or an existing file fedcheck did not write (unless ``force``). Called before the work."""
    if path is None:
        return
    path = Path(path)
    if path.suffix.lower() not in PLOT_FORMATS:
        raise ConfigError(f"argument {option}: FILE must end in .png or .svg (the format), got {str(path)!r}")
    if path.is_dir():
        raise ConfigError(f"argument {option}: {str(path)!r} is a directory")
    if not path.parent.is_dir():
        raise ConfigError(f"argument {option}: the directory {str(path.parent)!r} does not exist")
    if (path.exists() or path.is_symlink()) and not force and not written_by_fedcheck(path):
        raise ConfigError(f"argument {option}: {str(path)!r} exists and fedcheck did not write it; add --force to "
                          f"replace it")


def series(label: str, x, y, *, style: str = "line", group: str = "", lower=None, upper=None):
    """A :class:`verify.records.Series` with non-finite y (and band ends) as NaN: matplotlib leaves gaps there."""
    import numpy as np

    from verify.records import Series

    def clean(values):
        if values is None:
            return None
        a = np.asarray([np.nan if v is None else v for v in values], dtype=np.float64)
        return tuple(np.where(np.isfinite(a), a, np.nan).tolist())

    return Series(label=label, x=tuple(float(v) for v in x), y=clean(y), style=style, group=group,
                  lower=clean(lower), upper=clean(upper))


def figure_spec(name: str, title: str, xlabel: str, ylabel: str, curves, **kwargs):
    """A :class:`verify.records.FigureSpec` of ``curves`` (Series)."""
    from verify.records import FigureSpec

    return FigureSpec(name=name, title=title, xlabel=xlabel, ylabel=ylabel, series=tuple(curves), **kwargs)


def _png(figures) -> bytes:
    import numpy as np
    from matplotlib import image

    from reports.figures import DPI

    panels = []
    for fig in figures:
        fig.canvas.draw()
        panels.append(np.asarray(fig.canvas.buffer_rgba()))
    width = max(p.shape[1] for p in panels)
    padded = [np.pad(p, ((0, 0), (0, width - p.shape[1]), (0, 0)), constant_values=255) for p in panels]
    buffer = io.BytesIO()
    image.imsave(buffer, np.concatenate(padded, axis=0), format="png", dpi=DPI, metadata={"Software": PLOT_MARK})
    return buffer.getvalue()


_SVG_TAG = re.compile(r"<svg\b[^>]*>", re.S)
_SIZE = re.compile(r'\s(width|height)="([0-9.]+)pt"')


def _svg(figures) -> bytes:
    texts = []
    for fig in figures:
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Creator": PLOT_MARK, "Date": None})
        texts.append(buffer.getvalue())
    if len(texts) == 1:
        return texts[0].encode("utf-8")
    inner, y, width = [], 0.0, 0.0
    for text in texts:
        body = text[text.index("<svg"):]
        tag = _SVG_TAG.match(body).group(0)
        size = dict(_SIZE.findall(tag))
        w, h = float(size["width"]), float(size["height"])
        # unitless sizes: the outer viewBox is in points, so the panels are laid out in its user units
        new_tag = _SIZE.sub(lambda m: f' {m.group(1)}="{m.group(2)}"', tag).replace("<svg", f'<svg y="{y:g}"', 1)
        inner.append(body.replace(tag, new_tag, 1))
        y, width = y + h, max(width, w)
    head = ('<?xml version="1.0" encoding="utf-8" standalone="no"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.1" '
            f'width="{width:g}pt" height="{y:g}pt" viewBox="0 0 {width:g} {y:g}">\n'
            f"<metadata>{PLOT_MARK}</metadata>\n")
    return (head + "\n".join(inner) + "</svg>\n").encode("utf-8")


def _write_atomically(path: Path, data: bytes, *, force: bool = False, option: str = "--plot") -> None:
    from fedcheck._files import write_new_or_replace

    write_new_or_replace(path, lambda fh: fh.write(data), option=option,
                         may_replace=lambda p: force or written_by_fedcheck(p))


def write_plot(path: Path, specs, *, force: bool = False) -> None:
    """Draw ``specs`` (FigureSpec, top to bottom) with the report's renderer and write them to ``path`` atomically;
    a file at ``path`` is replaced only when fedcheck wrote it or ``force`` (checked again at the write: a file that
    appeared during the run is not replaced; :func:`fedcheck._files.write_new_or_replace`)."""
    from reports.figures import draw_figure

    path = Path(path)
    specs = list(specs)
    if not specs:
        raise ValueError("write_plot needs at least one figure")
    figures = [draw_figure(spec) for spec in specs]
    data = _svg(figures) if PLOT_FORMATS[path.suffix.lower()] == "svg" else _png(figures)
    _write_atomically(path, data, force=force)
