"""The ``cairn`` command line."""

from __future__ import annotations

import click

from cairn import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cairn")
def main() -> None:
    """cairn: agents whose execution is an append-only event log."""


@main.command()
def info() -> None:
    """Show the installed version and the everyday imports."""
    click.echo(f"cairn {__version__}")
    click.echo("from cairn import Runner, InMemoryRunner, App, BaseAgent, Event, Context")
