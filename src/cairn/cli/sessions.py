"""``cairn sessions``: list, show, export and import the sessions of a store."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from cairn.cli._errors import EXIT_NOT_FOUND, CommandError, NotFoundError, refused_code
from cairn.cli._options import check_selection, selection_options, store_option
from cairn.cli._render import compact
from cairn.cli._session_file import (
    SESSION_LINE_END,
    ExportedSession,
    header_line,
    read_sessions,
    session_line_start,
)
from cairn.cli._session_views import event_kind, event_summary, local_time, scoped_state
from cairn.errors import CairnError, SessionNotFoundError
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.factory import session_service_from_url
from cairn.sessions.session import Session

T = TypeVar("T")
_PAGE = 1000
_NO_EVENTS = GetSessionConfig(num_recent_events=0)
_CATCH_UP_ROUNDS = 3
"""How often an export looks again for sessions updated while it ran (a store that never
stops changing would otherwise keep it going)."""


@click.group()
def sessions() -> None:
    """List, show, export and import the sessions of a store.

    \b
    Examples:
      cairn sessions list --app shop
      cairn sessions show 5f0c1e9a --app shop --user ann --events 50
      cairn sessions export --app shop -o shop.jsonl
      cairn sessions import shop.jsonl --store postgresql+asyncpg://me@db/cairn

    \b
    Exit codes:
      0  done
      1  not found: the session, or the import file
      2  refused: bad options or input, sessions that already exist (import), or the
         store refused (a cairn error)
      5  the SQLite store file is damaged
    """


def _execute(work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``work``; its errors end the command with the documented exit code."""
    try:
        return asyncio.run(work())
    except CommandError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except SessionNotFoundError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_NOT_FOUND)
    except CairnError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(refused_code(exc))


@asynccontextmanager
async def _store(store: str | None) -> AsyncIterator[BaseSessionService]:
    service = session_service_from_url(store)
    try:
        yield service
    finally:
        await service.close()


def _progress(console: Console, verb: str, *, disable: bool = False) -> Progress:
    """A progress bar on ``console`` that vanishes when done; off when it is not a terminal."""
    return Progress(
        TextColumn(verb),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=disable or not console.is_terminal,
    )


async def _resolve_app(service: BaseSessionService, app_name: str | None) -> str | None:
    """``app_name``, else the store's only app; None when the store has no sessions."""
    if app_name is not None:
        return app_name
    apps = await service.list_app_names()
    if len(apps) > 1:
        raise CommandError(
            f"the store holds sessions of {len(apps)} apps ({', '.join(apps)}); pick one with --app"
        )
    return apps[0] if apps else None


# -- list ---------------------------------------------------------------------------------------
@sessions.command("list")
@store_option
@click.option("--app", "app_name", default=None, help="The app (default: the store's only one).")
@click.option("--user", "user_id", default=None, help="Only this user's sessions.")
@click.option(
    "--limit",
    type=click.IntRange(1, 1000),
    default=50,
    show_default=True,
    help="Sessions per page.",
)
@click.option("--cursor", default=None, help="Show the page after this one (printed at the end).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (for scripts).")
def list_(
    store: str | None,
    app_name: str | None,
    user_id: str | None,
    limit: int,
    cursor: str | None,
    as_json: bool,
) -> None:
    """List sessions, most recently updated first, a page at a time.

    Without --app, a store holding several apps lists the apps and how many
    sessions each has.

    \b
    Examples:
      cairn sessions list
      cairn sessions list --app shop --user ann --limit 20
      cairn sessions list --app shop --json | jq -r '.sessions[].id'
    """
    console = Console(highlight=False, soft_wrap=True)

    async def work() -> None:
        async with _store(store) as service:
            app = app_name
            if app is None:
                apps = await service.list_app_names()
                if len(apps) != 1:
                    await _print_apps(service, apps, as_json, console)
                    return
                app = apps[0]
            total = await service.count_sessions(app_name=app, user_id=user_id)
            page = await service.list_sessions_page(
                app_name=app, user_id=user_id, limit=limit, cursor=cursor
            )
        if as_json:
            listing = {
                "appName": app,
                "total": total,
                "sessions": [_session_summary(s) for s in page.sessions],
                "nextCursor": page.next_cursor,
            }
            click.echo(json.dumps(listing, ensure_ascii=False))
            return
        who = f", user {user_id!r}" if user_id is not None else ""
        table = Table(title=f"app {app!r}{who}: {total} session(s)", title_justify="left")
        for column in ("session", "user", "events", "last update"):
            table.add_column(column, justify="right" if column == "events" else "left")
        for session in page.sessions:
            table.add_row(
                Text(session.id),
                Text(session.user_id),
                str(session.revision),
                local_time(session.last_update_time),
            )
        console.print(table)
        if page.next_cursor is not None:
            more = ["cairn sessions list", "--app", app]
            if user_id is not None:
                more += ["--user", user_id]
            console.print(Text(f"more: {' '.join(more)} --cursor {page.next_cursor}", style="dim"))

    _execute(work)


