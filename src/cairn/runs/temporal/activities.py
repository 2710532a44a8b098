"""The activities a cairn worker runs: one run (the unchanged Runner, on the shared store),
settling a run whose activity ended without doing so, a run's webhook, a schedule's firing.

``execute_run`` heartbeats at every committed event and, between events, every quarter of
the heartbeat timeout (a long model or tool call), so a dead worker is noticed within the
timeout and its run retried elsewhere: the next attempt resumes the same invocation id,
completed work is not run again, a call in doubt follows cairn's rule (re-run only when
the tool is idempotent, else the run pauses on it), and the session's lease fences the
dead holder. A Temporal cancellation reaches the Runner as a task cancellation: the
invocation stops, and what it committed stays.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from cairn.errors import AlreadyExistsError, SessionBusyError
from cairn.events.event import Event
from cairn.runs.temporal.messages import (
    DELIVER_WEBHOOK,
    EXECUTE_RUN,
    FIRE_SCHEDULE,
    SETTLE_RUN,
    RunOutcome,
    RunTicket,
    ScheduleFiring,
    SettleRequest,
)
from cairn.runs.webhooks import deliver_run_webhook
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.lease import lease_holder
from cairn.sessions.run_store import (
    CancelRequest,
    RunStatus,
    StoredRun,
    run_store_for,
)

if TYPE_CHECKING:
    from cairn.runners.runner import Runner
    from cairn.runs.temporal.queues import SessionQueues

logger = logging.getLogger(__name__)

RunnerFor = Callable[[str], Awaitable["Runner"]]
"""The Runner of an app, by the app's name (``AppNotFoundError`` if not served here)."""

_MIN_BEAT = 0.2


