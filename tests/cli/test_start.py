"""``cairn --help`` imports no command's module: each is imported when that command runs."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import click
import click.testing
import pytest
from tests.support.waiting import BOUND_SECONDS

from cairn.cli import COMMANDS, main
from cairn.cli._lazy_group import LazyCommand, LazyGroup

SHOW_MODULES = """
import json, sys
from cairn.cli import main
try:
    main(sys.argv[1:], prog_name="cairn")
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def modules_after(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", SHOW_MODULES, *args],
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
        check=True,
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_help_imports_no_command_module() -> None:
    loaded = modules_after("--help")
    commands = {lazy.target.partition(":")[0] for lazy in COMMANDS.values()}
    heavy = {"cairn.runners", "cairn.server", "cairn.sessions", "cairn.agents", "cairn.events"}
    heavy |= {"sqlalchemy", "fastapi", "starlette", "uvicorn", "google.genai", "httpx"}
    assert loaded & (commands | heavy) == set()


def test_a_command_is_imported_when_it_runs() -> None:
    loaded = modules_after("info")
    assert "cairn.cli.info" in loaded
    assert "cairn.cli.run" not in loaded and "cairn.cli.serve" not in loaded


def test_version_needs_no_command() -> None:
    assert "cairn.cli.run" not in modules_after("--version")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_summary_is_the_first_paragraph_of_its_help(name: str) -> None:
    command = COMMANDS[name].load()
    assert inspect.cleandoc(command.help or "").split("\n\n")[0] == COMMANDS[name].summary


@pytest.mark.parametrize("width", [50, 80, 120])
def test_help_lists_commands_as_click_does_from_the_commands(width: int) -> None:
    fresh = LazyGroup("cairn", lazy_commands=COMMANDS)
    lazy = click.HelpFormatter(width=width)
    fresh.format_commands(click.Context(fresh, info_name="cairn"), lazy)
    loaded = click.Group("cairn", commands={name: c.load() for name, c in COMMANDS.items()})
    eager = click.HelpFormatter(width=width)
    loaded.format_commands(click.Context(loaded, info_name="cairn"), eager)
    assert lazy.getvalue() == eager.getvalue()
    assert "api-server" in lazy.getvalue() and "Talk to the agent" in lazy.getvalue()


def test_unknown_command_is_refused() -> None:
    result = click.testing.CliRunner().invoke(main, ["nope"])
    assert result.exit_code == 2
    assert "No such command 'nope'" in result.output


def test_a_target_that_is_not_a_command_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"cairn\.version:__version__ is not a click command"):
        LazyCommand("cairn.version:__version__", "The version.").load()
