"""Options shared by several ``cairn`` commands, worded the same everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

F = TypeVar("F", bound=Callable[..., object])

STORE_HELP = (
    "A SQLite file path or sqlite:/// URL (default .cairn/sessions.db), or a database "
    "URL such as postgresql+asyncpg://user@host/db or mysql+asyncmy://user@host/db."
)

store_option = click.option("--store", default=None, metavar="URL", help=STORE_HELP)
"""``--store URL``: the session store to read or write."""

LEASE_TTL_HELP = (
    "Seconds a session stays locked after its invocation's process stops renewing its lease "
    "(default 30). A holder on this host whose process exited is replaced at once; this bounds "
    "the wait for one on another host, and must exceed the longest pause of an event loop."
)
LEASE_TTL = click.FloatRange(min=0, min_open=True)
"""``--lease-ttl SECONDS``: a positive number."""


def selection_options(command: F) -> F:
    """``--app``, ``--user`` (needs ``--app``), ``--session`` (needs both): which sessions."""
    for option in reversed(
        [
            click.option("--app", "app_name", default=None, help="Only this app's sessions."),
            click.option("--user", "user_id", default=None, help="Only this user's (needs --app)."),
            click.option(
                "--session",
                "session_id",
                default=None,
                help="Only this session (needs --app, --user).",
            ),
        ]
    ):
        command = option(command)
    return command


def check_selection(app_name: str | None, user_id: str | None, session_id: str | None) -> None:
    """Refuse ``--user`` without ``--app`` and ``--session`` without both (a usage error)."""
    if user_id is not None and app_name is None:
        raise click.UsageError("--user needs --app")
    if session_id is not None and (app_name is None or user_id is None):
        raise click.UsageError("--session needs --app and --user")
