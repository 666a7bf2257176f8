"""CLI conventions: every default in --help, no empty help, -v/-q, read-only commands."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from hindcast.cli.main import app

RUNNER = CliRunner()


def _commands(command, path=()):
    """(path, click command) of every command and sub-command of the real tree."""
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


def _flat(text: str) -> str:
    """Whitespace as one space, and a line break after a hyphen (click wraps there) undone."""
    return re.sub(r"\s+", " ", re.sub(r"-\s+", "-", text))


def _shows_default(param) -> bool:
    default = param.default
    return not (param.hidden or default is None or default is False or param.name == "help"
                or getattr(param, "is_eager", False) and param.name in {"install_completion", "show_completion"})


@pytest.mark.parametrize("path, command", COMMANDS, ids=[" ".join(p) or "hindcast" for p, _ in COMMANDS])
def test_help_shows_every_default_and_no_empty_help(path, command):
    result = RUNNER.invoke(app, [*path, "--help"], prog_name="hindcast")
    assert result.exit_code == 0, result.output
    printed = _flat(result.output)
    assert (command.help or command.short_help or "").strip(), f"{path}: the command has no help"
    for param in command.params:
        if param.hidden or param.name == "help":
            continue
        record = param.get_help_record(typer.Context(command)) if param.param_type_name == "option" else None
        help_text = getattr(param, "help", None)
        assert help_text and help_text.strip(), f"{' '.join(path)} {param.name}: empty help"
        if record is None:
            continue
        assert _flat(record[1]) in printed, f"{' '.join(path)} {param.opts}: help not printed as is"
        if _shows_default(param):
            assert "[default:" in record[1], f"{' '.join(path)} {param.opts}: default {param.default!r} not shown"
