"""What a command prints: strict JSON, the human summary (meaningful digits), the ``--plot`` figures, progress on
stderr.

A plug-in declares its summary and its figures as data: ``SUMMARY_TITLE`` and ``SUMMARY`` (:class:`Row` s, each naming
a key path of the run's document) and ``FIGURES`` (:class:`Plot` s of :class:`Line` s); :func:`summary_of` and
:func:`figures_of` render them. A callable in ``SUMMARY`` (``(setup, result) -> [(label, value), ...]``), in
``FIGURES`` (``(setup, result) -> [FigureSpec, ...]``) or as a key is the escape hatch for what is really conditional.
Labels, titles and texts are :meth:`str.format` strings of ``s`` (the setup) and ``r`` (the document):
``"NE({s.iterations}), mean over runs"``, ``"epsilon at delta = {r[privacy][delta]:g}"``.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["SHOWS", "YSCALES", "Line", "Plot", "Progress", "Row", "figures_of", "fmt", "fmt_bracket", "fmt_real",
           "lookup", "print_json", "print_summary", "strict", "summary_of"]


def strict(obj):
    """``obj`` with every non-finite float as ``None`` and numpy scalars/arrays as Python values."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: strict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [strict(v) for v in obj]
    if hasattr(obj, "tolist") and hasattr(obj, "dtype"):
        return strict(obj.tolist())
    return obj


def print_json(document, **kwargs) -> None:
    """Strict JSON (``allow_nan=False``) on stdout; the caller's status fields say why a value is null."""
    import json

    sys.stdout.write(json.dumps(strict(document), allow_nan=False, **kwargs) + "\n")


