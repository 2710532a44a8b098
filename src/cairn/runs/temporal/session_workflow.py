"""A session's run queue as one Temporal workflow.

Runs of one session execute strictly one after another, in arrival order: ``enqueue``
(a signal, sent with signal-with-start) appends a run; ``submit_if_free`` (an update, sent
with update-with-start) accepts a run only when nothing runs or waits, for the ``reject``
strategy; an ``interrupt`` or ``rollback`` run cancels the running activity, waits until it
has stopped, then runs first (``rollback`` rewinding the stopped invocation away). Each run
is one activity (``cairn.execute_run``); the workflow holds ids only, and continues as new
every ``RunPolicy.runs_per_history`` runs, its queue carried over.
"""

from __future__ import annotations

import contextlib
import dataclasses
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from cairn.runs.temporal.messages import (
        CANCEL_SIGNAL,
        DELIVER_WEBHOOK,
        ENQUEUE_SIGNAL,
        EXECUTE_RUN,
        QUEUE_QUERY,
        SESSION_WORKFLOW,
        SETTLE_RUN,
        SUBMIT_IF_FREE_UPDATE,
        QueueView,
        RunOutcome,
        RunPolicy,
        RunTicket,
        SessionQueue,
        SettleRequest,
    )

_STOPPING = ("interrupt", "rollback")
_SHORT = timedelta(minutes=1)


@workflow.defn(name=SESSION_WORKFLOW)
class SessionRunsWorkflow:
    """One session's runs, one at a time, in order."""

    @workflow.init
    def __init__(self, state: SessionQueue) -> None:
        self._queue: list[RunTicket] = list(state.queue)
        self._policy: RunPolicy = state.policy
        self._current: RunTicket | None = None
        self._activity: workflow.ActivityHandle[Any] | None = None
        self._stopping: str | None = None
        self._webhooks: list[workflow.ActivityHandle[Any]] = []

    @workflow.run
    async def run(self, state: SessionQueue) -> None:
        ran = 0
        while True:
            idle = timedelta(seconds=self._policy.idle_timeout)
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(lambda: bool(self._queue), timeout=idle)
            if not self._queue:  # idle: end; the next run starts the workflow again
                await self._finish_webhooks()
                return
            full = ran >= self._policy.runs_per_history
            if full or workflow.info().is_continue_as_new_suggested():
                await self._finish_webhooks()
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(SessionQueue(queue=self._queue, policy=self._policy))
            await self._execute(self._queue.pop(0))
            ran += 1

    # -- messages ------------------------------------------------------------------------
    @workflow.signal(name=ENQUEUE_SIGNAL)
    def enqueue(self, ticket: RunTicket) -> None:
        """Queue ``ticket``: at the end, or (interrupt, rollback) first, stopping the run."""
        if self._queued(ticket.run_id):
            return  # a signal sent again (a retried submit)
        if ticket.strategy not in _STOPPING:
            self._queue.append(ticket)
            return
        if ticket.strategy == "rollback" and self._current is not None:
            ticket = dataclasses.replace(ticket, rewind_before=self._current.run_id)
        # After the interrupting runs that came before it, ahead of every enqueued one.
        first = next(
            (i for i, queued in enumerate(self._queue) if queued.strategy not in _STOPPING),
            len(self._queue),
        )
        self._queue.insert(first, ticket)
        self._stop_current(ticket.strategy)

    @workflow.update(name=SUBMIT_IF_FREE_UPDATE)
    def submit_if_free(self, ticket: RunTicket) -> bool:
        """Queue ``ticket`` only if the session is free (``reject``); False when it is busy."""
        if self._queued(ticket.run_id):
            return True
        if self._current is not None or self._queue:
            return False
        self._queue.append(ticket)
        return True

    @workflow.signal(name=CANCEL_SIGNAL)
    def cancel_run(self, run_id: str) -> None:
        """Drop a queued run; stop the running one if it is ``run_id``."""
        self._queue = [queued for queued in self._queue if queued.run_id != run_id]
        if self._current is not None and self._current.run_id == run_id:
            self._stop_current("cancel")

    @workflow.query(name=QUEUE_QUERY)
    def queue(self) -> QueueView:
        running = self._current.run_id if self._current is not None else None
        return QueueView(running=running, queued=[ticket.run_id for ticket in self._queue])

    # -- running ---------------------------------------------------------------------------
    def _queued(self, run_id: str) -> bool:
        """Whether the run waits in the queue. (The running one may come again: a run that
        paused is submitted again with its answers, maybe before its activity has returned;
        a duplicate of a run that ended finds its row ended and does nothing.)"""
        return any(queued.run_id == run_id for queued in self._queue)

    def _stop_current(self, why: str) -> None:
        if self._activity is not None and self._stopping is None:
            self._stopping = why
            self._activity.cancel()

    async def _execute(self, ticket: RunTicket) -> None:
        policy = self._policy
        self._current, self._stopping = ticket, None
        self._activity = workflow.start_activity(
            EXECUTE_RUN,
            ticket,
            result_type=RunOutcome,
            start_to_close_timeout=timedelta(seconds=policy.run_timeout),
            heartbeat_timeout=timedelta(seconds=policy.heartbeat_timeout),
            retry_policy=RetryPolicy(
                initial_interval=timedelta(seconds=policy.retry_first),
                backoff_coefficient=2.0,
                maximum_interval=timedelta(seconds=policy.retry_max),
                maximum_attempts=0,  # until it ends: a dead worker's run is taken over
            ),
            # The next run starts only once this one has really stopped.
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        )
        try:
            outcome: RunOutcome = await self._activity
        except ActivityError as exc:
            # Cancelled while no worker held it, or timed out for good: the row still says
            # pending or running, so settle it here (what it committed stays).
            stopped = self._stopping is not None
            outcome = await workflow.execute_activity(
                SETTLE_RUN,
                SettleRequest(
                    ticket=ticket,
                    status="cancelled" if stopped else "failed",
                    reason=self._stopping or str(exc.cause or exc),
                ),
                result_type=RunOutcome,
                start_to_close_timeout=_SHORT,
                retry_policy=RetryPolicy(maximum_interval=timedelta(seconds=policy.retry_max)),
            )
        finally:
            self._current, self._activity, self._stopping = None, None, None
        if outcome.webhook_due:  # the queue moves on while the webhook is delivered
            self._webhooks.append(
                workflow.start_activity(
                    DELIVER_WEBHOOK,
                    ticket,
                    start_to_close_timeout=timedelta(minutes=10),
                    retry_policy=RetryPolicy(
                        initial_interval=timedelta(seconds=policy.retry_first),
                        maximum_interval=timedelta(minutes=5),
                        maximum_attempts=20,
                    ),
                )
            )

    async def _finish_webhooks(self) -> None:
        """Wait for the webhooks being delivered (a workflow that ends or continues as new
        would abandon them)."""
        pending, self._webhooks = self._webhooks, []
        for handle in pending:
            try:
                await handle
            except ActivityError:
                workflow.logger.warning("a run's webhook could not be delivered; given up")
