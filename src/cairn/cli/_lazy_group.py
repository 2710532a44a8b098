"""A command group that imports a command's module only when that command runs.

``cairn --help`` lists every command from a one-line summary kept beside its import path,
so it imports none of them (``cairn run`` needs the runners, ``cairn web`` the server).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import click


@dataclass(frozen=True)
class LazyCommand:
    """Where a command lives (``module:attribute``) and the first paragraph of its help."""

    target: str
    summary: str

    def load(self) -> click.Command:
        module, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command (got {type(command).__name__})")
        return command


class LazyGroup(click.Group):
    """A ``click.Group`` whose commands are imported by name when first needed."""

    def __init__(self, *args: Any, lazy_commands: dict[str, LazyCommand], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        lazy = self.lazy_commands.get(cmd_name)
        if lazy is not None and cmd_name not in self.commands:
            self.add_command(lazy.load(), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands' list from the summaries, as click writes it from loaded commands."""
        rows: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            lazy = self.lazy_commands.get(name)
            if name in self.commands or lazy is None:
                command = self.get_command(ctx, name)
            else:
                command = click.Command(name, help=lazy.summary)
            if command is not None and not command.hidden:
                rows.append((name, command))
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])
