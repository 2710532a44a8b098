"""``cairn run PATH``: an interactive terminal session with an agent or workflow."""

from __future__ import annotations

import asyncio
import dataclasses
import shlex
import sys
from pathlib import Path

import click
from pydantic import ValidationError
from rich.console import Console
from rich.text import Text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from cairn.apps.app import App
from cairn.cli._chat import COMMANDS, Chat
from cairn.cli._errors import (
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_STOPPED,
    CommandError,
    NotFoundError,
    refused_code,
)
from cairn.cli._loading import Target, load_target
from cairn.cli._options import LEASE_TTL, LEASE_TTL_HELP
from cairn.cli._prompts import Terminal
from cairn.cli._render import print_error
from cairn.cli._replay import Replay, read_replay
from cairn.cli._run_log import RunLog, run_log
from cairn.cli._telemetry import exported_telemetry
from cairn.errors import CairnError, SessionNotFoundError
from cairn.runners.runner import Runner
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.factory import session_service_from_url
from cairn.sessions.sqlite_session_service import DEFAULT_PATH

DEFAULT_USER = "user"
TRANSCRIPT_EVENTS = 50
"""How many of a continued session's newest events are shown before the prompt."""


@dataclasses.dataclass(frozen=True)
class RunOptions:
    path: Path
    store: str | None
    app_name: str | None
    user_id: str
    session_id: str | None
    list_pending: bool
    replay: Path | None
    lease_ttl: float
    stream: bool = True
    verbose: bool = False


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--store",
    metavar="URL",
    default=None,
    help="Session store: a SQLite file path or sqlite:/// URL (default .cairn/sessions.db), "
    "memory:// (nothing kept), or a database URL such as postgresql+asyncpg://user@host/db.",
)
@click.option(
    "--app",
    "app_name",
    metavar="NAME",
    default=None,
    help="App name the sessions are stored under (default: the App's name, else the file's "
    "or package directory's name).",
)
@click.option(
    "--user", "user_id", metavar="ID", default=DEFAULT_USER, show_default=True, help="User id."
)
@click.option(
    "--session",
    "session_id",
    metavar="ID",
    default=None,
    help="Continue this existing session (default: start a new one; its id is printed).",
)
@click.option(
    "--list-pending",
    is_flag=True,
    help="Print the session's pending interrupts (kind, id, what is asked, payload, schema) "
    "and exit; needs --session.",
)
@click.option(
    "--replay",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    default=None,
    help='Send scripted turns instead of prompting: ADK\'s {"state": {...}, "queries": [...]} '
    'JSON, or one turn per line (text, or {"answer": {"id": ..., "response": ...}}, or '
    '{"continue": true}).',
)
@click.option("--lease-ttl", type=LEASE_TTL, default=30.0, metavar="SECONDS", help=LEASE_TTL_HELP)
@click.option(
    "--no-stream",
    is_flag=True,
    help="Ask the model for whole replies instead of streamed text (for servers that cannot "
    "stream some requests, such as tool calls on some local OpenAI-compatible servers).",
)
@click.option("--no-color", is_flag=True, help="Plain output, no colours or styles.")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Show tracebacks of failures (a model call, the agent's code) and cairn's log "
    "(info and up); without it a failure is one line.",
)
def run(
    path: Path,
    store: str | None,
    app_name: str | None,
    user_id: str,
    session_id: str | None,
    list_pending: bool,
    replay: Path | None,
    lease_ttl: float,
    no_stream: bool,
    no_color: bool,
    verbose: bool,
) -> None:
    """Talk to the agent or workflow defined in PATH, in this terminal.

    PATH is a Python file or a package directory that defines `root_agent`
    (ADK's convention) or `app` (a cairn App). Text streams as it arrives
    (--no-stream: whole replies); tool calls and results show one line each.
    When the agent pauses (a confirmation, an input request, a long-running
    tool, a credential, a call in doubt), you are asked for the answer and the
    run resumes. Quit whenever you like: run
    again with --session ID (the id is printed at the start) to continue: the
    transcript so far is shown, and pending interrupts are asked for first.
    A failure (a model call, a missing API key) is one line; --verbose adds
    its traceback.

    At the prompt: an empty line, /quit or Ctrl-D quits; /pending lists the
    pending interrupts; /answer asks again for the ones you skipped. A message
    does not answer them: it starts a new run, so a message typed while some
    wait lists them first and asks whether to answer them before it is sent.

    \b
    Examples:
      cairn run my_agent/
      cairn run shop.py --session 5f0c1e9a
      cairn run shop.py --session 5f0c1e9a --list-pending
      cairn run shop.py --replay turns.json --store memory://
      cairn run local_model_agent.py --no-stream

    \b
    Exit codes:
      0  done (you quit, the replay ended, or the listing was printed)
      1  not found: PATH, its root_agent/app, the --session or the replay file
      2  refused: bad input or options, or the store refused (a cairn error)
      3  --replay only: an exception escaped the agent (a bug in its code)
      5  the SQLite store file is damaged
      130  stopped with Ctrl-C
    """
    if list_pending and session_id is None:
        raise click.UsageError("--list-pending needs --session ID: the session to look at")
    if list_pending and replay is not None:
        raise click.UsageError("--list-pending and --replay do not go together")
    options = RunOptions(
        path,
        store,
        app_name,
        user_id,
        session_id,
        list_pending,
        replay,
        lease_ttl,
        stream=not no_stream,
        verbose=verbose,
    )
    console, errors = (
        Console(
            color_system=None if no_color else "auto",
            highlight=False,
            soft_wrap=True,
            stderr=stderr,
        )
        for stderr in (False, True)
    )
    try:
        with run_log(errors, verbose=verbose) as log, exported_telemetry():
            code = asyncio.run(_run(options, console, errors, log))
    except CommandError as exc:
        print_error(errors, f"error: {exc}")
        code = exc.exit_code
    except SessionNotFoundError as exc:
        print_error(errors, f"error: {exc}")
        code = EXIT_NOT_FOUND
    except CairnError as exc:
        print_error(errors, f"error: {exc}")
        code = refused_code(exc)
    except KeyboardInterrupt:
        errors.print(Text("stopped; the session keeps everything stored so far", style="dim"))
        code = EXIT_STOPPED
    sys.exit(code)


