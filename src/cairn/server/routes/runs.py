"""cairn's run routes: start a run in the background, read, list, cancel and stream runs.

A run's id is its invocation's id. Its events are the session's log; ``.../stream``
gives them as server-sent events with their ids, so a client that lost its connection
rejoins with ``Last-Event-ID`` on any server sharing the store.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query
from fastapi.responses import JSONResponse
from starlette.responses import Response, StreamingResponse

from cairn.agents.run_config import MultitaskStrategy
from cairn.runs import view
from cairn.runs.service import Runs
from cairn.server.access import check_state_writes
from cairn.server.auth import Caller
from cairn.server.context import Server
from cairn.server.models import (
    SERVER_ERRORS,
    CreateRunRequest,
    Responses,
    RunJSON,
    RunsPageJSON,
    errors,
    ok,
    streams,
    wire_json,
)
from cairn.sessions.run_store import MAX_RUNS_PER_READ, RunStatus, StoredRun

router = APIRouter(prefix="/cairn", tags=["runs"], responses=SERVER_ERRORS)
USER = "/apps/{app_name}/users/{user_id}"
SESSION = USER + "/sessions/{session_id}"

Statuses = Annotated[
    list[RunStatus] | None,
    Query(alias="status", description="Only runs in these statuses (repeat for several)"),
]
Limit = Annotated[int, Query(ge=1, le=MAX_RUNS_PER_READ)]


def run_json(run: StoredRun, runs: Runs) -> dict[str, Any]:
    """A run as clients get it (``RunJSON``; who executes it is named, not its host)."""
    return view.run_json(run, executor=runs.executor.name)


def _accepted(model: Any, *statuses: int) -> Responses:
    return {
        202: {"model": model, "description": "Accepted: the run is queued"},
        **errors(*statuses),
    }


@router.post(
    SESSION + "/runs",
    summary="Start a run in the background; returns it at once (202)",
    status_code=202,
    response_model=None,
    responses=_accepted(RunJSON, 400, 404, 409, 413, 422),
)
async def create_run(
    app_name: str,
    user_id: str,
    session_id: str,
    body: CreateRunRequest,
    ctx: Server,
    caller: Caller,
) -> Response:
    """``newMessage`` starts an invocation (answers to pending interrupts continue theirs);
    ``invocationId`` continues one. ``multitaskStrategy`` says what to do when the session
    is busy: ``enqueue`` (default), ``reject`` (409), ``interrupt`` or ``rollback``."""
    check_state_writes(caller, body.state_delta)
    await ctx.runner(app_name)  # 404 for an app not served
    run = await ctx.runs.create(
        app_name,
        user_id,
        session_id,
        new_message=body.new_message,
        state_delta=body.state_delta,
        invocation_id=body.invocation_id,
        streaming=body.streaming,
        custom_metadata=body.custom_metadata,
        strategy=body.multitask_strategy or MultitaskStrategy.ENQUEUE,
        webhook=body.webhook,
        metadata=body.metadata,
    )
    return JSONResponse(run_json(run, ctx.runs), status_code=202)


@router.get(
    SESSION + "/runs",
    summary="The session's runs, newest first",
    response_model=None,
    responses=ok(RunsPageJSON, 404, 422),
)
async def list_session_runs(
    app_name: str,
    user_id: str,
    session_id: str,
    ctx: Server,
    status: Statuses = None,
    limit: Limit = 100,
    cursor: str | None = None,
) -> Any:
    await ctx.session_head(app_name, user_id, session_id)
    page = await ctx.runs.list(
        app_name, user_id, session_id, statuses=status, limit=limit, cursor=cursor
    )
    return {"runs": [run_json(r, ctx.runs) for r in page.runs], "nextCursor": page.next_cursor}


@router.get(
    USER + "/runs",
    summary="The user's runs in every session of the app, newest first",
    response_model=None,
    responses=ok(RunsPageJSON, 404, 422),
)
async def list_user_runs(
    app_name: str,
    user_id: str,
    ctx: Server,
    status: Statuses = None,
    limit: Limit = 100,
    cursor: str | None = None,
) -> Any:
    await ctx.apps.check(app_name)
    page = await ctx.runs.list(app_name, user_id, statuses=status, limit=limit, cursor=cursor)
    return {"runs": [run_json(r, ctx.runs) for r in page.runs], "nextCursor": page.next_cursor}


@router.get(
    SESSION + "/runs/{run_id}",
    summary="One run",
    response_model=None,
    responses=ok(RunJSON, 404, 422),
)
async def get_run(app_name: str, user_id: str, session_id: str, run_id: str, ctx: Server) -> Any:
    await ctx.apps.check(app_name)
    return run_json(await ctx.runs.get(app_name, user_id, session_id, run_id), ctx.runs)


@router.post(
    SESSION + "/runs/{run_id}/cancel",
    summary="Cancel a run (pending: it never starts; running: it stops, what it committed stays)",
    response_model=None,
    responses=ok(RunJSON, 404, 422),
)
async def cancel_run(
    app_name: str,
    user_id: str,
    session_id: str,
    run_id: str,
    ctx: Server,
    wait: Annotated[bool, Query(description="Answer once the run has ended")] = False,
) -> Any:
    await ctx.apps.check(app_name)
    run = await ctx.runs.cancel(app_name, user_id, session_id, run_id, wait=wait)
    return run_json(run, ctx.runs)


@router.get(
    SESSION + "/runs/{run_id}/stream",
    summary="The run's events as server-sent events, from the start or after Last-Event-ID",
    response_class=StreamingResponse,
    responses=streams(404, 422),
)
async def stream_run(
    app_name: str,
    user_id: str,
    session_id: str,
    run_id: str,
    ctx: Server,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> Response:
    """Each committed event comes with ``id: <event id>`` (partial chunks, only while this
    server executes the run, without); the stream ends when the run ends or pauses, with
    ``event: end`` and the run's JSON."""
    await ctx.apps.check(app_name)
    run = await ctx.runs.get(app_name, user_id, session_id, run_id)

    async def body() -> AsyncIterator[str]:
        async for event in ctx.runs.stream(run, last_event_id):
            if event.partial:
                yield f"data: {wire_json(event)}\n\n"
            else:
                yield f"id: {event.id}\ndata: {wire_json(event)}\n\n"
        final = await ctx.runs.get(app_name, user_id, session_id, run_id)
        yield f"event: end\ndata: {json.dumps(run_json(final, ctx.runs))}\n\n"

    return StreamingResponse(
        body(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
