"""The run executor a server uses (``ServerSettings.executor``) and the ``Runs`` over it.

``in-process``: runs execute in this server's process (``cairn.runs.in_process``).
``temporal``: the seam for Temporal's workers. The module ``cairn.runs.temporal`` provides
``executor_from_settings(settings, store, sessions, runner_for) -> RunExecutor``; until it
is installed, a server asked for it refuses to start, naming what is missing.
"""

from __future__ import annotations

import importlib

from cairn.runs.executor import RunExecutor
from cairn.runs.in_process import InProcessExecutor
from cairn.runs.service import Runs
from cairn.server.registry import AppRegistry
from cairn.server.services import Services
from cairn.server.settings import ServerSettings
from cairn.sessions.run_store import run_store_for


def open_runs(settings: ServerSettings, services: Services, apps: AppRegistry) -> Runs:
    """The runs service of a server: its store's runs, executed as ``settings`` says."""
    sessions = services.session_service
    store = run_store_for(sessions)
    executor: RunExecutor
    if settings.executor == "temporal":
        try:
            temporal = importlib.import_module("cairn.runs.temporal")
        except ImportError as exc:
            raise RuntimeError(
                "CAIRN_EXECUTOR=temporal needs cairn's Temporal executor (cairn.runs.temporal, "
                f"with the temporalio package), which cannot be imported: {exc}. Install "
                "cairn[temporal], or use CAIRN_EXECUTOR=in-process"
            ) from None
        executor = temporal.executor_from_settings(settings, store, sessions, apps.runner)
    else:
        executor = InProcessExecutor(store, sessions, apps.runner, lease_ttl=settings.lease_ttl)
    return Runs(store, sessions, executor, apps.runner)