async def _run(options: RunOptions, console: Console, errors: Console, log: RunLog) -> int:
    target = load_target(options.path)
    replay = read_replay(options.replay) if options.replay is not None else None
    service = session_service_from_url(options.store)
    try:
        runner = _runner(target, service, options.app_name, options.lease_ttl)
        try:
            return await _session(options, runner, replay, console, errors, log)
        finally:
            await runner.close()
    finally:
        await service.close()


def _runner(
    target: Target, service: BaseSessionService, app_name: str | None, lease_ttl: float
) -> Runner:
    if target.app is None:
        return Runner(
            app_name=app_name or target.name,
            agent=target.agent,
            session_service=service,
            session_lease_ttl=lease_ttl,
        )
    app = target.app
    if app_name is not None and app_name != app.name:
        fields = {name: getattr(app, name) for name in App.model_fields}
        try:
            app = App.model_validate({**fields, "name": app_name})
        except ValidationError as exc:
            problem = exc.errors()[0]["msg"]
            raise CommandError(f"--app {app_name!r}: {problem}") from None
    return Runner(app=app, session_service=service, session_lease_ttl=lease_ttl)


async def _session(
    options: RunOptions,
    runner: Runner,
    replay: Replay | None,
    console: Console,
    errors: Console,
    log: RunLog,
) -> int:
    service, app_name, user_id = runner.session_service, runner.app_name, options.user_id
    where = f"app {app_name!r}, user {user_id!r}, store {_store_label(options.store)}"
    if options.session_id is None:
        session = await service.create_session(
            app_name=app_name, user_id=user_id, state=replay.state if replay else None
        )
        console.print(Text.assemble(Text("new session ", style="dim"), Text(session.id, "bold")))
        console.print(Text(f"  {where}", style="dim"))
        if options.store == "memory://":
            console.print(Text("  memory:// keeps nothing once this command ends", "dim"))
        else:
            console.print(Text(f"  continue it later with: {_again(options, session.id)}", "dim"))
    else:
        session_id = options.session_id
        found = await service.get_session(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            config=GetSessionConfig(num_recent_events=0),
        )
        if found is None:
            raise NotFoundError(
                f"session {session_id!r} does not exist ({where}). Check --store, --app and "
                "--user, or leave out --session to start a new session."
            )
        session = found
        if not options.list_pending:
            console.print(Text.assemble(Text("session ", style="dim"), Text(session.id, "bold")))
            console.print(Text(f"  {where}", style="dim"))
        if replay is not None and replay.state:
            console.print(
                Text("  the replay file's state is for new sessions; not applied", "yellow")
            )
    chat = Chat(
        runner,
        console,
        user_id=user_id,
        session_id=session.id,
        errors=errors,
        stream=options.stream,
        verbose=options.verbose,
        log=log,
        env_file=_env_file(options.path),
    )
    if options.list_pending:
        chat.show_pending(await chat.pending(), full=True)
        return EXIT_OK
    if options.session_id is not None:
        await chat.show_transcript(TRANSCRIPT_EVENTS)
    if replay is not None:
        return await chat.replay(replay.turns)
    commands = ", ".join(COMMANDS)
    console.print(Text(f"  type a message; commands: {commands}", style="dim"))
    return await chat.interactive(Terminal(console))


def _env_file(path: Path) -> Path:
    """The ``.env`` read for the agent at ``path``: in its folder (the package, or the
    file's directory)."""
    path = path.expanduser().resolve()
    return (path if path.is_dir() else path.parent) / ".env"


def _again(options: RunOptions, session_id: str) -> str:
    """The command line that continues ``session_id``."""
    words = ["cairn", "run", str(options.path)]
    if options.store is not None:
        words += ["--store", _store_label(options.store)]
    if options.app_name is not None:
        words += ["--app", options.app_name]
    if options.user_id != DEFAULT_USER:
        words += ["--user", options.user_id]
    if not options.stream:
        words.append("--no-stream")
    words += ["--session", session_id]
    return " ".join(shlex.quote(word) for word in words)


def _store_label(store: str | None) -> str:
    """The store as given, with any password hidden."""
    if store is None:
        return str(DEFAULT_PATH)
    if "://" not in store or "@" not in store:
        return store
    try:
        return make_url(store).render_as_string(hide_password=True)
    except ArgumentError:
        return store.split("://", 1)[0] + "://***"