def _session_summary(session: Session) -> dict[str, Any]:
    return {
        "id": session.id,
        "userId": session.user_id,
        "events": session.revision,
        "lastUpdateTime": session.last_update_time,
    }


async def _print_apps(
    service: BaseSessionService, apps: list[str], as_json: bool, console: Console
) -> None:
    counts = [(app, await service.count_sessions(app_name=app)) for app in apps]
    if as_json:
        listing = {"apps": [{"name": app, "sessions": count} for app, count in counts]}
        click.echo(json.dumps(listing, ensure_ascii=False))
        return
    if not apps:
        console.print("no sessions in this store")
        return
    table = Table(title=f"{len(apps)} apps", title_justify="left")
    table.add_column("app")
    table.add_column("sessions", justify="right")
    for app, count in counts:
        table.add_row(Text(app), str(count))
    console.print(table)
    console.print(Text("list one app's sessions with --app NAME", style="dim"))


# -- show ---------------------------------------------------------------------------------------
@sessions.command()
@click.argument("session_id")
@store_option
@click.option("--app", "app_name", default=None, help="The app (default: the store's only one).")
@click.option(
    "--user", "user_id", default=None, help="The user (default: whoever has this session)."
)
@click.option(
    "--events",
    "newest",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Show the newest N events (0: none).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (for scripts).")
def show(
    session_id: str,
    store: str | None,
    app_name: str | None,
    user_id: str | None,
    newest: int,
    as_json: bool,
) -> None:
    """Show a session: its state by scope and its newest events.

    Each event is one line: its number, time, author, kind (message, call,
    result, state, output, transfer, rewind, compaction, error) and a summary.
    With --json, the events are printed exactly as stored.

    \b
    Examples:
      cairn sessions show 5f0c1e9a --app shop --user ann
      cairn sessions show 5f0c1e9a --events 200
      cairn sessions show 5f0c1e9a --json | jq '.state.session'
    """
    console = Console(highlight=False, soft_wrap=True)

    async def work() -> None:
        async with _store(store) as service:
            app = await _resolve_app(service, app_name)
            if app is None:
                raise NotFoundError(f"session {session_id!r} does not exist: the store is empty")
            user = user_id or await _owner(service, app, session_id)
            head = await service.get_session(
                app_name=app, user_id=user, session_id=session_id, config=_NO_EVENTS
            )
            initial = await service.get_initial_state(
                app_name=app, user_id=user, session_id=session_id
            )
            if head is None or initial is None:
                raise SessionNotFoundError(app_name=app, user_id=user, session_id=session_id)
            events = await _newest_events(service, head, newest)
        first = head.revision - len(events) + 1
        if as_json:
            shown = {
                "appName": head.app_name,
                "userId": head.user_id,
                "id": head.id,
                "lastUpdateTime": head.last_update_time,
                "eventCount": head.revision,
                "initialState": initial,
                "state": scoped_state(head.state),
                "events": [event.to_dict() for event in events],
            }
            click.echo(json.dumps(shown, ensure_ascii=False))
            return
        _print_session(console, head, initial, events, first)

    _execute(work)


async def _owner(service: BaseSessionService, app: str, session_id: str) -> str:
    """The user whose session ``session_id`` is (``CommandError`` if several users have one)."""
    owners: list[str] = []
    cursor: str | None = None
    while True:
        page = await service.list_sessions_page(app_name=app, limit=_PAGE, cursor=cursor)
        owners += [s.user_id for s in page.sessions if s.id == session_id]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    owners = sorted(set(owners))
    if not owners:
        raise NotFoundError(
            f"session {session_id!r} does not exist in app {app!r}; "
            f"`cairn sessions list --app {app}` lists them"
        )
    if len(owners) > 1:
        raise CommandError(
            f"users {', '.join(map(repr, owners))} each have a session {session_id!r} in app "
            f"{app!r}; pick one with --user"
        )
    return owners[0]


async def _newest_events(service: BaseSessionService, head: Session, newest: int) -> list[Any]:
    """The newest ``newest`` events of the session (as of ``head``), oldest first."""
    found: list[Any] = []
    cursor: str | None = None
    while len(found) < newest:
        page = await service.list_events(
            app_name=head.app_name,
            user_id=head.user_id,
            session_id=head.id,
            limit=min(_PAGE, newest - len(found)),
            cursor=cursor,
            direction="backward",
        )
        found = page.events + found  # each page is in append order, newest page first
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    return found


def _print_session(
    console: Console, head: Session, initial: dict[str, Any], events: list[Any], first: int
) -> None:
    console.print(Text.assemble(Text("session ", style="dim"), Text(head.id, style="bold")))
    console.print(
        Text(
            f"  app {head.app_name!r}, user {head.user_id!r}, {head.revision} event(s), "
            f"last update {local_time(head.last_update_time) or 'never'}",
            style="dim",
        )
    )
    state = Table(title="state", title_justify="left")
    for column in ("scope", "key", "value"):
        state.add_column(column)
    for scope, values in scoped_state(head.state).items():
        for key, value in values.items():
            state.add_row(scope, Text(key), Text(compact(value)))
    if head.state:
        console.print(state)
    else:
        console.print(Text("state: empty", style="dim"))
    if initial:
        console.print(Text(f"initial state: {compact(initial)}", style="dim"))
    if not events:
        return
    title = f"events {first}–{head.revision} of {head.revision}"
    table = Table(title=title, title_justify="left")
    for column in ("#", "time", "author", "kind"):
        table.add_column(column, justify="right" if column == "#" else "left", no_wrap=True)
    table.add_column("summary", overflow="fold")
    for number, event in enumerate(events, start=first):
        kind = event_kind(event)
        table.add_row(
            str(number),
            local_time(event.timestamp),
            Text(event.author),
            Text(kind, style="red" if kind == "error" else ""),
            Text(event_summary(event)),
        )
    console.print(table)


# -- export -------------------------------------------------------------------------------------
@sessions.command()
@store_option
@selection_options
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False, writable=True),
    default=None,
    metavar="FILE",
    help="Write to FILE (default: standard output).",
)
def export(
    store: str | None,
    app_name: str | None,
    user_id: str | None,
    session_id: str | None,
    output: Path | None,
) -> None:
    """Export sessions as JSON lines: every event exactly as stored, and the state.

    The first line is a header, {"format": "cairn-sessions", "version": 1, ...};
    then one line per session: {"appName", "userId", "id", "lastUpdateTime",
    "initialState", "state", "events": [...]}. Sessions are read one at a
    time and their events a page at a time. Each session is exported as of one
    moment (its events up to the revision its state was read at); sessions
    updated while the export runs are exported too.

    Export a whole user (or app) to carry its user: (or app:) state along
    consistently; `cairn sessions import` reads the file into any store.

    \b
    Examples:
      cairn sessions export -o everything.jsonl
      cairn sessions export --app shop --user ann -o ann.jsonl
      cairn sessions export --app shop --user ann --session 5f0c1e9a | gzip > s.jsonl.gz
    """
    check_selection(app_name, user_id, session_id)
    errors = Console(stderr=True)

    async def work() -> tuple[int, int]:
        async with _store(store) as service:
            if output is None:
                return await _export(service, sys.stdout, app_name, user_id, session_id, errors)
            # Written beside FILE and renamed at the end: FILE is never half an export.
            partial = output.with_name(output.name + ".partial")
            try:
                with partial.open("w", encoding="utf-8") as stream:
                    done = await _export(service, stream, app_name, user_id, session_id, errors)
                partial.replace(output)
            except OSError as exc:
                raise CommandError(f"cannot write {output}: {exc}") from exc
            finally:
                partial.unlink(missing_ok=True)
            return done

    sessions_written, events_written = _execute(work)
    if output is not None:
        click.echo(f"exported {sessions_written} session(s), {events_written} event(s) to {output}")


