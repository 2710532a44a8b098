"""``cairn info``: the installed version and the everyday imports."""

from __future__ import annotations

import click

from cairn import __version__


@click.command()
def info() -> None:
    """Show the installed version and the everyday imports.

    \b
    Examples:
      cairn info
      cairn --version
    """
    click.echo(f"cairn {__version__}")
    click.echo("from cairn import Runner, InMemoryRunner, App, BaseAgent, Event, Context")
