"""``cairn verify``: check that every session's state equals the fold of its log."""

from __future__ import annotations

import asyncio
import json
import sys

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cairn.cli._errors import EXIT_INCONSISTENT, EXIT_NOT_FOUND, refused_code
from cairn.cli._options import check_selection, selection_options, store_option
from cairn.errors import CairnError, SessionNotFoundError
from cairn.sessions.factory import session_service_from_url
from cairn.sessions.verify import VerifyReport, verify_store


@click.command()
@store_option
@selection_options
@click.option(
    "--json", "as_json", is_flag=True, help="Print each difference as a JSON line (for scripts)."
)
def verify(
    store: str | None,
    app_name: str | None,
    user_id: str | None,
    session_id: str | None,
    as_json: bool,
) -> None:
    """Check that stored state equals the fold of the log, and report each difference.

    Each session's own state must be its initial state with every event's
    changes applied in order (rewinds and forks included). When all of a
    user's sessions are checked, every stored ``user:`` value must have been
    written by one of them; likewise ``app:`` values for a whole app.

    \b
    Examples:
      cairn verify
      cairn verify --store postgresql+asyncpg://me@db/cairn --app shop
      cairn verify --app shop --user ann --session 5f0c1e9a --json

    \b
    Exit codes:
      0  consistent
      1  the named session does not exist
      2  refused: the store could not be read, or the options are wrong
      4  differences found
      5  the SQLite store file is damaged
    """
    check_selection(app_name, user_id, session_id)
    console = Console(stderr=True)

    async def run() -> VerifyReport:
        service = session_service_from_url(store)
        try:
            with Progress(
                TextColumn("verifying"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
                disable=as_json or not console.is_terminal,
            ) as progress:
                task = progress.add_task("sessions", total=None)

                def advance(done: int, total: int) -> None:
                    progress.update(task, completed=done, total=total)

                return await verify_store(
                    service,
                    app_name=app_name,
                    user_id=user_id,
                    session_id=session_id,
                    on_session=advance,
                )
        finally:
            await service.close()

    try:
        report = asyncio.run(run())
    except SessionNotFoundError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_NOT_FOUND)
    except CairnError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(refused_code(exc))
    if as_json:
        for difference in report.differences:
            click.echo(
                json.dumps(
                    {
                        "app": difference.app_name,
                        "user": difference.user_id,
                        "session": difference.session_id,
                        "scope": difference.scope,
                        "key": difference.key,
                        "kind": difference.kind,
                        "stored": difference.stored,
                        "expected": difference.expected,
                    }
                )
            )
    else:
        for difference in report.differences:
            click.echo(difference.describe())
        checked = f"{report.sessions_checked} session(s)"
        if report.users_checked:
            checked += f", the shared state of {report.users_checked} user(s)"
        if report.apps_checked:
            checked += f" and {report.apps_checked} app(s)"
        verdict = (
            "state equals the fold of the log"
            if report.ok
            else f"{len(report.differences)} difference(s)"
        )
        click.echo(f"checked {checked}: {verdict}.")
    if not report.ok:
        sys.exit(EXIT_INCONSISTENT)
