"""``cairn runs``: list, show and cancel the runs of a session in a store."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from cairn.cli._errors import NotFoundError
from cairn.cli._options import store_option
from cairn.cli._session_views import local_time
from cairn.cli.sessions import _execute, _owner, _resolve_app, _store
from cairn.errors import RunNotFoundError
from cairn.runners.runner import Runner
from cairn.runs.in_process import InProcessExecutor
from cairn.runs.service import Runs
from cairn.runs.view import run_json
from cairn.sessions.run_store import MAX_RUNS_PER_READ, RunStatus, StoredRun, run_store_for

STATUS_STYLE = {
    RunStatus.PENDING: "dim",
    RunStatus.RUNNING: "blue",
    RunStatus.PAUSED: "yellow",
    RunStatus.DONE: "green",
    RunStatus.FAILED: "red",
    RunStatus.CANCELLED: "magenta",
}


@click.group()
def runs() -> None:
    """List, show and cancel the runs of a session (its invocations with a lifecycle).

    \b
    Examples:
      cairn runs list 5f0c1e9a --app shop --user ann
      cairn runs list --app shop --user ann --status running --status pending
      cairn runs show 5f0c1e9a e-3b1d0c9a --app shop
      cairn runs cancel 5f0c1e9a e-3b1d0c9a --app shop --wait

    \b
    Exit codes:
      0  done
      1  not found: the session or the run
      2  refused: bad options, or the store refused (a cairn error)
    """


async def _no_runner(app_name: str) -> Runner:
    raise RuntimeError(f"cairn runs executes no run (asked for app {app_name!r})")


@asynccontextmanager
async def _runs(store: str | None) -> AsyncIterator[Runs]:
    """The runs of the store. Nothing executes here: cancelling a running run marks it and
    takes the session's lease from its invocation, which stops at its next event."""
    async with _store(store) as service:
        rows = run_store_for(service)
        yield Runs(rows, service, InProcessExecutor(rows, service, _no_runner), _no_runner)


async def _where(
    runs: Runs, app_name: str | None, user_id: str | None, session_id: str
) -> tuple[str, str]:
    """(app, user) of the session: the store's only app and the session's owner by default."""
    app = await _resolve_app(runs.sessions, app_name)
    if app is None:
        raise NotFoundError(f"session {session_id!r} does not exist: the store is empty")
    return app, user_id or await _owner(runs.sessions, app, session_id)


def _waited(run: StoredRun) -> str:
    if run.started_at is None:
        return ""
    return f"{max(0.0, run.started_at - run.created_at):.1f}s"


def _error_text(run: StoredRun) -> str:
    if not run.error:
        return ""
    return f"{run.error.get('type', 'error')}: {run.error.get('message', '')}"


app_option = click.option(
    "--app", "app_name", default=None, help="The app (default: the store's only one)."
)
user_option = click.option(
    "--user", "user_id", default=None, help="The user (default: whoever has the session)."
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON (for scripts).")


# -- list ---------------------------------------------------------------------------------------
@runs.command("list")
@click.argument("session_id", required=False)
@store_option
@app_option
@user_option
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice([s.value for s in RunStatus]),
    help="Only runs in this status (repeat for several).",
)
@click.option(
    "--limit",
    type=click.IntRange(1, MAX_RUNS_PER_READ),
    default=50,
    show_default=True,
    help="Runs per page.",
)
@click.option("--cursor", default=None, help="Show the page after this one (printed at the end).")
@json_option
def list_(
    session_id: str | None,
    store: str | None,
    app_name: str | None,
    user_id: str | None,
    statuses: tuple[str, ...],
    limit: int,
    cursor: str | None,
    as_json: bool,
) -> None:
    """List a session's runs (or, with --user and no session, the user's), newest first.

    Each run shows its status, strategy, when it was created, started and ended, how long
    it waited for its turn, and how it failed.

    \b
    Examples:
      cairn runs list 5f0c1e9a --app shop
      cairn runs list --app shop --user ann --status running --status pending
      cairn runs list 5f0c1e9a --json | jq -r '.runs[].runId'
    """
    console = Console(highlight=False, soft_wrap=True)

    async def work() -> None:
        async with _runs(store) as runs:
            if session_id is None:
                if user_id is None:
                    raise click.UsageError("name a SESSION_ID, or a user with --user")
                app = await _resolve_app(runs.sessions, app_name)
                if app is None:
                    raise NotFoundError("the store is empty: it has no runs")
                user = user_id
            else:
                app, user = await _where(runs, app_name, user_id, session_id)
            wanted = [RunStatus(s) for s in statuses] or None
            page = await runs.list(
                app, user, session_id, statuses=wanted, limit=limit, cursor=cursor
            )
        if as_json:
            listing = {"runs": [run_json(r) for r in page.runs], "nextCursor": page.next_cursor}
            click.echo(json.dumps(listing, ensure_ascii=False))
            return
        where = f"session {session_id!r}" if session_id else f"user {user!r}"
        table = Table(title=f"app {app!r}, {where}: {len(page.runs)} run(s)", title_justify="left")
        columns = ["run", "status", "strategy", "created", "started", "ended", "waited", "error"]
        if session_id is None:
            columns.insert(1, "session")
        for column in columns:
            table.add_column(column)
        for run in page.runs:
            cells: list[Text | str] = [
                Text(run.run_id),
                Text(run.status.value, style=STATUS_STYLE[run.status]),
                run.strategy,
                local_time(run.created_at),
                local_time(run.started_at or 0),
                local_time(run.ended_at or 0),
                _waited(run),
                Text(_error_text(run), style="red"),
            ]
            if session_id is None:
                cells.insert(1, Text(run.session_id))
            table.add_row(*cells)
        console.print(table)
        if page.next_cursor is not None:
            console.print(Text(f"more: add --cursor {page.next_cursor}", style="dim"))

    _execute(work)


