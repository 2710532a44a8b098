"""Executing one run: claim its row, run (or resume) its invocation, settle its row.

Every executor runs a run through ``execute_run``: the in-process one in a task per
session, the Temporal one in an activity. A run may be executed more than once (its
process died, a worker retried it): the log says what it already did, so its message is
never stored twice, an answer never sent twice, and a finished invocation never run
again.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import Any

from cairn.errors import CairnError, InvocationNotFoundError, LeaseLostError
from cairn.events.event import Event
from cairn.events.interrupts import pending_interrupts
from cairn.runners.outcome import InvocationOutcome
from cairn.runners.runner import Runner
from cairn.runs.request import RunRequest
from cairn.sessions.run_store import RunStatus, RunStore, StoredRun
from cairn.sessions.uninterrupted import uninterrupted

logger = logging.getLogger(__name__)

RELEASED = ""
"""The owner of a run given back by an executor that stopped: any executor may take it."""

OnEvent = Callable[[Event], Awaitable[None] | None]
"""Called with every event of the run as the Runner yields it (partial ones too)."""


async def execute_run(
    runner: Runner,
    store: RunStore,
    run: StoredRun,
    *,
    owner: str,
    take_over: bool = False,
    on_event: OnEvent | None = None,
    on_failure: Callable[[BaseException], None] | None = None,
    stopping: Callable[[], bool] | None = None,
    outcome: InvocationOutcome | None = None,
) -> StoredRun:
    """Execute ``run`` as ``owner`` and return its settled row (``outcome``, if given, is
    the Runner's account of the invocation's end).

    The row is claimed first (``pending``, or also ``running`` with ``take_over``: its
    previous owner is gone); when another executor claimed it, or it was cancelled
    meanwhile, nothing runs and the current row is returned. The run ends ``paused``
    (its invocation waits for an answer), ``done``, ``failed`` (``error`` says why) or
    ``cancelled`` (its task was cancelled, or its lease taken over by a cancel; what it
    committed stays). A cancellation of the caller is raised again once the row says so.

    ``on_failure`` gets the exception a failed run raised (an in-process listener may
    show it as it is). When ``stopping()`` is true as the run is cancelled, its executor
    is shutting down: the row goes back to ``pending`` without owner, for the next
    executor that starts to resume it.
    """
    key = run.key
    expect = {RunStatus.PENDING, RunStatus.RUNNING} if take_over else {RunStatus.PENDING}
    claimed = await store.update_run(
        *key,
        run.run_id,
        expect_status=expect,
        status=RunStatus.RUNNING,
        owner=owner,
        started_at=time.time(),
        attempts=run.attempts + 1,
    )
    if claimed is None:
        return await store.get_run(*key, run.run_id) or run
    outcome = outcome if outcome is not None else InvocationOutcome()
    try:
        await _run_invocation(
            runner, claimed, on_event, outcome, run_before=run.started_at is not None
        )
    except asyncio.CancelledError:
        if stopping is not None and stopping():
            await uninterrupted(_release(store, claimed, owner))
        else:
            await _settle(store, claimed, owner, RunStatus.CANCELLED)
        raise
    except LeaseLostError as error:
        current = await uninterrupted(_current(store, claimed))
        if current.cancel is not None:
            return await _settle(store, claimed, owner, RunStatus.CANCELLED)
        return await uninterrupted(_failed(store, claimed, owner, error, on_failure))
    except Exception as error:
        return await uninterrupted(_failed(store, claimed, owner, error, on_failure))
    waiting = (
        bool(outcome.pending) if outcome.pending is not None else await _waiting(runner, claimed)
    )
    status = RunStatus.PAUSED if waiting else RunStatus.DONE
    return await _settle(store, claimed, owner, status)


async def _run_invocation(
    runner: Runner,
    run: StoredRun,
    on_event: OnEvent | None,
    outcome: InvocationOutcome,
    *,
    run_before: bool,
) -> None:
    """Rewind if asked, then start, resume or (finished already) skip the invocation;
    ``outcome`` learns what it left waiting when it ran to its end. ``run_before``: this
    request was started before (by an executor that died)."""
    request = RunRequest.from_json(run.request)
    who: dict[str, Any] = {"user_id": run.user_id, "session_id": run.session_id}
    config = request.run_config(run.strategy)
    if request.rewind_before is not None:
        with contextlib.suppress(InvocationNotFoundError):  # rewound already, or unknown
            await runner.rewind_async(
                **who, rewind_before_invocation_id=request.rewind_before, run_config=config
            )
    done = await runner.session_service.list_invocation_events(
        app_name=run.app_name, invocation_id=run.run_id, **who
    )
    events: AsyncGenerator[Event, None]
    if done and (not request.continuing or _answers_committed(done, request)):
        # Its message (or its answers) is committed: never send it again. Started before
        # (its executor died), an invocation that ended, or that waits for answers only a
        # person can give, is not run again.
        if run_before and _ended_or_waiting(done):
            return
        events = runner.run_async(
            invocation_id=run.run_id, run_config=config, outcome=outcome, **who
        )
    elif request.continuing:
        events = runner.run_async(
            invocation_id=run.run_id,
            new_message=request.new_message,
            run_config=config,
            yield_user_message=request.new_message is not None,
            outcome=outcome,
            **who,
        )
    else:
        if request.new_message is None:
            raise ValueError(
                f"run {run.run_id!r} has no newMessage and does not continue an invocation; "
                "submit it with a message, or as continuing its invocation"
            )
        events = runner.run_async(
            new_message=request.new_message,
            state_delta=request.state_delta,
            new_invocation_id=run.run_id,
            run_config=config,
            yield_user_message=True,
            outcome=outcome,
            **who,
        )
    async with contextlib.aclosing(events) as running:
        async for event in running:
            if on_event is not None:
                delivered = on_event(event)
                if inspect.isawaitable(delivered):
                    await delivered


def _ended_or_waiting(events: Sequence[Event]) -> bool:
    """The invocation (its message committed) needs no run: its last event is its final
    response with nothing pending, or it waits for answers (not merely stopped mid-call)."""
    last = events[-1]
    if last.author == "user" or last.partial:
        return False
    pending = pending_interrupts(events)
    if pending:
        return all(interrupt.kind != "interrupted" for interrupt in pending)
    return last.is_final_response()


def _answers_committed(events: Sequence[Event], request: RunRequest) -> bool:
    """A user event of the invocation already carries the request's answers (matched by
    call id, or by function name for an answer without one)."""
    answers = (
        request.new_message.parts or [] if request.new_message is not None else []
    )  # a continuing run without message (a resume) sends nothing
    wanted = {
        part.function_response.id or f"name:{part.function_response.name}"
        for part in answers
        if part.function_response is not None
    }
    if not wanted:
        return True
    stored: set[str] = set()
    for event in events:
        if event.author == "user":
            for response in event.get_function_responses():
                stored.update({response.id or "", f"name:{response.name}"})
    return wanted <= stored


async def _waiting(runner: Runner, run: StoredRun) -> bool:
    """Whether the run's invocation waits for an answer (an interrupt of it is pending)."""
    events = await runner.session_service.list_invocation_events(
        app_name=run.app_name,
        user_id=run.user_id,
        session_id=run.session_id,
        invocation_id=run.run_id,
    )
    return bool(events) and bool(pending_interrupts(events))


