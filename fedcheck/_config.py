"""TOML configuration files of the CLI: one parser with errors that name ``section.field``."""

from __future__ import annotations

import math
from pathlib import Path

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["ConfigError", "get", "load_table", "reals", "scalar"]


class ConfigError(ValueError):
    """A bad configuration field; the message names it as ``section.field``."""


def get(table: dict, section: str, name: str, default):
    return table.get(section, {}).get(name, default)


def scalar(table, section, name, kind, default=None, *, check=None, allowed=""):
    value = get(table, section, name, default)
    if value is None:
        return None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ConfigError(f"{section}.{name} must be {allowed or kind.__name__}, got {value!r}")
    if kind is float and not math.isfinite(value):
        raise ConfigError(f"{section}.{name} must be {allowed or 'a finite real'}, got {value!r}")
    if check is not None and not check(value):
        raise ConfigError(f"{section}.{name} must be {allowed}, got {value!r}")
    return value


def reals(table, section, name, default, *, allowed="a list of reals"):
    value = get(table, section, name, default)
    if value is None:
        return None
    import numpy as np

    try:
        raw = np.asarray(value)
        arr = raw.astype(np.float64)
    except (TypeError, ValueError):
        raise ConfigError(f"{section}.{name} must be {allowed}, got {value!r}") from None
    if raw.dtype.kind not in "iuf" or arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ConfigError(f"{section}.{name} must be {allowed}, got {value!r}")
    return arr


def load_table(path: Path, sections: dict[str, set[str]]) -> dict:
    """Parse ``path``; every section and field must be one of ``sections`` (ConfigError otherwise)."""
    try:
        table = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (FileNotFoundError, IsADirectoryError):
        raise ConfigError(f"CONFIG must be an existing TOML file, got {str(path)!r}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"CONFIG is not valid TOML: {exc}") from None
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
