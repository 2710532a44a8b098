"""Runs on Temporal, when one machine is not enough (``pip install 'cairn[temporal]'``).

Each session's runs queue in one Temporal workflow (``SessionRunsWorkflow``); each run is
one activity that runs the unchanged Runner on the shared session store, heartbeating at
each committed event, retried on another worker when its worker dies. cairn's log stays
the source of truth: Temporal holds ids, never events. API servers submit through
``TemporalExecutor``; ``cairn worker`` processes (``run_worker``) execute. This package
imports ``temporalio``; ``import cairn`` never does.
"""

from cairn.runs.temporal.dev_server import (
    TemporalCliNotFoundError,
    start_dev_server,
    temporal_cli_path,
)
from cairn.runs.temporal.executor import TemporalExecutor
from cairn.runs.temporal.messages import QueueView, RunPolicy
from cairn.runs.temporal.target import (
    DEFAULT_TASK_QUEUE,
    TemporalTarget,
    TemporalUnavailableError,
)
from cairn.runs.temporal.worker import run_worker

__all__ = [
    "DEFAULT_TASK_QUEUE",
    "QueueView",
    "RunPolicy",
    "TemporalCliNotFoundError",
    "TemporalExecutor",
    "TemporalTarget",
    "TemporalUnavailableError",
    "run_worker",
    "start_dev_server",
    "temporal_cli_path",
]
