"""``Runs``: start, read, list, cancel, stream and wait for runs (HTTP and library alike).

A run is one invocation of a session with a row (``cairn.sessions.run_store``) saying
where it is: queued, running, paused, done, failed or cancelled. ``create`` stores the
row and hands it to the executor (in this process, or Temporal's workers); the run's
events are committed to the session's log as the Runner makes them, and ``stream``
reads them from there (and live, partial chunks too, when this process runs it).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Collection
from typing import Any, TypedDict, Unpack

from google.genai import types

from cairn.agents.invocation_context import new_invocation_id
from cairn.agents.run_config import MultitaskStrategy
from cairn.errors import (
    InvalidCursorError,
    InvalidRunRequestError,
    InvocationNotFoundError,
    RunNotFoundError,
    SessionBusyError,
    SessionNotFoundError,
)
from cairn.events.event import Event
from cairn.runs.executor import RunExecutor
from cairn.runs.in_process import RunnerFor
from cairn.runs.request import RunRequest
from cairn.runs.stream import run_events
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.run_store import (
    MAX_RUNS_PER_READ,
    CancelRequest,
    RunStatus,
    RunStore,
    StoredRun,
)

_FIRST_WAIT = 0.01
_MAX_WAIT = 0.25


class RunOptions(TypedDict, total=False):
    """What a run is asked to do (``Runs.create``/``start``'s keywords; all optional)."""

    new_message: types.Content | None
    """Starts an invocation, or answers the pending interrupts of one (continuing it)."""
    state_delta: dict[str, Any] | None
    invocation_id: str | None
    """Continues that invocation."""
    streaming: bool
    custom_metadata: dict[str, Any] | None
    strategy: MultitaskStrategy | str
    """What to do when the session is busy (default ``enqueue``)."""
    webhook: str | None
    """Called when the run ends or pauses."""
    metadata: dict[str, Any] | None
    run_id: str | None
    """The id of a new invocation's run (default: a new one). A run with that id already in
    the session raises ``AlreadyExistsError``: a caller resending a request under the same
    id (the A2A server does, for a message it already acted on) never starts it twice."""


@dataclasses.dataclass(frozen=True)
class RunsPage:
    """Runs, newest first; ``next_cursor`` reads the next (older) page."""

    runs: list[StoredRun]
    next_cursor: str | None = None


@dataclasses.dataclass(frozen=True)
class StartedRun:
    """A run just submitted, and its events from its start (when it executes here)."""

    run: StoredRun
    events: AsyncIterator[Event] | None


class Runs:
    """The runs of one store, executed by ``executor``."""

    def __init__(
        self,
        store: RunStore,
        sessions: BaseSessionService,
        executor: RunExecutor,
        runner_for: RunnerFor,
    ) -> None:
        self.store = store
        self.sessions = sessions
        self.executor = executor
        self.runner_for = runner_for

    # -- starting ------------------------------------------------------------------------------
    async def create(
        self, app_name: str, user_id: str, session_id: str, **options: Unpack[RunOptions]
    ) -> StoredRun:
        """Store a run and queue it; returns its row (``pending``, or further along).

        ``new_message`` starts a new invocation, unless it answers pending interrupts: then
        it continues their invocation (the run's id is that invocation's, and a paused run
        of it goes back to ``pending``). ``invocation_id`` continues that invocation.
        Raises ``SessionNotFoundError``, ``InvocationNotFoundError``, ``InvalidRunRequestError``
        and, for ``reject`` on a busy session, ``SessionBusyError``.
        """
        started = await self.start(app_name, user_id, session_id, listen=False, **options)
        return started.run

    async def start(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        *,
        listen: bool = True,
        **options: Unpack[RunOptions],
    ) -> StartedRun:
        """``create``, and (``listen``) the run's events from its very first one when this
        process executes it: what a client waiting for the run's answer reads."""
        new_message = options.get("new_message")
        invocation_id = options.get("invocation_id")
        strategy = options.get("strategy", MultitaskStrategy.ENQUEUE)
        try:
            chosen = MultitaskStrategy(strategy)
        except ValueError:
            names = ", ".join(s.value for s in MultitaskStrategy)
            raise InvalidRunRequestError(
                f"there is no multitask strategy {strategy!r}; use one of {names}"
            ) from None
        key = {"app_name": app_name, "user_id": user_id, "session_id": session_id}
        if await self.sessions.get_initial_state(**key) is None:  # one row: it exists?
            raise SessionNotFoundError(**key)
        if new_message is None and invocation_id is None:
            raise InvalidRunRequestError(
                f"a run of session {session_id!r} needs new_message (newMessage) to start an "
                "invocation, or invocation_id (invocationId) to continue one"
            )
        answered = await self._answered_invocation(app_name, user_id, session_id, new_message)
        continued = invocation_id or answered
        if continued is not None:
            done = await self.sessions.list_invocation_events(**key, invocation_id=continued)
            if not done:
                raise InvocationNotFoundError(**key, invocation_id=continued)
        request = RunRequest(
            new_message=new_message,
            state_delta=options.get("state_delta"),
            continuing=continued is not None,
            streaming=options.get("streaming", False),
            custom_metadata=options.get("custom_metadata"),
        )
        if continued is None:
            run_id = options.get("run_id") or new_invocation_id()
            row = self._new_row(
                app_name,
                user_id,
                session_id,
                run_id,
                chosen,
                request,
                webhook=options.get("webhook"),
                metadata=options.get("metadata") or {},
            )
            run = await self.store.create_run(row)
        else:
            run = await self._continue(app_name, user_id, session_id, continued, chosen, request)
        queued = await self.executor.submit(run)
        # Nothing awaited between the submit and the subscription: no event is missed.
        return StartedRun(queued, self.executor.live(queued) if listen else None)

    async def _answered_invocation(
        self, app_name: str, user_id: str, session_id: str, message: types.Content | None
    ) -> str | None:
        """The invocation whose pending interrupts ``message`` answers (by call id, or by
        function name for an answer without id), or None."""
        responses = [
            part.function_response
            for part in (message.parts or [] if message is not None else [])
            if part.function_response is not None
        ]
        if not responses:
            return None
        runner = await self.runner_for(app_name)
        pending = await runner.list_pending_interrupts(user_id=user_id, session_id=session_id)
        for response in responses:
            for interrupt in pending:
                if (response.id and response.id == interrupt.id) or (
                    not response.id and response.name == interrupt.name
                ):
                    return interrupt.invocation_id
        return None  # answers nothing pending: the Runner says so when the run starts

    async def _continue(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        invocation_id: str,
        strategy: MultitaskStrategy,
        request: RunRequest,
    ) -> StoredRun:
        """The run of a continued invocation: its row back to ``pending`` (a new row when the
        invocation was not a run)."""
        key = (app_name, user_id, session_id, invocation_id)
        existing = await self.store.get_run(*key)
        if existing is None:
            return await self.store.create_run(
                self._new_row(app_name, user_id, session_id, invocation_id, strategy, request)
            )
        again = None
        if not existing.status.active:
            again = await self.store.update_run(
                *key,
                expect_status={existing.status},
                status=RunStatus.PENDING,
                request=request.to_json(),
                owner=self._owner(),
                cancel=None,
                error=None,
                started_at=None,
                ended_at=None,
                webhook_done=False,
            )
        if again is None:
            raise SessionBusyError(
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                waited=0.0,
                holder=invocation_id,
            )
        return again

    def _new_row(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        run_id: str,
        strategy: MultitaskStrategy,
        request: RunRequest,
        *,
        webhook: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> StoredRun:
        return StoredRun(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            run_id=run_id,
            seq=0,  # given by the store
            status=RunStatus.PENDING,
            strategy=strategy.value,
            request=request.to_json(),
            created_at=time.time(),
            owner=self._owner(),
            webhook=webhook,
            metadata=metadata or {},
        )

    def _owner(self) -> str | None:
        """Who will execute a new run: an in-process executor's name (so that a run whose
        process died before it started is found and taken over)."""
        owner = getattr(self.executor, "owner", None)
        return owner if isinstance(owner, str) else None

    # -- reading -------------------------------------------------------------------------------
    async def get(self, app_name: str, user_id: str, session_id: str, run_id: str) -> StoredRun:
        """The run's row; ``RunNotFoundError``."""
        run = await self.store.get_run(app_name, user_id, session_id, run_id)
        if run is None:
            raise RunNotFoundError(
                app_name=app_name, user_id=user_id, session_id=session_id, run_id=run_id
            )
        return run

    async def list(
        self,
        app_name: str,
        user_id: str,
        session_id: str | None = None,
        *,
        statuses: Collection[RunStatus] | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> RunsPage:
        """The user's runs (of one session, if given), newest first, a page at a time."""
        before = None
        if cursor is not None:
            if not cursor.isdigit():
                raise InvalidCursorError(
                    f"{cursor!r} is not a cursor of a runs page; pass a page's nextCursor "
                    "as it was given, or none for the first page"
                )
            before = int(cursor)
        limit = max(1, min(limit, MAX_RUNS_PER_READ))
        runs = await self.store.list_runs(
            app_name, user_id, session_id, statuses=statuses, limit=limit + 1, before_seq=before
        )
        more = len(runs) > limit
        runs = runs[:limit]
        return RunsPage(runs, str(runs[-1].seq) if more and runs else None)

    # -- stopping, waiting, streaming ------------------------------------------------------------
    async def cancel(
        self, app_name: str, user_id: str, session_id: str, run_id: str, *, wait: bool = False
    ) -> StoredRun:
        """Cancel the run: pending, it never starts; running, it stops at its next event
        boundary (what it committed stays). With ``wait``, returns once it has ended."""
        run = await self.get(app_name, user_id, session_id, run_id)
        if run.status.active:
            await self.executor.cancel(run, CancelRequest.CANCEL)
        if wait:
            return await self.wait(run)
        return await self.get(app_name, user_id, session_id, run_id)

    async def wait(self, run: StoredRun) -> StoredRun:
        """The run's row once it is no longer pending or running (ended, or paused)."""
        pause = _FIRST_WAIT
        while True:
            current = await self.get(*run.key, run.run_id)
            if not current.status.active:
                return current
            await asyncio.sleep(pause)
            pause = min(pause * 2, _MAX_WAIT)

    def stream(self, run: StoredRun, last_event_id: str | None = None) -> AsyncIterator[Event]:
        """The run's committed events after ``last_event_id`` (all, if None), then each new
        one until the run ends or pauses (partial chunks too when this process runs it)."""
        return run_events(self.sessions, self.store, self.executor, run, after=last_event_id)
