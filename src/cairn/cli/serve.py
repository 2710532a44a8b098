"""``cairn api-server`` and ``cairn web``: the HTTP API (and the dev UI) under uvicorn.

Both set the ``CAIRN_*`` variables of the HTTP API contract and run
``uvicorn.run("cairn.server:app_from_env", factory=True, ...)``, so every
worker process (``--workers N``) and every reload builds the same app.
"""

from __future__ import annotations

import asyncio
import errno
import importlib.util
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from cairn.cli._errors import EXIT_ERROR, EXIT_NOT_FOUND
from cairn.cli._options import LEASE_TTL, LEASE_TTL_HELP, STORE_HELP
from cairn.errors import CairnError
from cairn.sessions.database_session_service import DatabaseSessionService

APP_FACTORY = "cairn.server:app_from_env"
GRACEFUL_SHUTDOWN = 10
"""Seconds requests in flight get to finish when the server is told to stop."""
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def _server_options(command: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.argument(
            "path", type=click.Path(path_type=Path), default=Path("."), required=False
        ),
        click.option(
            "--host", default="127.0.0.1", show_default=True, help="The address to listen on."
        ),
        click.option(
            "--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
            help="The port to listen on.",
        ),
        click.option(
            "--store", default=None, metavar="URL", envvar="CAIRN_STORE",
            help=STORE_HELP + " memory:// keeps nothing after the server stops. "
            "[env: CAIRN_STORE]",
        ),
        click.option(
            "--artifact-store", default=None, metavar="URL|DIR", envvar="CAIRN_ARTIFACT_STORE",
            help="Where artifacts go: a directory, or memory:// (default: the session store's "
            "database). [env: CAIRN_ARTIFACT_STORE]",
        ),
        click.option(
            "--memory-store", default=None, metavar="URL", envvar="CAIRN_MEMORY_STORE",
            help="Long-term memory for the agents: a SQLite path, semantic+sqlite:///path or a "
            "postgresql:// URL (default: in memory, per process). [env: CAIRN_MEMORY_STORE]",
        ),
        click.option(
            "--cors-origin", "cors_origins", multiple=True, metavar="ORIGIN",
            help="Allow browser requests from ORIGIN, e.g. http://localhost:3000 "
            "(repeatable).",
        ),
        click.option(
            "--api-key", default=None, metavar="KEY", envvar="CAIRN_API_KEY",
            help="Require this key in the X-API-Key header of every API request. "
            "[env: CAIRN_API_KEY]",
        ),
        click.option(
            "--max-body-bytes", type=click.IntRange(min=1), default=None, metavar="N",
            help="Refuse request bodies larger than N bytes with 413 (default 1048576).",
        ),
        click.option(
            "--lease-ttl", type=LEASE_TTL, default=None, metavar="SECONDS",
            envvar="CAIRN_LEASE_TTL", help=LEASE_TTL_HELP + " [env: CAIRN_LEASE_TTL]",
        ),
        click.option(
            "--executor", default=None, metavar="in-process|temporal://HOST:PORT[/NS]",
            envvar="CAIRN_EXECUTOR",
            help="Where runs execute: in this server's process (default), or on the Temporal "
            "server's workers (`cairn worker`). [env: CAIRN_EXECUTOR]",
        ),
        click.option(
            "--task-queue", default=None, metavar="QUEUE", envvar="CAIRN_TASK_QUEUE",
            help="With a Temporal --executor: the task queue the workers poll (default "
            "cairn-runs). [env: CAIRN_TASK_QUEUE]",
        ),
        click.option(
            "--max-runs", type=click.IntRange(min=1), default=None, metavar="N",
            envvar="CAIRN_MAX_RUNS",
            help="With the in-process executor: runs this process executes at once (default: "
            "no limit); the others wait in their sessions' order. [env: CAIRN_MAX_RUNS]",
        ),
        click.option(
            "--workers", type=click.IntRange(min=1), default=1, show_default=True,
            help="Worker processes (they share the store: use a file or a database).",
        ),
        click.option("--reload", is_flag=True, help="Restart when files under PATH change."),
        click.option(
            "--auto-create-session", is_flag=True,
            help="/run and /run_sse create a session that does not exist yet.",
        ),
        click.option(
            "--a2a", is_flag=True, envvar="CAIRN_A2A",
            help="Also serve every app over A2A at /a2a/APP (its agent card at "
            "/a2a/APP/.well-known/agent-card.json); needs cairn[a2a]. [env: CAIRN_A2A]",
        ),
        click.option(
            "--record-spans/--no-record-spans", default=None,
            help="Write each run's OpenTelemetry spans into the session store, for the Trace "
            "tab and GET .../traces (env CAIRN_RECORD_SPANS). Default: on for `cairn web`, "
            "off for `cairn api-server`. OTLP export is set by the OTEL_* variables.",
        ),
        click.option(
            "--timeout-graceful-shutdown", "graceful_shutdown", type=click.IntRange(min=0),
            default=GRACEFUL_SHUTDOWN, show_default=True, metavar="SECONDS",
            help="On SIGTERM or Ctrl-C, let requests in flight finish for this long, then "
            "cancel them (their invocations end as cancelled ones do: leases released).",
        ),
        click.option(
            "--log-level",
            type=click.Choice(["critical", "error", "warning", "info", "debug"]),
            default="info",
            show_default=True,
            help="uvicorn's log level.",
        ),
    ]  # fmt: skip
    for option in reversed(options):
        command = option(command)
    return command


