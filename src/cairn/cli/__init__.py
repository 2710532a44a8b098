"""The ``cairn`` command line: one module per command."""

from __future__ import annotations

import click

from cairn import __version__
from cairn.cli.create import create
from cairn.cli.eval import eval_group
from cairn.cli.eval_set import eval_set
from cairn.cli.info import info
from cairn.cli.migrate import migrate
from cairn.cli.run import run
from cairn.cli.serve import api_server, web
from cairn.cli.sessions import sessions
from cairn.cli.verify import verify


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cairn")
def main() -> None:
    """cairn: agents whose execution is an append-only event log.

    \b
    Examples:
      cairn create weather_bot              a new agent project, with a test
      cairn run weather_bot                 talk to it in the terminal
      cairn web .                           the dev web UI (and the HTTP API)
      cairn api-server . --workers 4        the HTTP API
      cairn sessions list                   the sessions of .cairn/sessions.db
      cairn sessions export -o all.jsonl    every session, to move or back up
      cairn verify                          state equals the fold of the log?
      cairn eval weather weather.evalset.json  run an eval set (exit 1 if a case fails)

    \b
    Exit codes (every command):
      0  done
      1  not found: a file, agent or session that was named; cairn eval: a case failed
      2  refused: bad options or input, or the store refused
      3  cairn run --replay: an exception escaped the agent
      4  cairn verify: state differs from the fold of the log
      5  the SQLite store file is damaged (restore it from a backup)
      130  stopped with Ctrl-C

    Each command's --help has its options and examples; docs/cli.md has more.
    """


main.add_command(create)
main.add_command(eval_group)
main.add_command(eval_set)
main.add_command(info)
main.add_command(migrate)
main.add_command(run)
main.add_command(sessions)
main.add_command(api_server)
main.add_command(web)
main.add_command(verify)

__all__ = ["main"]
