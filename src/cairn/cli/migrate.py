"""``cairn migrate``: create or upgrade a session store's schema, and say what was done."""

from __future__ import annotations

import asyncio
import sys

import click
from rich.console import Console

from cairn.cli._errors import refused_code
from cairn.cli._options import store_option
from cairn.errors import CairnError
from cairn.sessions.factory import session_service_from_url
from cairn.sessions.sql.migrate import MigrationReport
from cairn.sessions.sql.store import SqlSessionStore


@click.command()
@store_option
def migrate(store: str | None) -> None:
    """Create or upgrade a session store's schema in place, and say what was done.

    Stores also migrate themselves when first opened; this command does it
    explicitly (e.g. before rolling out a new version). Safe to run while
    other processes use the store.

    \b
    Examples:
      cairn migrate
      cairn migrate --store postgresql+asyncpg://me@db/cairn

    \b
    Exit codes:
      0  the schema is current (migrated, or nothing to do)
      2  refused: the store could not be migrated, or it is memory://
      5  the SQLite store file is damaged
    """
    errors = Console(stderr=True)

    async def run() -> MigrationReport:
        service = session_service_from_url(store)
        if not isinstance(service, SqlSessionStore):
            raise click.UsageError("the in-memory store has no schema to migrate")
        try:
            if not errors.is_terminal:
                return await service.migrate()  # type: ignore[attr-defined, no-any-return]
            with errors.status("migrating the schema…"):
                return await service.migrate()  # type: ignore[attr-defined, no-any-return]
        finally:
            await service.close()

    try:
        report = asyncio.run(run())
    except CairnError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(refused_code(exc))
    where = store or ".cairn/sessions.db"
    if not report.applied:
        click.echo(f"{where}: schema is current (revision {report.to_revision}); nothing to do.")
        return
    start = report.from_revision or "empty database"
    click.echo(f"{where}: migrated from {start} to revision {report.to_revision}.")
    for revision in report.applied:
        click.echo(f"  applied {revision}")
