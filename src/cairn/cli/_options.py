"""Options shared by several ``cairn`` commands, worded the same everywhere."""

from __future__ import annotations

import click

STORE_HELP = (
    "A SQLite file path or sqlite:/// URL (default .cairn/sessions.db), or a database "
    "URL such as postgresql+asyncpg://user@host/db or mysql+asyncmy://user@host/db."
)

store_option = click.option("--store", default=None, metavar="URL", help=STORE_HELP)
"""``--store URL``: the session store to read or write."""
