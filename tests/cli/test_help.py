"""Every command has ``--help`` (and ``-h``) with examples and its exit codes."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from cairn.cli import main


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None, name
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found += _commands(command, (*prefix, name))
    return found


COMMANDS = _commands(main)


def test_every_command_is_listed() -> None:
    top = {path[0] for path in COMMANDS}
    assert top == {
        "api-server",
        "create",
        "eval",
        "eval_set",
        "info",
        "migrate",
        "run",
        "runs",
        "sessions",
        "verify",
        "web",
        "worker",
    }
    assert {path[1:] for path in COMMANDS if path[0] == "sessions" and len(path) == 2} == {
        ("list",),
        ("show",),
        ("export",),
        ("import",),
    }
    assert {path[1] for path in COMMANDS if path[0] == "runs" and len(path) == 2} == {
        "list",
        "show",
        "cancel",
    }
    assert {path[1] for path in COMMANDS if path[0] == "eval" and len(path) == 2} == {
        "run",
        "create",
    }


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_has_examples(path: tuple[str, ...], flag: str) -> None:
    result = CliRunner().invoke(main, [*path, flag])
    assert result.exit_code == 0, result.output
    assert "Examples:" in result.output
    assert f"cairn {path[0]}" in result.output or path[0] == "info"


@pytest.mark.parametrize("name", sorted({p[0] for p in COMMANDS} - {"info"}))
def test_help_lists_exit_codes(name: str) -> None:
    result = CliRunner().invoke(main, [name, "--help"])
    assert "Exit codes" in result.output
