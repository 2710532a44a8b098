"""``cairn worker``: a Temporal worker that executes the runs of the apps under AGENTS_DIR.

API servers submit runs (``TemporalExecutor``); any number of these processes, on any
machines sharing the session store and the Temporal server, execute them. A worker that
dies mid-run is replaced: its run is retried on another worker after the heartbeat timeout
and resumes the same invocation.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cairn.cli._errors import EXIT_ERROR, EXIT_NOT_FOUND
from cairn.cli._options import LEASE_TTL, LEASE_TTL_HELP, STORE_HELP
from cairn.errors import CairnError

if TYPE_CHECKING:
    from cairn.runs.temporal.target import TemporalTarget
    from cairn.server.services import Services

DEFAULT_LEASE_TTL = 30.0


@click.command()
@click.argument("agents_dir", type=click.Path(path_type=Path), default=Path("."), required=False)
@click.option(
    "--executor",
    "target",
    required=True,
    metavar="temporal://HOST:PORT[/NAMESPACE]",
    envvar="CAIRN_EXECUTOR",
    help="The Temporal server (and namespace, default `default`). [env: CAIRN_EXECUTOR]",
)
@click.option(
    "--task-queue",
    default=None,
    metavar="QUEUE",
    envvar="CAIRN_TASK_QUEUE",
    help="The task queue to poll; the API servers' must be the same (default cairn-runs). "
    "[env: CAIRN_TASK_QUEUE]",
)
@click.option(
    "--store",
    default=None,
    metavar="URL",
    envvar="CAIRN_STORE",
    help=STORE_HELP + " Workers and API servers share it: use a database. [env: CAIRN_STORE]",
)
@click.option(
    "--artifact-store",
    default=None,
    metavar="URL|DIR",
    envvar="CAIRN_ARTIFACT_STORE",
    help="Where artifacts go (default: the session store's database). [env: CAIRN_ARTIFACT_STORE]",
)
@click.option(
    "--lease-ttl",
    type=LEASE_TTL,
    default=None,
    metavar="SECONDS",
    envvar="CAIRN_LEASE_TTL",
    help=LEASE_TTL_HELP + " [env: CAIRN_LEASE_TTL]",
)
@click.option(
    "--max-runs",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    metavar="N",
    help="Runs this worker executes at once.",
)
@click.option(
    "--timeout-graceful-shutdown",
    "graceful_shutdown",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    metavar="SECONDS",
    help="On SIGTERM or Ctrl-C, let runs finish for this long; then they stop and are "
    "handed to another worker, which resumes them.",
)
def worker(
    agents_dir: Path,
    target: str,
    task_queue: str | None,
    store: str | None,
    artifact_store: str | None,
    lease_ttl: float | None,
    max_runs: int,
    graceful_shutdown: int,
) -> None:  # fmt: skip
    """Execute runs on Temporal for the agents under AGENTS_DIR (a worker process).

    AGENTS_DIR (default: the current directory) is what `cairn api-server`
    serves: one agent, or a directory whose subdirectories are agents. Runs
    are submitted by API servers using the same Temporal server, task queue
    and store. Needs `pip install 'cairn[temporal]'`.

    \b
    Examples:
      cairn worker agents/ --executor temporal://127.0.0.1:7233 \\
          --store postgresql+asyncpg://me@db/cairn
      cairn worker agents/ --executor temporal://temporal:7233/prod --task-queue cairn-eu

    \b
    Exit codes:
      0  stopped (SIGTERM or Ctrl-C)
      1  AGENTS_DIR does not exist
      2  refused: bad options, temporalio missing, or the Temporal server or the store
         could not be reached
    """
    if not agents_dir.exists():
        click.echo(f"error: {agents_dir} does not exist; give an agents directory", err=True)
        sys.exit(EXIT_NOT_FOUND)
    try:
        from cairn.runs.temporal.target import DEFAULT_TASK_QUEUE, TemporalTarget
    except ImportError:
        click.echo(
            "error: cairn worker needs the Temporal SDK: pip install 'cairn[temporal]'", err=True
        )
        sys.exit(EXIT_ERROR)
    try:
        parsed = TemporalTarget.parse(target)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--executor") from None
    queue = task_queue or DEFAULT_TASK_QUEUE
    try:
        asyncio.run(
            _serve(
                agents_dir,
                parsed,
                queue,
                store=store,
                artifact_store=artifact_store,
                lease_ttl=lease_ttl or DEFAULT_LEASE_TTL,
                max_runs=max_runs,
                graceful_shutdown=graceful_shutdown,
            )
        )
    except CairnError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)


async def _serve(
    agents_dir: Path,
    target: TemporalTarget,
    task_queue: str,
    *,
    store: str | None,
    artifact_store: str | None,
    lease_ttl: float,
    max_runs: int,
    graceful_shutdown: int,
) -> None:
    from cairn.runners.runner import Runner
    from cairn.runs.temporal.target import connect
    from cairn.runs.temporal.worker import run_worker
    from cairn.server.registry import AppRegistry
    from cairn.server.services import Services

    services = Services.open(store, artifact_store)
    try:
        await _migrate(services)
        registry = AppRegistry(agents_dir, services, auto_create_session=False, lease_ttl=lease_ttl)

        loaded: dict[str, Runner] = {}

        async def runner_for(app_name: str) -> Runner:
            runner = loaded[app_name] = await registry.runner(app_name)
            # A run waits out the lease of a worker that died on another host (one here is
            # replaced at once) instead of failing as busy: its queue lets nothing else in.
            runner.session_busy_timeout = max(runner.session_busy_timeout, 2 * lease_ttl)
            return runner

        client = await connect(target)
        worker = run_worker(
            client,
            services.session_service,
            runner_for,
            task_queue=task_queue,
            max_concurrent_runs=max_runs,
            graceful_shutdown=timedelta(seconds=graceful_shutdown),
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError):  # Windows: Ctrl-C still stops it
                loop.add_signal_handler(signum, stop.set)
        async with worker:
            click.echo(
                f"cairn worker: executing runs from task queue {task_queue!r} at {target} "
                "(Ctrl-C stops it)",
                err=True,
            )
            await stop.wait()
        for runner in loaded.values():
            await runner.close()
    finally:
        await services.close()


async def _migrate(services: Services) -> None:
    """Bring a database store's schema up to date before executing anything."""
    migrate = getattr(services.session_service, "migrate", None)
    if migrate is not None:
        await migrate()
