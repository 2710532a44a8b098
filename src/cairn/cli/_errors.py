"""Exit codes of the ``cairn`` commands, and the errors that end a command with one."""

from __future__ import annotations

from cairn.errors import CairnError, StoreDamagedError

EXIT_OK = 0
EXIT_NOT_FOUND = 1
"""A file, app (``root_agent``/``app``) or session that was named does not exist."""
EXIT_ERROR = 2
"""cairn refused to act: bad input or options, or the store refused (any ``CairnError``)."""
EXIT_AGENT_FAILED = 3
"""``cairn run --replay``: an exception escaped the agent (a bug in its code)."""
EXIT_INCONSISTENT = 4
"""``cairn verify``: stored state differs from the fold of the log somewhere."""
EXIT_DAMAGED = 5
"""The SQLite store file is damaged (truncated, overwritten, or not a SQLite database)."""
EXIT_STOPPED = 130
"""Stopped with Ctrl-C."""


def refused_code(error: CairnError) -> int:
    """The exit code of a store or input refusal: ``EXIT_DAMAGED`` for a damaged store file,
    else ``EXIT_ERROR``."""
    return EXIT_DAMAGED if isinstance(error, StoreDamagedError) else EXIT_ERROR


class CommandError(Exception):
    """Ends a command: the message goes to stderr and the process exits with ``exit_code``."""

    exit_code = EXIT_ERROR


class NotFoundError(CommandError):
    """Something the command line named (file, app, session) does not exist."""

    exit_code = EXIT_NOT_FOUND
