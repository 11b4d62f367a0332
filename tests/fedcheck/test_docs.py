"""The reference docs cannot drift: docs/configuration.md is regenerated from the plug-ins' declarations and must
equal the file; docs/commands.md names every command, option and exit status the parser has."""

from __future__ import annotations

from pathlib import Path

import pytest

from fedcheck.run import PLUGINS, plugin
from fedcheck.run._docs import configuration_markdown

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_configuration_md_is_generated_from_the_declarations():
    assert (DOCS / "configuration.md").read_text() == configuration_markdown(), (
        "docs/configuration.md is stale: run `python -m fedcheck.run._docs > docs/configuration.md`")


@pytest.mark.parametrize("name", sorted(PLUGINS))
def test_every_field_is_documented_with_its_range(name):
    text = configuration_markdown()
    for key in plugin(name).SCHEMA.keys():
        assert f"| `{key}`" in text, key


@pytest.mark.parametrize("name", sorted(PLUGINS))
def test_commands_md_names_every_run_command_and_option(name):
    text = (DOCS / "commands.md").read_text()
    assert f"`run {name}`" in text
    for opt in plugin(name).OPTIONS:
        assert opt.flag in text, opt.flag


def test_commands_md_documents_every_command_and_exit_status():
    from fedcheck.cli import _build_parser

    text = (DOCS / "commands.md").read_text()
    sub = next(a for a in _build_parser()._actions if getattr(a, "choices", None) and "report" in a.choices)
    for command, parser in sub.choices.items():
        assert f"fedcheck {command}" in text, command
        for action in parser._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag != "--help":
                    assert flag in text, (command, flag)
    for status in ("| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 130 |", "| 141 |"):
        assert status in text


def test_commands_md_documents_every_privacy_option():
    from fedcheck.cli import _build_parser

    text = (DOCS / "commands.md").read_text()
    sub = next(a for a in _build_parser()._actions if getattr(a, "choices", None) and "privacy" in a.choices)
    actions = next(a for a in sub.choices["privacy"]._actions if getattr(a, "choices", None))
    for name, parser in actions.choices.items():
        assert f"fedcheck privacy {name}" in text or f"`{name} " in text, name
        for action in parser._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag != "--help":
                    assert flag in text, (name, flag)
