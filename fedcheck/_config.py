"""TOML configuration files of the CLI: one parser with errors that name ``section.field``."""

from __future__ import annotations

import math
from pathlib import Path

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from fedcheck._errors import ConfigError
from fedcheck._files import read_config_text

__all__ = ["ConfigError", "finite_or_none", "get", "load_table", "reals", "scalar", "strict_json"]


def get(table: dict, section: str, name: str, default):
    return table.get(section, {}).get(name, default)


def finite_or_none(value):
    """``float(value)`` when finite, else ``None`` (strict JSON has no NaN or Infinity)."""
    value = float(value)
    return value if math.isfinite(value) else None


def _strict(obj):
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _strict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_strict(v) for v in obj]
    if hasattr(obj, "tolist") and hasattr(obj, "dtype"):  # numpy scalars and arrays
        return _strict(obj.tolist())
    return obj


def strict_json(obj, **kwargs) -> str:
    """``json.dumps`` with ``allow_nan=False`` after mapping every non-finite float to ``None``.

    The caller records *why* a value is null in a status field next to it (diverged, infinite epsilon).
    """
    import json

    return json.dumps(_strict(obj), allow_nan=False, **kwargs)


def scalar(table, section, name, kind, default=None, *, check=None, allowed=""):
    value = get(table, section, name, default)
    if value is None:
        return None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        try:
            value = float(value)
        except OverflowError:
            raise ConfigError(f"{section}.{name} must be {allowed or 'a finite real'}, got {value!r}") from None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ConfigError(f"{section}.{name} must be {allowed or kind.__name__}, got {_short(value)}")
    if kind is float and not math.isfinite(value):
        raise ConfigError(f"{section}.{name} must be {allowed or 'a finite real'}, got {value!r}")
    if check is not None and not check(value):
        raise ConfigError(f"{section}.{name} must be {allowed}, got {_short(value)}")
    return value


def _short(value, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def reals(table, section, name, default, *, allowed="a list of reals"):
    value = get(table, section, name, default)
    if value is None:
        return None
    import numpy as np

    try:
        raw = np.asarray(value)
        arr = raw.astype(np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"{section}.{name} must be {allowed}, got {_short(value)}") from None
    if raw.dtype.kind not in "iuf" or arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ConfigError(f"{section}.{name} must be {allowed}, got {_short(value)}")
    return arr


def load_table(path: Path, sections: dict[str, set[str]]) -> dict:
    """Parse ``path``; every section and field must be one of ``sections`` (ConfigError otherwise)."""
    text = read_config_text(path, "CONFIG")  # regular, readable, bounded, UTF-8 (FileError otherwise)
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"CONFIG {str(path)!r} is not valid TOML: {' '.join(str(exc).split())}") from None
    for section, body in table.items():
        if section not in sections:
            raise ConfigError(f"{section} is not a section (allowed: {', '.join(sections)})")
        if not isinstance(body, dict):
            raise ConfigError(f"{section} must be a table [{section}], got {body!r}")
        unknown = set(body) - sections[section]
        if unknown:
            raise ConfigError(f"{section}.{sorted(unknown)[0]} is not a field "
                              f"(allowed: {', '.join(sorted(sections[section]))})")
    return table
