"""``docs/configuration.md``, generated from the plug-ins' field declarations (so the field docs cannot drift).

Regenerate with ``python -m fedcheck.run._docs > docs/configuration.md``; ``tests/fedcheck/test_docs.py`` fails
when the file is stale.
"""

from __future__ import annotations

from fedcheck.run import PLUGINS, plugin
from fedcheck.run._schema import Field, Section

__all__ = ["configuration_markdown"]

HEADER = """# Configuration reference

Every field of every `fedcheck run` configuration, generated from the plug-ins' declarations
(`fedcheck/run/<slug>.py`) by `python -m fedcheck.run._docs > docs/configuration.md`; do not edit it by hand.
The commands, their options and JSON keys are in [commands.md](commands.md); the papers behind the fields in
`docs/papers/<slug>.md`.

A configuration is a TOML file of the sections below. Every section and field is optional unless marked
*required*. A field that is not listed, of the wrong type (booleans are not numbers), not finite, outside its range,
or given where it does not apply ("applies when") ends the command with exit status 2 and one line naming it, e.g.
`fedcheck run zcdp-nfl: error: privacy.phi1 does not apply here (it applies only when privacy.schedule = 'S2')`.
A command-line option that overrides a field is listed with it. Paths are relative to the configuration file.
"""


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _default(f: Field) -> str:
    if f.required is True:
        return "*required*"
    if callable(f.required):
        return "*required* (see meaning)" if f.default is None else "see meaning"
    if callable(f.default):
        return "depends on other fields"
    if f.default is None:
        return "not set"
    if isinstance(f.default, bool):
        return "`true`" if f.default else "`false`"
    if isinstance(f.default, str):
        return f"`\"{f.default}\"`"
    if isinstance(f.default, dict):
        return "`{}`"
    return f"`{f.default!r}`"


def _rows(section: Section, fields, prefix: str = "") -> list[str]:
    out = []
    for f in fields:
        key = f"{prefix}{f.name}"
        option = f" (option `{f.option}`)" if f.option else ""
        out.append(f"| `{key}`{option} | {_cell(f.allowed())} | {_cell(_default(f))} | {_cell(f.when or 'always')} "
                   f"| {_cell(f.doc)} |")
        if f.kind == "tables":
            out += _rows(section, f.sub, prefix=f"{key}[i].")
    return out


def configuration_markdown() -> str:
    """The text of ``docs/configuration.md``."""
    lines = [HEADER]
    for name in PLUGINS:
        mod = plugin(name)
        lines.append(f"## `fedcheck run {name}`\n")
        lines.append(f"{mod.TITLE}. Example: `fedcheck/examples/{mod.__name__.rsplit('.', 1)[1]}*.toml`.\n")
        opts = [f"`{o.flag}`" + (f" (overrides `{o.field}`)" if o.field else f" (default {o.default})")
                for o in mod.OPTIONS]
        lines.append("Options: " + ", ".join(opts) + ", `--json`, `--quiet`.\n")
        for section in mod.SCHEMA.sections:
            when = f" Applies only when {section.when}." if section.when else ""
            lines.append(f"### `[{section.name}]`\n\n{section.doc}{when}\n")
            lines.append("| field | type and range | default | applies when | meaning |")
            lines.append("|---|---|---|---|---|")
            lines += _rows(section, section.fields, prefix=f"{section.name}.")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover - the generator's command line
    import sys

    sys.stdout.write(configuration_markdown())
