"""Former module of ``fedcheck run paofed``: kept for callers outside ``fedcheck/``; use
:mod:`fedcheck.run.paofed` and :func:`fedcheck.msd.load_instance`."""

from pathlib import Path

__all__ = ["_instance", "_load_table"]


def _load_table(path):
    """The TOML document at ``path`` (guarded reader)."""
    from fedcheck.run import read_table

    return read_table(Path(path))


def _instance(table, base_dir=Path(".")):
    """The analysis instance of ``table["instance"]`` (as ``fedcheck msd`` reads it)."""
    from fedcheck.run import Schema
    from fedcheck.run import paofed as plugin

    values = Schema(sections=(plugin.INSTANCE,)).parse({"instance": table.get("instance", {})})
    values.base_dir = Path(base_dir)
    return plugin.build_instance(plugin.instance_spec(values))