async def _export(
    service: BaseSessionService,
    stream: IO[str],
    app_name: str | None,
    user_id: str | None,
    session_id: str | None,
    console: Console,
) -> tuple[int, int]:
    stream.write(header_line())
    written = events = 0
    if session_id is not None:
        assert app_name is not None and user_id is not None
        head = await service.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id, config=_NO_EVENTS
        )
        if head is None:
            raise SessionNotFoundError(app_name=app_name, user_id=user_id, session_id=session_id)
        return 1, await _write_session(service, stream, head)
    apps = [app_name] if app_name is not None else await service.list_app_names()
    total = 0
    for app in apps:
        total += await service.count_sessions(app_name=app, user_id=user_id)
    with _progress(console, "exporting") as progress:
        task = progress.add_task("sessions", total=total)
        for app in apps:
            seen: set[tuple[str, str]] = set()
            async for head in _sessions_of(service, app, user_id, seen):
                events += await _write_session(service, stream, head)
                written += 1
                progress.update(task, completed=written, total=max(total, written))
    return written, events


async def _sessions_of(
    service: BaseSessionService, app: str, user_id: str | None, seen: set[tuple[str, str]]
) -> AsyncIterator[Session]:
    """Every session of the app (or user) once, including those updated while we page.

    A session updated during the listing moves to the front of it, so once the
    listing is done, the front is read again for sessions updated since it began.
    """
    started = time.time()
    cursor: str | None = None
    while True:
        page = await service.list_sessions_page(
            app_name=app, user_id=user_id, limit=100, cursor=cursor
        )
        for session in page.sessions:
            if (session.user_id, session.id) not in seen:
                seen.add((session.user_id, session.id))
                yield session
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    for _ in range(_CATCH_UP_ROUNDS):
        late = False
        cursor = None
        while True:
            page = await service.list_sessions_page(
                app_name=app, user_id=user_id, limit=100, cursor=cursor
            )
            fresh = [s for s in page.sessions if s.last_update_time >= started]
            for session in fresh:
                if (session.user_id, session.id) not in seen:
                    seen.add((session.user_id, session.id))
                    late = True
                    yield session
            if page.next_cursor is None or len(fresh) < len(page.sessions):
                break
            cursor = page.next_cursor
        if not late:
            return
        started = time.time()


