"""A cairn worker: a Temporal worker that executes runs (``cairn worker`` runs one).

It polls one task queue for the session workflows, the schedule firings and their
activities. Workflows are deterministic code over ids (sandboxed by the SDK, with cairn's
modules passed through); activities run the apps' Runners against the shared session
store. Any number of workers may poll the same queue, on any machines.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from cairn.runs.temporal.activities import RunActivities, RunnerFor
from cairn.runs.temporal.messages import RunPolicy
from cairn.runs.temporal.queues import SessionQueues
from cairn.runs.temporal.schedule_workflow import FireScheduleWorkflow
from cairn.runs.temporal.session_workflow import SessionRunsWorkflow
from cairn.runs.temporal.target import DEFAULT_TASK_QUEUE
from cairn.sessions.base_session_service import BaseSessionService

WORKFLOWS = [SessionRunsWorkflow, FireScheduleWorkflow]
STICKY_TIMEOUT = timedelta(seconds=3)
"""How long a session workflow's next task waits for the worker that has its state cached
before any worker takes it (replaying its short history): a dead worker stalls its sessions
this long, not the SDK's default 10 s."""
HEARTBEAT_FLUSH = timedelta(seconds=1)
"""The longest a heartbeat waits in the SDK before it is sent: a cancellation reaches a
run within about this long."""


def run_worker(
    client: Client,
    session_service: BaseSessionService,
    runner_for: RunnerFor,
    *,
    task_queue: str = DEFAULT_TASK_QUEUE,
    policy: RunPolicy | None = None,
    max_concurrent_runs: int = 100,
    graceful_shutdown: timedelta = timedelta(seconds=10),
    identity: str | None = None,
) -> Worker:
    """A worker (not yet running: ``async with worker:`` or ``await worker.run()``) whose
    activities run each app's Runner (``runner_for(app_name)``) on ``session_service``.
    ``policy`` is what the session workflows that schedule firings start are given."""
    activities = RunActivities(
        session_service, runner_for, SessionQueues(client, task_queue, policy)
    )
    return Worker(
        client,
        task_queue=task_queue,
        workflows=WORKFLOWS,
        activities=activities.all,
        max_concurrent_activities=max_concurrent_runs,
        graceful_shutdown_timeout=graceful_shutdown,
        max_heartbeat_throttle_interval=HEARTBEAT_FLUSH,
        default_heartbeat_throttle_interval=HEARTBEAT_FLUSH,
        identity=identity,
        sticky_queue_schedule_to_start_timeout=STICKY_TIMEOUT,
        workflow_runner=SandboxedWorkflowRunner(
            restrictions=SandboxRestrictions.default.with_passthrough_modules("cairn")
        ),
    )
