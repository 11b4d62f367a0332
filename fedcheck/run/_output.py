"""What a command prints: strict JSON, the human summary (meaningful digits), progress on stderr."""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Iterable

__all__ = ["Progress", "fmt", "fmt_bracket", "print_json", "print_summary", "strict"]


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