async def _write_session(service: BaseSessionService, stream: IO[str], listed: Session) -> int:
    """Write one session's line, its events a page at a time; return how many events."""
    app, user, sid = listed.app_name, listed.user_id, listed.id
    head = await service.get_session(app_name=app, user_id=user, session_id=sid, config=_NO_EVENTS)
    initial = await service.get_initial_state(app_name=app, user_id=user, session_id=sid)
    if head is None or initial is None:  # deleted since it was listed
        return 0
    stream.write(
        session_line_start(
            app_name=app,
            user_id=user,
            session_id=sid,
            last_update_time=head.last_update_time,
            initial_state=initial,
            state=head.state,
        )
    )
    count = 0
    cursor: str | None = None
    while count < head.revision:
        page = await service.list_events(
            app_name=app, user_id=user, session_id=sid, limit=_PAGE, cursor=cursor
        )
        for event in page.events[: head.revision - count]:
            stream.write(("," if count else "") + event.to_json())
            count += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    stream.write(SESSION_LINE_END)
    return count


# -- import -------------------------------------------------------------------------------------
@sessions.command("import")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@store_option
@click.option("--replace", is_flag=True, help="Replace sessions that already exist in the store.")
@click.option(
    "--skip-existing", is_flag=True, help="Leave sessions that already exist as they are."
)
def import_(file: Path, store: str | None, replace: bool, skip_existing: bool) -> None:
    """Import the sessions of an export file into a store, each whole or not at all.

    The whole file is read and checked first; if any of its sessions already
    exists in the store, nothing is imported and they are named (exit code 2),
    unless --replace (delete each and import the file's) or --skip-existing
    (keep the store's). Each session lands in one step with its events exactly
    as exported, its state, and its app: and user: state; `cairn verify`
    passes afterwards as it did before the export.

    \b
    Examples:
      cairn sessions import shop.jsonl
      cairn sessions import shop.jsonl --store postgresql+asyncpg://me@db/cairn
      cairn sessions import shop.jsonl --skip-existing
    """
    if replace and skip_existing:
        raise click.UsageError("--replace and --skip-existing do not go together; pick one")
    if not file.is_file():
        click.echo(f"error: {file} does not exist", err=True)
        sys.exit(EXIT_NOT_FOUND)
    errors = Console(stderr=True)

    async def work() -> tuple[int, int, int]:
        keys = _check_file(file)
        async with _store(store) as service:
            existing = await _existing(service, keys)
            if existing and not (replace or skip_existing):
                named = "; ".join(
                    f"{sid!r} (app {app!r}, user {user!r})" for app, user, sid in existing[:10]
                )
                more = f" and {len(existing) - 10} more" if len(existing) > 10 else ""
                raise CommandError(
                    f"{len(existing)} session(s) of {file} already exist in the store: "
                    f"{named}{more}. Nothing was imported. Pass --skip-existing to keep them, "
                    "or --replace to replace them with the file's."
                )
            return await _import(service, file, set(existing), replace, len(keys), errors)

    imported, events, skipped = _execute(work)
    verb = "replaced or imported" if replace else "imported"
    summary = f"{verb} {imported} session(s), {events} event(s)"
    if skipped:
        summary += f"; skipped {skipped} that already existed"
    click.echo(summary + ".")