class RunActivities:
    """The activities of one worker: its session store, its apps' Runners, and the queues
    (to enqueue the runs a schedule fires)."""

    def __init__(
        self,
        session_service: BaseSessionService,
        runner_for: RunnerFor,
        queues: SessionQueues,
    ) -> None:
        self.session_service = session_service
        self.runner_for = runner_for
        self.queues = queues
        self.owner = lease_holder("runs")

    @property
    def all(self) -> list[Callable[..., Any]]:
        """The activity functions, for ``temporalio.worker.Worker(activities=...)``."""
        return [self.execute_run, self.settle_run, self.deliver_webhook, self.fire_schedule]

    @activity.defn(name=EXECUTE_RUN)
    async def execute_run(self, ticket: RunTicket) -> RunOutcome:
        """Execute (or resume) the run; return how its row ended."""
        from cairn.runs.execute import execute_run

        store = run_store_for(self.session_service)
        run = await store.get_run(ticket.app_name, ticket.user_id, ticket.session_id, ticket.run_id)
        if run is None:
            return RunOutcome(run_id=ticket.run_id, status="missing")
        if ticket.rewind_before and not run.request.get("rewindBefore"):
            request = {**run.request, "rewindBefore": ticket.rewind_before}
            run = (
                await store.update_run(
                    *run.key, run.run_id, expect_status={RunStatus.PENDING}, request=request
                )
                or run
            )
        runner = await self.runner_for(ticket.app_name)
        beats = asyncio.create_task(_beat_between_events())
        try:
            settled = await execute_run(
                runner, store, run, owner=self.owner, take_over=True, on_event=_beat_on_event
            )
        except asyncio.CancelledError:
            if activity.is_worker_shutdown():
                await self._hand_back(run)
                raise ApplicationError(
                    "the worker stopped during the run; another worker resumes it"
                ) from None
            raise
        finally:
            beats.cancel()
        return _outcome(settled)

    @activity.defn(name=SETTLE_RUN)
    async def settle_run(self, request: SettleRequest) -> RunOutcome:
        """End a run whose activity ended without settling its row (cancelled while no
        worker held it, or given up on); a row already ended is left as it is."""
        ticket = request.ticket
        store = run_store_for(self.session_service)
        key = (ticket.app_name, ticket.user_id, ticket.session_id, ticket.run_id)
        status = RunStatus(request.status)
        changes: dict[str, Any] = {"status": status, "ended_at": time.time()}
        if status is RunStatus.FAILED:
            changes["error"] = {
                "type": "RunAbandonedError",
                "message": "the run's workers stopped answering and its retries ran out",
            }
        settled = await store.update_run(
            *key, expect_status={RunStatus.PENDING, RunStatus.RUNNING}, **changes
        )
        if settled is not None and status is RunStatus.CANCELLED and settled.cancel is None:
            settled = await store.update_run(*key, cancel=CancelRequest(_cancel_of(request)))
        current = settled or await store.get_run(*key)
        if current is None:
            return RunOutcome(run_id=ticket.run_id, status="missing")
        return _outcome(current)

    @activity.defn(name=DELIVER_WEBHOOK)
    async def deliver_webhook(self, ticket: RunTicket) -> None:
        """Call the run's webhook with the run, unless it was delivered already."""
        store = run_store_for(self.session_service)
        run = await store.get_run(ticket.app_name, ticket.user_id, ticket.session_id, ticket.run_id)
        if run is None or not run.webhook or run.webhook_done:
            return
        # Signed, retried with backoff, then marked delivered (or given up on) in the row.
        await deliver_run_webhook(store, run)

    @activity.defn(name=FIRE_SCHEDULE)
    async def fire_schedule(self, firing: ScheduleFiring) -> str | None:
        """Create the run a schedule's firing starts and queue it; its id (None: the
        schedule is gone or disabled). A retried firing finds its run and queues it again."""
        store = run_store_for(self.session_service)
        schedule = await store.get_schedule(firing.app_name, firing.user_id, firing.schedule_id)
        if schedule is None or not schedule.enabled:
            return None
        # One firing, one run: the id comes from the firing workflow's run (its retries share it).
        info = activity.info()
        fired = uuid.uuid5(uuid.NAMESPACE_URL, info.workflow_run_id or info.activity_id)
        run_id = f"e-{fired}"
        session_id = schedule.session_id or f"s-{fired}"
        if schedule.session_id is None:
            with contextlib.suppress(AlreadyExistsError):
                await self.session_service.create_session(
                    app_name=schedule.app_name, user_id=schedule.user_id, session_id=session_id
                )
        run = StoredRun(
            app_name=schedule.app_name,
            user_id=schedule.user_id,
            session_id=session_id,
            run_id=run_id,
            seq=0,
            status=RunStatus.PENDING,
            strategy=schedule.strategy,
            request=dict(schedule.request),
            created_at=time.time(),
            webhook=schedule.webhook,
            metadata={**schedule.metadata, "scheduleId": schedule.schedule_id},
        )
        try:
            run = await store.create_run(run)
        except AlreadyExistsError:
            found = await store.get_run(*run.key, run_id)
            if found is None or not found.status.active:
                return run_id
            run = found
        await store.advance_schedule(schedule, next_run_at=schedule.next_run_at, last_run_id=run_id)
        with contextlib.suppress(SessionBusyError):  # reject, on a busy session: cancelled
            await self.queues.submit(store, run)
        return run_id

    async def _hand_back(self, run: StoredRun) -> None:
        """The worker is stopping: the run (settled cancelled by ``execute_run``) goes back to
        pending for the retry on another worker, unless someone asked it to stop."""
        store = run_store_for(self.session_service)
        current = await store.get_run(*run.key, run.run_id)
        if current is None or current.cancel is not None:
            return
        await store.update_run(
            *run.key,
            run.run_id,
            expect_status={RunStatus.CANCELLED, RunStatus.RUNNING},
            expect_owner=self.owner,
            status=RunStatus.PENDING,
            ended_at=None,
        )


def _outcome(run: StoredRun) -> RunOutcome:
    settled = run.status.ended or run.status is RunStatus.PAUSED
    due = settled and bool(run.webhook) and not run.webhook_done
    return RunOutcome(run_id=run.run_id, status=run.status.value, webhook_due=due)


def _cancel_of(request: SettleRequest) -> str:
    known = {item.value for item in CancelRequest}
    return request.reason if request.reason in known else CancelRequest.CANCEL.value


def _beat_on_event(event: Event) -> None:
    """A committed event: the run is alive (the heartbeat carries the event's id)."""
    activity.heartbeat(event.id)


async def _beat_between_events() -> None:
    """Heartbeat while a long model or tool call runs, four times per heartbeat timeout."""
    timeout = activity.info().heartbeat_timeout
    every = max(_MIN_BEAT, timeout.total_seconds() / 4) if timeout else 5.0
    while True:
        activity.heartbeat()
        await asyncio.sleep(every)