def fmt(value, digits: int = 4) -> str:
    """A value for people: reals to ``digits`` significant digits, lists by their length and ends."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if hasattr(value, "tolist") and hasattr(value, "dtype"):
        value = value.tolist()
    if isinstance(value, float):
        if not math.isfinite(value):
            return "not finite"
        return f"{value:.{digits}g}"
    if isinstance(value, (list, tuple)):
        if len(value) <= 4:
            return "[" + ", ".join(fmt(v, digits) for v in value) + "]"
        return f"{len(value)} values, {fmt(value[0], digits)} .. {fmt(value[-1], digits)}"
    return str(value)


def fmt_real(value, digits: int = 4) -> str:
    """A real for people: ``digits`` significant digits, ``"not finite"`` for None, inf and NaN."""
    return "not finite" if value is None or not math.isfinite(float(value)) else f"{float(value):.{digits}g}"


def _round_sig(x: float, digits: int, direction: str) -> float:
    """``x`` rounded to ``digits`` significant digits toward ``direction`` ("down" / "up")."""
    if x == 0.0 or not math.isfinite(x):
        return x
    exponent = math.floor(math.log10(abs(x))) - digits + 1
    scaled = x / 10.0**exponent
    scaled = math.floor(scaled) if direction == "down" else math.ceil(scaled)
    return float(f"{scaled * 10.0**exponent:.{digits}g}")


def fmt_bracket(lo, hi, digits: int = 4) -> str:
    """A certified bracket ``[lo, hi]`` for people: one value when its ends agree to ``digits`` significant digits
    (``0.6721``, never ``[0.672131, 0.672131]``), else ``[a, b]`` with the fewest significant digits (at least 2) that
    separate the ends, rounded outward so that ``[a, b]`` still contains ``[lo, hi]``.

    >>> fmt_bracket(0.672131, 0.672131), fmt_bracket(0.0981, 0.0990), fmt_bracket(1.0, 2.5)
    ('0.6721', '[0.098, 0.099]', '[1, 2.5]')
    """
    if lo is None or hi is None:
        return "n/a"
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return f"[{fmt(lo, digits)}, {fmt(hi, digits)}]"
    if f"{lo:.{digits}g}" == f"{hi:.{digits}g}":
        return f"{lo:.{digits}g}"
    for k in range(2, 18):
        a, b = _round_sig(lo, k, "down"), _round_sig(hi, k, "up")
        if f"{lo:.{k}g}" != f"{hi:.{k}g}":
            return f"[{a:.{k}g}, {b:.{k}g}]"
    return f"[{lo!r}, {hi!r}]"  # pragma: no cover - ends that differ only beyond 17 digits


def print_summary(title: str, rows: Iterable[tuple[str, object]]) -> None:
    """``title`` then one ``label: value`` line per row (values through :func:`fmt`)."""
    rows = [(label, value) for label, value in rows]
    print(title)
    if rows:
        width = max(len(label) for label, _ in rows)
        for label, value in rows:
            print(f"  {label:<{width}}  {value if isinstance(value, str) else fmt(value)}")


_MISSING = object()


def lookup(document: Any, path: str, default: Any = _MISSING) -> Any:
    """The value at the dotted ``path`` of ``document`` (``"privacy.paper.epsilon_max"``; an integer part indexes a
    list or an array). A missing key, or a path through None, raises KeyError naming the path unless ``default`` is
    given."""
    value = document
    for part in path.split("."):
        try:
            value = value[part] if isinstance(value, dict) or not part.isdigit() else value[int(part)]
        except (KeyError, IndexError, TypeError, ValueError):
            if default is not _MISSING:
                return default
            raise KeyError(f"the run's document has no {path!r} (at {part!r})") from None
    return value


#: How a :class:`Row` shows its value: as it is, its first or last entry, or ``"first -> last"`` (:func:`fmt_real`).
SHOWS = ("value", "first", "last", "first->last")
#: The y scale of a :class:`Plot`: ``"log-if-positive"`` is log when every finite value of the first line is > 0
#: (so also when none is finite), ``"log-if-some-positive"`` only when some finite value exists and all are > 0.
YSCALES = ("linear", "log-if-positive", "log-if-some-positive")


def _key(key: str | Callable, s, r, default: Any = _MISSING) -> Any:
    return key(s, r) if callable(key) else lookup(r, key, default)


@dataclass(frozen=True, kw_only=True)
class Row:
    """One line of the human summary.

    Parameters
    ----------
    label : str or callable
        A format string of ``s`` (the setup) and ``r`` (the run's document), or ``(s, r) -> str``.
    key : str or callable, optional
        The dotted path of the value in the document (or ``(s, r) -> value``); a missing key is an error (KeyError
        naming it) unless ``optional``.
    show : str
        One of :data:`SHOWS`.
    text : str
        A format string shown instead of a value (give ``key`` or ``text``).
    optional : bool
        Omit the row when the key is missing, None or an empty list (instead of failing).
    when : callable, optional
        ``(s, r) -> bool``: show the row only then.
    """

    label: str | Callable
    key: str | Callable = ""
    show: str = "value"
    text: str = ""
    optional: bool = False
    when: Callable | None = None

    def __post_init__(self) -> None:
        if self.show not in SHOWS:
            raise ValueError(f"show must be one of {', '.join(SHOWS)}, got {self.show!r}")
        if bool(self.key) == bool(self.text):
            raise ValueError(f"give exactly one of key and text (row {self.label!r})")

    def render(self, s, r) -> list[tuple[str, object]]:
        """``[(label, value)]``, or ``[]`` when the row is not shown."""
        if self.when is not None and not self.when(s, r):
            return []
        label = self.label(s, r) if callable(self.label) else self.label.format(s=s, r=r)
        if self.text:
            return [(label, self.text.format(s=s, r=r))]
        value = _key(self.key, s, r, None if self.optional else _MISSING)
        if self.optional and (value is None or (isinstance(value, (list, tuple)) and not value)):
            return []
        if self.show == "value":
            return [(label, value)]
        ends = (value[0] if len(value) else None, value[-1] if len(value) else None)
        if self.show == "first->last":
            return [(label, f"{fmt_real(ends[0])} -> {fmt_real(ends[1])}")]
        return [(label, ends[0] if self.show == "first" else ends[1])]


def summary_of(plugin, s, r) -> tuple[str, list[tuple[str, object]]]:
    """``(title, rows)`` of a plug-in's ``SUMMARY_TITLE`` (a format string or ``(s, r) -> str``) and ``SUMMARY``."""
    title = plugin.SUMMARY_TITLE
    rows: list[tuple[str, object]] = []
    for row in plugin.SUMMARY:
        rows += row.render(s, r) if isinstance(row, Row) else list(row(s, r))
    return (title(s, r) if callable(title) else title.format(s=s, r=r)), rows


@dataclass(frozen=True, kw_only=True)
class Line:
    """One curve of a :class:`Plot`: y at ``key`` (a dotted path of the document, or ``(s, r) -> values``), x at
    ``x`` (likewise; default ``x0, x0 + 1, ...``); ``label`` a format string of ``s`` and ``r``; ``when``: ``(s, r)
    -> bool``, draw the line only then."""

    label: str
    key: str | Callable
    x: str | Callable = ""
    x0: int = 0
    style: str = "line"
    when: Callable | None = None


@dataclass(frozen=True, kw_only=True)
class Plot:
    """One figure of ``--plot``: ``name``, the format strings ``title``, ``xlabel``, ``ylabel``, its ``lines`` and
    ``yscale`` (one of :data:`YSCALES`). ``optional``: no figure when the first line's values are missing or empty
    (else a missing key is an error); ``when``: ``(s, r) -> bool``, the figure only then."""

    name: str
    title: str
    xlabel: str
    ylabel: str
    lines: tuple[Line, ...]
    yscale: str = "linear"
    optional: bool = False
    when: Callable | None = None

    def __post_init__(self) -> None:
        if self.yscale not in YSCALES:
            raise ValueError(f"yscale must be one of {', '.join(YSCALES)}, got {self.yscale!r}")
        if not self.lines:
            raise ValueError(f"lines must be non-empty (plot {self.name!r})")

    def render(self, s, r) -> list:
        """``[FigureSpec]``, or ``[]`` when the figure is not drawn."""
        import numpy as np

        from fedcheck._plot import figure_spec, series

        if self.when is not None and not self.when(s, r):
            return []
        first = _key(self.lines[0].key, s, r, None if self.optional else _MISSING)
        if self.optional and (first is None or not len(first)):
            return []
        curves = []
        for line in self.lines:
            if line.when is not None and not line.when(s, r):
                continue
            y = _key(line.key, s, r)
            x = _key(line.x, s, r) if line.x else range(line.x0, line.x0 + len(y))
            curves.append(series(line.label.format(s=s, r=r), x, y, style=line.style))
        kwargs = {}
        if self.yscale != "linear":
            values = np.asarray([np.nan if v is None else v for v in first], dtype=np.float64)
            finite = values[np.isfinite(values)]
            log = bool(np.all(finite > 0)) and (finite.size > 0 or self.yscale == "log-if-positive")
            kwargs["yscale"] = "log" if log else "linear"
        return [figure_spec(self.name, self.title.format(s=s, r=r), self.xlabel.format(s=s, r=r),
                            self.ylabel.format(s=s, r=r), curves, **kwargs)]


def figures_of(plugin, s, r) -> list:
    """The ``--plot`` figures of a plug-in's ``FIGURES`` (:class:`Plot` s or ``(s, r) -> [FigureSpec]``)."""
    out = []
    for plot in plugin.FIGURES:
        out += plot.render(s, r) if isinstance(plot, Plot) else list(plot(s, r))
    return out


class Progress:
    """Elapsed time on stderr while a long run works (a terminal only; never with ``--quiet``).

    Shown when the expected duration is at least ``threshold`` seconds: one line rewritten each second,
    erased at the end.
    """

    def __init__(self, label: str, expected_seconds: float, *, quiet: bool, threshold: float = 3.0):
        self.label, self.expected = label, expected_seconds
        self.enabled = not quiet and expected_seconds >= threshold and _isatty(sys.stderr)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self):
        if self.enabled:
            self._start = time.monotonic()
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(1.0):
            elapsed = time.monotonic() - self._start
            sys.stderr.write(f"\r{self.label}: running for {elapsed:.0f} s (expected about "
                             f"{max(self.expected, 1):.0f} s)\x1b[K")
            sys.stderr.flush()

    def __exit__(self, *exc):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
        return False


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