def _check_file(file: Path) -> list[tuple[str, str, str]]:
    """Read the whole file once, checking every line; the keys of its sessions in order."""
    keys: list[tuple[str, str, str]] = []
    lines: dict[tuple[str, str, str], int] = {}
    for session in read_sessions(file):
        if session.key in lines:
            raise CommandError(
                f"{file} line {session.line}: {session.describe()} is also on line "
                f"{lines[session.key]}; a file holds each session once"
            )
        lines[session.key] = session.line
        keys.append(session.key)
    return keys


async def _existing(
    service: BaseSessionService, keys: list[tuple[str, str, str]]
) -> list[tuple[str, str, str]]:
    found = []
    for app, user, sid in keys:
        head = await service.get_session(
            app_name=app, user_id=user, session_id=sid, config=_NO_EVENTS
        )
        if head is not None:
            found.append((app, user, sid))
    return found


async def _import(
    service: BaseSessionService,
    file: Path,
    existing: set[tuple[str, str, str]],
    replace: bool,
    total: int,
    console: Console,
) -> tuple[int, int, int]:
    imported = events = skipped = 0
    with _progress(console, "importing") as progress:
        task = progress.add_task("sessions", total=total)
        for session in read_sessions(file):
            if session.key in existing:
                if not replace:
                    skipped += 1
                    progress.advance(task)
                    continue
                await service.delete_session(
                    app_name=session.app_name, user_id=session.user_id, session_id=session.id
                )
            try:
                await _import_one(service, session)
            except CairnError as exc:
                deleted = (
                    " (--replace had deleted the store's copy)" if session.key in existing else ""
                )
                raise CommandError(
                    f"{file} line {session.line}: {session.describe()} was not imported{deleted}: "
                    f"{exc} {imported} session(s) before it were; import the rest with "
                    "--skip-existing once this is fixed."
                ) from exc
            imported += 1
            events += len(session.events)
            progress.advance(task)
    return imported, events, skipped


async def _import_one(service: BaseSessionService, session: ExportedSession) -> None:
    await service.import_session(
        app_name=session.app_name,
        user_id=session.user_id,
        session_id=session.id,
        events=session.events,
        initial_state=session.initial_state,
        state=session.state,
        last_update_time=session.last_update_time,
    )
