"""gtv (``docs/papers/gtv.md``) on a user's instance: the claims that can be evaluated on one configuration.

Parts of the :class:`~verify.instance.UserInstance`: ``setup`` (the run layer's loaded set-up, read only).
"""

from __future__ import annotations

from verify.instance._common import default_reason

__all__ = ["EVALUATORS", "not_evaluable"]

EVALUATORS: dict = {}
_REASONS: dict[str, str] = {}


def not_evaluable(claim, user) -> str:
    """Why ``claim`` is not evaluated on ``user``."""
    return default_reason(claim, _REASONS)
