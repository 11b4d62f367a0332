"""Strict JSON for every command (non-finite values as null; the caller's status says why)."""

from __future__ import annotations

from fedcheck._errors import ConfigError

__all__ = ["ConfigError", "strict_json"]


def strict_json(obj, **kwargs) -> str:
    """``json.dumps`` with ``allow_nan=False`` after mapping every non-finite float to ``None``."""
    import json

    from fedcheck.run._output import strict

    return json.dumps(strict(obj), allow_nan=False, **kwargs)