# -- show ---------------------------------------------------------------------------------------
@runs.command()
@click.argument("session_id")
@click.argument("run_id")
@store_option
@app_option
@user_option
@json_option
def show(
    session_id: str,
    run_id: str,
    store: str | None,
    app_name: str | None,
    user_id: str | None,
    as_json: bool,
) -> None:
    """Show one run: its status, times, request and error.

    \b
    Examples:
      cairn runs show 5f0c1e9a e-3b1d0c9a --app shop --user ann
      cairn runs show 5f0c1e9a e-3b1d0c9a --json | jq .status
    """
    console = Console(highlight=False, soft_wrap=True)

    async def work() -> None:
        async with _runs(store) as runs:
            app, user = await _where(runs, app_name, user_id, session_id)
            run = await _get(runs, app, user, session_id, run_id)
        _print_run(console, run, as_json)

    _execute(work)


# -- cancel -------------------------------------------------------------------------------------
@runs.command()
@click.argument("session_id")
@click.argument("run_id")
@store_option
@app_option
@user_option
@click.option("--wait", is_flag=True, help="Return once the run has ended.")
@json_option
def cancel(
    session_id: str,
    run_id: str,
    store: str | None,
    app_name: str | None,
    user_id: str | None,
    wait: bool,
    as_json: bool,
) -> None:
    """Cancel a run: pending, it never starts; running, it stops at its next event (what it
    committed stays). A run that has ended is left as it is.

    \b
    Examples:
      cairn runs cancel 5f0c1e9a e-3b1d0c9a --app shop
      cairn runs cancel 5f0c1e9a e-3b1d0c9a --wait --json
    """
    console = Console(highlight=False, soft_wrap=True)

    async def work() -> None:
        async with _runs(store) as runs:
            app, user = await _where(runs, app_name, user_id, session_id)
            await _get(runs, app, user, session_id, run_id)
            run = await runs.cancel(app, user, session_id, run_id, wait=wait)
        _print_run(console, run, as_json)

    _execute(work)


async def _get(runs: Runs, app: str, user: str, session_id: str, run_id: str) -> StoredRun:
    try:
        return await runs.get(app, user, session_id, run_id)
    except RunNotFoundError as exc:
        raise NotFoundError(str(exc)) from exc


def _print_run(console: Console, run: StoredRun, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(run_json(run), ensure_ascii=False))
        return
    console.print(
        Text.assemble(
            ("run ", "bold"),
            (run.run_id, "bold"),
            "  ",
            (run.status.value, STATUS_STYLE[run.status]),
            f"  ({run.strategy})",
        )
    )
    rows = [
        ("session", run.session_id),
        ("user", run.user_id),
        ("created", local_time(run.created_at)),
        ("started", local_time(run.started_at or 0)),
        ("ended", local_time(run.ended_at or 0)),
        ("waited", _waited(run)),
        ("attempts", str(run.attempts)),
        ("cancel", run.cancel.value if run.cancel else ""),
        ("error", _error_text(run)),
        ("request", json.dumps(run.request, ensure_ascii=False)),
    ]
    for name, value in rows:
        if value:
            console.print(Text.assemble((f"  {name:<9}", "dim"), value))
