"""Input validation shared by the closed forms.

Every function raises :class:`ValueError` (or :class:`TypeError`) whose message names the
parameter, its value and the allowed range. Nothing is clamped.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["finite_array", "positive_int", "readonly", "real_scalar", "real_vector"]

_INTERVALS = {
    "[0, inf)": (0.0, math.inf, True, False),
    "(0, inf)": (0.0, math.inf, False, False),
    "[0, 1]": (0.0, 1.0, True, True),
    "[0, 1)": (0.0, 1.0, True, False),
    "(0, 1)": (0.0, 1.0, False, False),
    "(0, 1]": (0.0, 1.0, False, True),
    "(1, inf)": (1.0, math.inf, False, False),
    "(-inf, inf)": (-math.inf, math.inf, False, False),
}


def _inside(x: np.ndarray, interval: str) -> np.ndarray:
    lo, hi, lo_closed, hi_closed = _INTERVALS[interval]
    above = x >= lo if lo_closed else x > lo
    below = x <= hi if hi_closed else x < hi
    return above & below & np.isfinite(x)


def real_scalar(name: str, value: object, interval: str) -> float:
    """Return ``value`` as a float after checking it is a finite real in ``interval``.

    >>> real_scalar("eta", 2, "[0, inf)")
    2.0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} of type {type(value).__name__}")
    x = float(value)
    if not bool(_inside(np.asarray(x), interval)):
        raise ValueError(f"{name} must be a finite real in {interval}, got {value!r}")
    return x


def real_vector(name: str, values: object, interval: str, *, min_length: int = 1) -> np.ndarray:
    """Return ``values`` as a read-only 1-D float64 array whose entries all lie in ``interval``."""
    try:
        x = np.array(values, dtype=np.float64, ndmin=1)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a sequence of real numbers, got {values!r}") from exc
    if x.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {x.shape}")
    if x.size < min_length:
        raise ValueError(f"{name} must have at least {min_length} element(s), got {x.size}")
    bad = ~_inside(x, interval)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{i}] must be a finite real in {interval}, got {float(x[i])!r}")
    x.setflags(write=False)
    return x


def readonly(a, dtype=None) -> np.ndarray:
    """A read-only copy of ``a`` (as ``dtype`` if given): the arrays of frozen instances and results.

    >>> readonly([1, 2], dtype=float).flags.writeable
    False
    """
    out = np.array(a, dtype=dtype, copy=True)
    out.setflags(write=False)
    return out


def positive_int(name: str, value: object, minimum: int = 1) -> int:
    """Return ``value`` as an int after checking it is an integer (not a bool) >= ``minimum``.

    >>> positive_int("runs", 3)
    3
    """
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def finite_array(name: str, value: object, ndim_min: int = 0) -> np.ndarray:
    """A float64 copy of ``value`` with at least ``ndim_min`` dimensions and only finite entries.

    TypeError when it is not an array of real numbers, ValueError naming ``name`` otherwise.

    >>> finite_array("x", [[1, 2]], 2).shape
    (1, 2)
    """
    try:
        x = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of real numbers, got {value!r}") from exc
    if x.ndim < ndim_min:
        raise ValueError(f"{name} must have at least {ndim_min} dimension(s), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite, got a non-finite entry")
    return x