async def _current(store: RunStore, run: StoredRun) -> StoredRun:
    return await store.get_run(*run.key, run.run_id) or run


async def _failed(
    store: RunStore,
    run: StoredRun,
    owner: str,
    error: BaseException,
    on_failure: Callable[[BaseException], None] | None,
) -> StoredRun:
    settled = await _settle(store, run, owner, RunStatus.FAILED, error=_error_json(error))
    if on_failure is not None:
        on_failure(error)
    return settled


async def _release(store: RunStore, run: StoredRun, owner: str) -> None:
    """Give the run back (its executor stops): pending, owned by nobody, resumed later."""
    await store.update_run(
        *run.key,
        run.run_id,
        expect_owner=owner,
        expect_status={RunStatus.RUNNING},
        status=RunStatus.PENDING,
        owner=RELEASED,
    )


async def _settle(
    store: RunStore,
    run: StoredRun,
    owner: str,
    status: RunStatus,
    *,
    error: dict[str, Any] | None = None,
) -> StoredRun:
    """Write how the run ended (only while ``owner`` still owns it), then report it. The
    write is whole even if the caller is cancelled meanwhile (``uninterrupted``, handed the
    store's own call: an in-memory store's runs in place)."""
    settled = await uninterrupted(
        store.update_run(
            *run.key,
            run.run_id,
            expect_owner=owner,
            expect_status={RunStatus.RUNNING},
            status=status,
            ended_at=time.time(),
            error=error,
        )
    )
    return settled if settled is not None else await uninterrupted(_current(store, run))


def _error_json(error: BaseException) -> dict[str, Any]:
    """How a failure is shown in the row: a cairn error's own message (it names what was
    wrong and how to fix it); anything else a generic text and an id to find it in the log."""
    if isinstance(error, CairnError):
        return {"type": type(error).__name__, "message": str(error)}
    error_id = uuid.uuid4().hex
    logger.error("run failed, error %s: %s", error_id, type(error).__name__, exc_info=error)
    return {
        "type": type(error).__name__,
        "message": "the run failed; the server's log has the details under error id "
        f"{error_id}; quote that id when you report it.",
        "errorId": error_id,
    }