@click.command("api-server")
@_server_options
def api_server(**options: Any) -> None:
    """Serve the agents under PATH over HTTP: ADK's api_server routes and cairn's own.

    PATH (default: the current directory) is one agent — a .py file or a
    package defining root_agent or app, as `cairn run` loads — or a directory
    whose subdirectories are agents, each an app named after its directory.
    Sessions go to --store; any number of servers (and --workers) can share a
    SQLite file or a database. The OpenAPI docs are at /docs.

    \b
    Examples:
      cairn api-server agents/
      cairn api-server my_agent --port 9000 --store postgresql+asyncpg://me@db/cairn
      cairn api-server agents/ --workers 4 --api-key "$(cat key.txt)"
      cairn api-server agents/ --cors-origin http://localhost:3000 --reload

    \b
    Exit codes:
      0  stopped
      1  PATH does not exist
      2  refused: bad options, or the server could not start (e.g. the
         store's database or user does not exist)
    """
    _serve(web=False, **options)


@click.command()
@_server_options
def web(**options: Any) -> None:
    """Serve the agents under PATH with the dev web UI at / (and the HTTP API).

    The same server as `cairn api-server`, plus a browser UI: chat with an
    agent, watch its events and a workflow's graph, answer pending
    interrupts, rewind and fork sessions. Its URL is printed at the start.

    \b
    Examples:
      cairn web agents/
      cairn web my_agent.py --port 8080 --store .cairn/sessions.db
      cairn web agents/ --reload

    \b
    Exit codes:
      0  stopped
      1  PATH does not exist
      2  refused: bad options, or the server could not start (e.g. the
         store's database or user does not exist)
    """
    _serve(web=True, **options)


def _serve(
    *,
    web: bool,
    path: Path,
    host: str,
    port: int,
    store: str | None,
    artifact_store: str | None,
    memory_store: str | None,
    cors_origins: tuple[str, ...],
    api_key: str | None,
    max_body_bytes: int | None,
    lease_ttl: float | None,
    executor: str | None,
    task_queue: str | None,
    max_runs: int | None,
    workers: int,
    reload: bool,
    auto_create_session: bool,
    a2a: bool,
    record_spans: bool | None,
    graceful_shutdown: int,
    log_level: str,
) -> None:
    if reload and workers > 1:
        raise click.UsageError("--reload runs one process; leave out --workers (or --reload)")
    if store == "memory://" and workers > 1:
        raise click.UsageError(
            "memory:// keeps sessions inside one process, so --workers would not share them; "
            "use a SQLite file or a database URL with --workers"
        )
    if not path.exists():
        click.echo(
            f"error: {path} does not exist; give an agent file, package or directory", err=True
        )
        sys.exit(EXIT_NOT_FOUND)
    if importlib.util.find_spec("cairn.server") is None:  # pragma: no cover - packaging
        click.echo("error: cairn.server is not installed with this cairn", err=True)
        sys.exit(EXIT_ERROR)
    _check_port(host, port)
    environment = _environment(
        web=web,
        path=path,
        store=store,
        artifact_store=artifact_store,
        memory_store=memory_store,
        cors_origins=cors_origins,
        api_key=api_key,
        max_body_bytes=max_body_bytes,
        lease_ttl=lease_ttl,
        auto_create_session=auto_create_session,
        a2a=a2a,
        record_spans=record_spans,
        executor=executor,
        task_queue=task_queue,
        max_runs=max_runs,
    )
    os.environ.update({k: v for k, v in environment.items() if v is not None})
    for name in [k for k, v in environment.items() if v is None]:
        os.environ.pop(name, None)
    _check_store(store)
    url = f"http://{_display_host(host)}:{port}"
    if web:
        click.echo(f"cairn web: open {url}/ in your browser (Ctrl-C stops the server)")
    else:
        click.echo(f"cairn api-server: {url} (OpenAPI docs at {url}/docs; Ctrl-C stops it)")
    if a2a:
        click.echo(f"A2A: each app at {url}/a2a/APP (card: .../.well-known/agent-card.json)")
    if host not in _LOCAL_HOSTS and not api_key:
        click.echo(
            f"warning: listening on {host} without --api-key: anyone who can reach this port "
            "can run these agents and read their sessions",
            err=True,
        )
    import uvicorn  # imported here: the other commands do not need it

    try:
        uvicorn.run(
            APP_FACTORY,
            factory=True,
            host=host,
            port=port,
            workers=workers if workers > 1 else None,
            reload=reload,
            reload_dirs=[str(_watched(path))] if reload else None,
            log_level=log_level,
            timeout_graceful_shutdown=graceful_shutdown,
        )
    except (OSError, SystemExit) as exc:
        code = exc.code if isinstance(exc, SystemExit) else None
        if isinstance(exc, SystemExit) and code in (0, None):
            return
        # Another server may have taken the port after the check: say so in the same words.
        taken = _bind_problem(host, port) if port else None
        click.echo(f"error: {taken or f'the server stopped: {exc}'}", err=True)
        sys.exit(EXIT_ERROR)


