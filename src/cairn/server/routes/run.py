"""ADK's ``/run`` (every event at once) and ``/run_sse`` (each event as it is committed).

Each request is a run (``cairn.runs``) the request waits for: queued behind the session's
other runs (``multitaskStrategy``, default ``enqueue``), executed by the server's
executor, its events read live. A client that leaves does not stop it.
"""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response, StreamingResponse

from cairn.events.event import Event
from cairn.server.access import (
    Principal,
    check_app,
    check_new_user_id,
    check_state_writes,
    check_user,
)
from cairn.server.auth import Caller
from cairn.server.context import Server, ServerContext
from cairn.server.errors import InvalidRequestError
from cairn.server.foreground import ForegroundRun, start_foreground
from cairn.server.models import SERVER_ERRORS, RunAgentRequest, events_response, ok, streams
from cairn.server.streaming import event_stream

router = APIRouter(tags=["run"], responses=SERVER_ERRORS)


async def start_run(
    ctx: ServerContext, request: RunAgentRequest, caller: Principal, *, streaming: bool
) -> ForegroundRun:
    """The run the request asks for (checked first: the caller may run it as this user in
    this app; the app; a message or an id), started and listened to."""
    check_app(caller, request.app_name)
    check_user(caller, request.user_id)
    check_new_user_id(request.user_id)
    check_state_writes(caller, request.state_delta)
    if request.new_message is None and request.invocation_id is None:
        raise InvalidRequestError(
            "the request needs newMessage (a Content) to start an invocation, or "
            "invocationId to continue one"
        )
    return await start_foreground(
        ctx,
        app_name=request.app_name,
        user_id=request.user_id,
        session_id=request.session_id,
        new_message=request.new_message,
        invocation_id=request.invocation_id,
        state_delta=request.state_delta,
        streaming=streaming,
        custom_metadata=request.custom_metadata,
        strategy=request.multitask_strategy,
    )


@router.post(
    "/run",
    summary="Run an invocation; returns its events (each already committed)",
    responses=ok(list[Event], 400, 404, 409, 413, 422),
)
async def run(body: RunAgentRequest, ctx: Server, caller: Caller) -> Response:
    started = await start_run(ctx, body, caller, streaming=False)
    return events_response(await started.collect())


@router.post(
    "/run_sse",
    summary="Run an invocation as server-sent events (partial chunks too when streaming)",
    response_class=StreamingResponse,
    responses=streams(400, 404, 409, 413, 422),
)
async def run_sse(body: RunAgentRequest, ctx: Server, caller: Caller) -> Response:
    return await event_stream(await start_run(ctx, body, caller, streaming=body.streaming))
