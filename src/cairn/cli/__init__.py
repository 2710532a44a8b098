"""The ``cairn`` command line: one module per command."""

from __future__ import annotations

import click

from cairn.cli._lazy_group import LazyCommand, LazyGroup
from cairn.version import __version__

# Each command's module is imported when that command runs; `cairn --help` shows these
# summaries (the first paragraph of each command's help; tests/cli checks they agree).
COMMANDS = {
    "api-server": LazyCommand(
        "cairn.cli.serve:api_server",
        "Serve the agents under PATH over HTTP: ADK's api_server routes and cairn's own.",
    ),
    "create": LazyCommand(
        "cairn.cli.create:create",
        "Create an agent project NAME: an agent with one tool, and a test that needs no API key.",
    ),
    "eval": LazyCommand(
        "cairn.cli.eval:eval_group",
        "Evaluate an agent on eval sets (ADK's *.evalset.json and *.test.json files).",
    ),
    "eval_set": LazyCommand(
        "cairn.cli.eval_set:eval_set",
        "Make eval sets, saved as AGENT_DIR/<EVAL_SET_ID>.evalset.json (as ADK saves them).",
    ),
    "info": LazyCommand(
        "cairn.cli.info:info", "Show the installed version and the everyday imports."
    ),
    "migrate": LazyCommand(
        "cairn.cli.migrate:migrate",
        "Create or upgrade a session store's schema in place, and say what was done.",
    ),
    "run": LazyCommand(
        "cairn.cli.run:run", "Talk to the agent or workflow defined in PATH, in this terminal."
    ),
    "runs": LazyCommand(
        "cairn.cli.runs:runs",
        "List, show and cancel the runs of a session (its invocations with a lifecycle).",
    ),
    "sessions": LazyCommand(
        "cairn.cli.sessions:sessions", "List, show, export and import the sessions of a store."
    ),
    "verify": LazyCommand(
        "cairn.cli.verify:verify",
        "Check that stored state equals the fold of the log, and report each difference.",
    ),
    "worker": LazyCommand(
        "cairn.cli.worker:worker",
        "Execute runs on Temporal for the agents under AGENTS_DIR (a worker process).",
    ),
    "web": LazyCommand(
        "cairn.cli.serve:web",
        "Serve the agents under PATH with the dev web UI at / (and the HTTP API).",
    ),
}


@click.group(
    cls=LazyGroup,
    lazy_commands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
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


__all__ = ["COMMANDS", "main"]
