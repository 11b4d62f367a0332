"""The errors of the CLI: a bad input (exit 2) and a valid input whose solver did not converge (exit 3)."""

__all__ = ["ConfigError", "NotConverged"]


class ConfigError(ValueError):
    """A bad configuration field, option or file; the message names it (``section.field``, ``argument --runs``)."""


class NotConverged(ArithmeticError):
    """The input is valid but a solver stopped at its iteration cap without converging (exit status 3)."""
