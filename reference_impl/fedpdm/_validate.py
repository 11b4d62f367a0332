"""Input validation of the FedPDM-DP reference package: each raises ValueError naming the field, its value and the
range."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["check_choice", "check_int", "check_real", "readonly_array"]

def readonly_array(a, dtype=np.float64) -> np.ndarray:
    """``a`` as a read-only ``dtype`` array: ``a`` itself when nothing can write to it (it and every array it views
    are read-only, e.g. a reshape of another instance's data), else a read-only copy."""
    if isinstance(a, np.ndarray) and a.dtype == dtype and _frozen(a):
        return a
    a = np.array(a, dtype=dtype, copy=True)
    a.setflags(write=False)
    return a


def _frozen(a: np.ndarray) -> bool:
    while isinstance(a, np.ndarray):
        if a.flags.writeable:
            return False
        a = a.base
    return a is None


def check_int(name, value, lower, upper=None) -> int:
    """``value`` as an int in ``[lower, upper]`` (``upper`` None: no upper limit), else ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lower or (
            upper is not None and value > upper):
        rng = f"[{lower}, {upper}]" if upper is not None else f">= {lower}"
        raise ValueError(f"{name} must be an integer {rng}, got {value!r}")
    return int(value)


def check_real(name, value, lower=-math.inf, upper=math.inf, *, lower_open=False, upper_open=False) -> float:
    """``value`` as a finite float in the interval, else ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    ok = math.isfinite(v) and (v > lower if lower_open else v >= lower) and (v < upper if upper_open else v <= upper)
    if not ok:
        lb, ub = "(" if lower_open else "[", ")" if upper_open else "]"
        raise ValueError(f"{name} must be a finite real in {lb}{lower}, {upper}{ub}, got {value!r}")
    return v


def check_choice(name, value, allowed) -> str:
    """``value`` if it is one of ``allowed``, else ValueError naming ``name``."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value

