"""The ``cairn`` command line: one module per command."""

from __future__ import annotations

import click

from cairn import __version__
from cairn.cli.create import create
from cairn.cli.info import info
from cairn.cli.migrate import migrate
from cairn.cli.run import run
from cairn.cli.serve import api_server, web
from cairn.cli.sessions import sessions
from cairn.cli.verify import verify


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cairn")
def main() -> None:
    """cairn: agents whose execution is an append-only event log."""


main.add_command(create)
main.add_command(info)
main.add_command(migrate)
main.add_command(run)
main.add_command(sessions)
main.add_command(api_server)
main.add_command(web)
main.add_command(verify)

__all__ = ["main"]
