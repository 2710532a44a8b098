"""The client side of the session workflows: queue, refuse or stop runs by their strategy.

Used by the API server's ``TemporalExecutor`` and by a schedule's firing (an activity), so
a run reaches its session's queue the same way whoever submitted it.
"""

from __future__ import annotations

import time

from temporalio.client import Client, WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError, RPCStatusCode

from cairn.errors import SessionBusyError
from cairn.runs.temporal.messages import (
    CANCEL_SIGNAL,
    ENQUEUE_SIGNAL,
    QueueView,
    RunPolicy,
    RunTicket,
    SessionQueue,
    session_workflow_id,
)
from cairn.runs.temporal.session_workflow import SessionRunsWorkflow
from cairn.sessions.run_store import CancelRequest, RunStatus, RunStore, StoredRun

_STOPS = {"interrupt": CancelRequest.INTERRUPT, "rollback": CancelRequest.ROLLBACK}


class SessionQueues:
    """Sessions' run queues on one Temporal task queue."""

    def __init__(self, client: Client, task_queue: str, policy: RunPolicy | None = None) -> None:
        self.client = client
        self.task_queue = task_queue
        self.policy = policy or RunPolicy()

    async def submit(self, store: RunStore, run: StoredRun) -> StoredRun:
        """Queue the stored, pending ``run`` by its strategy (see ``RunExecutor.submit``)."""
        ticket = RunTicket(
            app_name=run.app_name,
            user_id=run.user_id,
            session_id=run.session_id,
            run_id=run.run_id,
            strategy=run.strategy,
            rewind_before=run.request.get("rewindBefore"),
        )
        workflow_id = session_workflow_id(self.task_queue, *run.key)
        if run.strategy == "reject":
            start = WithStartWorkflowOperation(
                SessionRunsWorkflow.run,
                SessionQueue(policy=self.policy),
                id=workflow_id,
                task_queue=self.task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            )
            accepted = await self.client.execute_update_with_start_workflow(
                SessionRunsWorkflow.submit_if_free, ticket, start_workflow_operation=start
            )
            if not accepted:
                await store.update_run(
                    *run.key,
                    run.run_id,
                    expect_status={RunStatus.PENDING},
                    status=RunStatus.CANCELLED,
                    ended_at=time.time(),
                    error={
                        "type": "SessionBusyError",
                        "message": "the session was busy and the run's strategy is reject",
                    },
                )
                view = await self.view(*run.key)
                raise SessionBusyError(
                    app_name=run.app_name,
                    user_id=run.user_id,
                    session_id=run.session_id,
                    waited=0.0,
                    holder=view.running or next(iter(view.queued), "a queued run"),
                )
        else:
            stop = _STOPS.get(run.strategy)
            if stop is not None:  # the row of the run it stops says why it ended
                for running in await self._running(store, run):
                    await store.update_run(
                        *running.key,
                        running.run_id,
                        expect_status={RunStatus.RUNNING},
                        cancel=stop,
                    )
            await self.client.start_workflow(
                SessionRunsWorkflow.run,
                SessionQueue(policy=self.policy),
                id=workflow_id,
                task_queue=self.task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                start_signal=ENQUEUE_SIGNAL,
                start_signal_args=[ticket],
            )
        current = await store.get_run(*run.key, run.run_id)
        return current or run

    async def cancel(self, store: RunStore, run: StoredRun, how: CancelRequest) -> None:
        """Stop ``run``: a pending one is marked cancelled (it will never start); a running
        one's activity is cancelled (it stops at once, what it committed stays)."""
        dropped = await store.update_run(
            *run.key,
            run.run_id,
            expect_status={RunStatus.PENDING},
            status=RunStatus.CANCELLED,
            cancel=how,
            ended_at=time.time(),
        )
        if dropped is None:
            await store.update_run(
                *run.key, run.run_id, expect_status={RunStatus.RUNNING}, cancel=how
            )
        handle = self.client.get_workflow_handle(session_workflow_id(self.task_queue, *run.key))
        try:
            await handle.signal(CANCEL_SIGNAL, run.run_id)
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise  # no workflow: the session's queue has ended, nothing runs there

    async def view(self, app_name: str, user_id: str, session_id: str) -> QueueView:
        """The session's running and queued runs (none when its workflow is not running)."""
        handle = self.client.get_workflow_handle(
            session_workflow_id(self.task_queue, app_name, user_id, session_id)
        )
        try:
            return await handle.query(SessionRunsWorkflow.queue)
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise
            return QueueView(running=None, queued=[])

    @staticmethod
    async def _running(store: RunStore, run: StoredRun) -> list[StoredRun]:
        return await store.list_runs(
            run.app_name, run.user_id, run.session_id, statuses={RunStatus.RUNNING}
        )