def _check_store(store: str | None) -> None:
    """A database store is reached (its schema brought up to date) before the server starts:
    a missing database or role, or a server that cannot be reached, ends the command with
    one line saying what to fix, not a server that answers 503 to everything."""
    if store is None or "://" not in store or store.startswith(("memory:", "sqlite")):
        return

    async def reach() -> None:
        service = DatabaseSessionService(store)
        try:
            await service.migrate()
        finally:
            await service.close()

    try:
        asyncio.run(reach())
    except CairnError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)


def _check_port(host: str, port: int) -> None:
    """The address is free before anything is printed: a port another server holds ends the
    command with one line saying which port and what to do (``--port``), not an "open
    http://..." line that points at the other server, followed by uvicorn's log."""
    if port == 0:  # any free port: nothing to check
        return
    problem = _bind_problem(host, port)
    if problem is not None:
        click.echo(f"error: {problem}", err=True)
        sys.exit(EXIT_ERROR)


def _bind_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on ``host``:``port`` (None if it can). The probe binds
    as uvicorn does (``SO_REUSEADDR``) and lets go at once."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            if sys.platform != "win32":
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except socket.gaierror:
        return f"cannot listen on --host {host}: no such host name or address"
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            other = port + 1 if port < 65535 else 8000
            return (
                f"port {port} on {host} is already in use (another server listens there); "
                f"stop that server, or choose another port with --port, e.g. --port {other}"
            )
        if exc.errno == errno.EACCES:
            return (
                f"port {port} on {host} needs privileges this user does not have; choose a "
                "port above 1023 with --port"
            )
        if exc.errno == errno.EADDRNOTAVAIL:
            return f"cannot listen on --host {host}: it is not an address of this machine"
        return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None


def _environment(
    *,
    web: bool,
    path: Path,
    store: str | None,
    artifact_store: str | None,
    memory_store: str | None,
    cors_origins: tuple[str, ...],
    api_key: str | None,
    max_body_bytes: int | None,
    lease_ttl: float | None,
    auto_create_session: bool,
    a2a: bool = False,
    record_spans: bool | None = None,
    executor: str | None = None,
    task_queue: str | None = None,
    max_runs: int | None = None,
) -> dict[str, str | None]:
    """The ``CAIRN_*`` variables for ``app_from_env`` (None: unset it). Options that are not
    given leave their variable as the environment has it."""
    environment: dict[str, str | None] = {
        "CAIRN_AGENTS_DIR": str(path.resolve()),
        "CAIRN_WEB": "1" if web else None,
    }
    if store is not None:
        environment["CAIRN_STORE"] = store
    if artifact_store is not None:
        environment["CAIRN_ARTIFACT_STORE"] = artifact_store
    if memory_store is not None:
        environment["CAIRN_MEMORY_STORE"] = memory_store
    if cors_origins:
        environment["CAIRN_CORS_ORIGINS"] = ",".join(cors_origins)
    if api_key:
        environment["CAIRN_API_KEY"] = api_key
    if max_body_bytes is not None:
        environment["CAIRN_MAX_BODY_BYTES"] = str(max_body_bytes)
    if lease_ttl is not None:
        environment["CAIRN_LEASE_TTL"] = repr(lease_ttl)
    if auto_create_session:
        environment["CAIRN_AUTO_CREATE_SESSION"] = "1"
    if a2a:
        environment["CAIRN_A2A"] = "1"
    if record_spans is not None:
        environment["CAIRN_RECORD_SPANS"] = "1" if record_spans else "0"
    if executor is not None:
        environment["CAIRN_EXECUTOR"] = executor
    if task_queue is not None:
        environment["CAIRN_TASK_QUEUE"] = task_queue
    if max_runs is not None:
        environment["CAIRN_MAX_RUNS"] = str(max_runs)
    return environment


def _display_host(host: str) -> str:
    if host in {"0.0.0.0", "::", ""}:
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def _watched(path: Path) -> Path:
    resolved = path.resolve()
    return resolved if resolved.is_dir() else resolved.parent
