"""The run executor a server uses (``ServerSettings.executor``) and the ``Runs`` over it.

``in-process``: runs execute in this server's process (``cairn.runs.in_process``).
``temporal://HOST:PORT[/NS]``: runs are submitted to that Temporal server's workers
(``cairn.runs.temporal``, ``cairn worker``); it needs the ``temporalio`` package.
"""

from __future__ import annotations

from cairn.runs.executor import RunExecutor
from cairn.runs.in_process import InProcessExecutor
from cairn.runs.service import Runs
from cairn.server.registry import AppRegistry
from cairn.server.services import Services
from cairn.server.settings import IN_PROCESS, ServerSettings
from cairn.sessions.run_store import RunStore, run_store_for


def open_runs(settings: ServerSettings, services: Services, apps: AppRegistry) -> Runs:
    """The runs service of a server: its store's runs, executed as ``settings`` says."""
    sessions = services.session_service
    store = run_store_for(sessions)
    executor: RunExecutor
    if settings.executor == IN_PROCESS:
        executor = InProcessExecutor(
            store,
            sessions,
            apps.runner,
            lease_ttl=settings.lease_ttl,
            max_runs=settings.max_runs,
        )
    else:
        executor = _temporal_executor(settings, store)
    return Runs(store, sessions, executor, apps.runner)


def _temporal_executor(settings: ServerSettings, store: RunStore) -> RunExecutor:
    try:
        from cairn.runs.temporal import DEFAULT_TASK_QUEUE, TemporalExecutor
    except ImportError as exc:
        raise RuntimeError(
            f"--executor {settings.executor} needs cairn's Temporal executor "
            f"(cairn.runs.temporal, with the temporalio package), which cannot be imported: "
            f"{exc}. Install cairn[temporal], or use --executor in-process"
        ) from None
    return TemporalExecutor(
        store, settings.executor, task_queue=settings.task_queue or DEFAULT_TASK_QUEUE
    )
