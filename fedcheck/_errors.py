"""The error every bad configuration field or input file raises (one line naming it; exit 2 on the CLI)."""

__all__ = ["ConfigError"]


class ConfigError(ValueError):
    """A bad configuration field; the message names it as ``section.field``."""
