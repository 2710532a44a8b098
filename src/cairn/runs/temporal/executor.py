"""``TemporalExecutor``: the API server's side of runs on Temporal.

A submitted run (its row stored, ``pending``) is queued on its session's workflow
(``SessionRunsWorkflow``) by its strategy; workers (``cairn worker``) execute it. API servers
and workers scale separately and share only the session store and the Temporal server.
"""

from __future__ import annotations

import time

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from cairn.runs.executor import RunExecutor
from cairn.runs.temporal.messages import QueueView, RunPolicy
from cairn.runs.temporal.queues import SessionQueues
from cairn.runs.temporal.schedules import TemporalSchedules
from cairn.runs.temporal.target import (
    DEFAULT_TASK_QUEUE,
    TemporalTarget,
    TemporalUnavailableError,
    connect,
)
from cairn.sessions.run_store import CancelRequest, RunStatus, RunStore, StoredRun

_UNREACHABLE = {RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED}


class TemporalExecutor(RunExecutor):
    """Runs executed by Temporal workers polling ``task_queue`` at ``target``
    (``temporal://HOST:PORT[/NAMESPACE]``). ``client`` (already connected) replaces the
    connection ``start`` would make."""

    name = "temporal"

    def __init__(
        self,
        store: RunStore,
        target: str | TemporalTarget,
        *,
        task_queue: str = DEFAULT_TASK_QUEUE,
        policy: RunPolicy | None = None,
        client: Client | None = None,
    ) -> None:
        self.store = store
        self.target = target if isinstance(target, TemporalTarget) else TemporalTarget.parse(target)
        self.task_queue = task_queue
        self.policy = policy or RunPolicy()
        self._client = client

    async def start(self) -> None:
        if self._client is None:
            self._client = await connect(self.target)

    @property
    def client(self) -> Client:
        if self._client is None:
            raise RuntimeError("TemporalExecutor.start() has not been awaited yet")
        return self._client

    @property
    def queues(self) -> SessionQueues:
        return SessionQueues(self.client, self.task_queue, self.policy)

    @property
    def schedules(self) -> TemporalSchedules:
        """Cron schedules as Temporal Schedules (create one after storing its row)."""
        return TemporalSchedules(self.client, self.task_queue, self.policy)

    async def submit(self, run: StoredRun) -> StoredRun:
        try:
            return await self.queues.submit(self.store, run)
        except RPCError as exc:
            if exc.status not in _UNREACHABLE:
                raise
            error = TemporalUnavailableError(self.target, exc.message)
            await self.store.update_run(  # no workflow holds it: it would wait forever
                *run.key,
                run.run_id,
                expect_status={RunStatus.PENDING},
                status=RunStatus.CANCELLED,
                ended_at=time.time(),
                error={"type": type(error).__name__, "message": str(error)},
            )
            raise error from None

    async def cancel(self, run: StoredRun, how: CancelRequest) -> None:
        try:
            await self.queues.cancel(self.store, run, how)
        except RPCError as exc:
            if exc.status not in _UNREACHABLE:
                raise
            raise TemporalUnavailableError(self.target, exc.message) from None

    async def queue(self, app_name: str, user_id: str, session_id: str) -> QueueView:
        """The session's running run and queued runs, as its workflow holds them."""
        return await self.queues.view(app_name, user_id, session_id)
