"""What the executor, the session workflow and the activities pass each other: ids only.

cairn's log holds a run's events and its row (``cairn.sessions.run_store``) holds its
request and status, so Temporal carries nothing but which run to execute, in which order,
and how patiently. Plain dataclasses of JSON types: Temporal's default converter stores them.
"""

from __future__ import annotations

import dataclasses
from urllib.parse import quote

SESSION_WORKFLOW = "cairn.SessionRuns"
"""The workflow type of a session's run queue."""
SCHEDULE_WORKFLOW = "cairn.FireSchedule"
"""The workflow type a Temporal Schedule starts (one per firing)."""

EXECUTE_RUN = "cairn.execute_run"
SETTLE_RUN = "cairn.settle_run"
DELIVER_WEBHOOK = "cairn.deliver_webhook"
FIRE_SCHEDULE = "cairn.fire_schedule"

ENQUEUE_SIGNAL = "enqueue"
CANCEL_SIGNAL = "cancel_run"
SUBMIT_IF_FREE_UPDATE = "submit_if_free"
QUEUE_QUERY = "queue"


@dataclasses.dataclass(frozen=True)
class RunTicket:
    """One run to execute: its row's key, the strategy it came with, and (rollback) the
    invocation to rewind away before it runs."""

    app_name: str
    user_id: str
    session_id: str
    run_id: str
    strategy: str = "enqueue"
    rewind_before: str | None = None


@dataclasses.dataclass(frozen=True)
class RunPolicy:
    """How the session workflow runs its activities (seconds)."""

    heartbeat_timeout: float = 10.0
    """A worker that has not heartbeaten for this long is taken for dead: the run's activity
    is retried on another worker, which resumes the same invocation."""
    run_timeout: float = 24 * 3600.0
    """The longest one attempt at a run may take (an agent that runs longer is retried)."""
    retry_first: float = 1.0
    """The first retry's delay; each later one doubles, up to ``retry_max``."""
    retry_max: float = 30.0
    runs_per_history: int = 100
    """Runs after which the workflow continues as new (its queue carried over), keeping its
    own history small."""
    idle_timeout: float = 300.0
    """A session's workflow with an empty queue ends after this long (the next run starts it
    again)."""


@dataclasses.dataclass(frozen=True)
class SessionQueue:
    """The session workflow's input: the runs still queued (carried over by continue-as-new)
    and the policy."""

    queue: list[RunTicket] = dataclasses.field(default_factory=list)
    policy: RunPolicy = dataclasses.field(default_factory=RunPolicy)


@dataclasses.dataclass(frozen=True)
class QueueView:
    """What a session's workflow is doing: the run executing and the runs waiting, in order."""

    running: str | None
    queued: list[str]


@dataclasses.dataclass(frozen=True)
class RunOutcome:
    """How an attempt at a run ended: the row's status, and whether a webhook is due."""

    run_id: str
    status: str
    webhook_due: bool = False


@dataclasses.dataclass(frozen=True)
class SettleRequest:
    """Settle a run whose activity ended without settling it (cancelled while its worker was
    gone, or given up on)."""

    ticket: RunTicket
    status: str
    reason: str


@dataclasses.dataclass(frozen=True)
class ScheduleFiring:
    """A Temporal Schedule's firing of a cairn schedule (``StoredSchedule``)."""

    app_name: str
    user_id: str
    schedule_id: str
    task_queue: str
    policy: RunPolicy = dataclasses.field(default_factory=RunPolicy)


def session_workflow_id(task_queue: str, app_name: str, user_id: str, session_id: str) -> str:
    """The id of a session's queue workflow. Each part is quoted, so no two sessions share
    it; the task queue is one of them, so deployments sharing a Temporal namespace (each
    with its own queue and store) never signal each other's workflows."""
    parts = (quote(part, safe="") for part in (task_queue, app_name, user_id, session_id))
    return "cairn-session/" + "/".join(parts)


def schedule_id_of(task_queue: str, app_name: str, user_id: str, schedule_id: str) -> str:
    """The Temporal Schedule's id for a cairn schedule (its task queue a part, as above)."""
    parts = (quote(part, safe="") for part in (task_queue, app_name, user_id, schedule_id))
    return "cairn-schedule/" + "/".join(parts)
