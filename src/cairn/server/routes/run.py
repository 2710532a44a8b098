"""ADK's ``/run`` (every event at once) and ``/run_sse`` (each event as it is committed)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator

from fastapi import APIRouter
from starlette.responses import Response, StreamingResponse

from cairn.agents.run_config import RunConfig, StreamingMode
from cairn.errors import SessionNotFoundError
from cairn.events.event import Event
from cairn.server.access import (
    Principal,
    check_app,
    check_new_user_id,
    check_state_writes,
    check_user,
)
from cairn.server.auth import Caller
from cairn.server.context import MISSING_SESSION_FOR_RUN, Server, ServerContext
from cairn.server.errors import InvalidRequestError
from cairn.server.invocations import Invocation
from cairn.server.models import SERVER_ERRORS, RunAgentRequest, events_response, ok, streams
from cairn.server.streaming import event_stream

router = APIRouter(tags=["run"], responses=SERVER_ERRORS)


async def run_events(
    ctx: ServerContext, request: RunAgentRequest, caller: Principal, *, streaming: bool
) -> AsyncGenerator[Event, None]:
    """The invocation the request asks for (checked first: the caller may run it as this
    user in this app; the app; a message or an id)."""
    check_app(caller, request.app_name)
    check_user(caller, request.user_id)
    check_new_user_id(request.user_id)
    check_state_writes(caller, request.state_delta)
    if request.new_message is None and request.invocation_id is None:
        raise InvalidRequestError(
            "the request needs newMessage (a Content) to start an invocation, or "
            "invocationId to continue one"
        )
    runner = await ctx.runner(request.app_name)
    config = RunConfig(
        streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE,
        custom_metadata=request.custom_metadata,
        multitask_strategy=request.multitask_strategy,
    )
    return _with_http_fixes(
        runner.run_async(
            user_id=request.user_id,
            session_id=request.session_id,
            invocation_id=request.invocation_id,
            new_message=request.new_message,
            state_delta=request.state_delta,
            run_config=config,
            yield_user_message=request.new_message is not None,
        )
    )


async def _with_http_fixes(events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
    """The Runner's events; a missing session's error names the fix an HTTP client has."""
    try:
        async with contextlib.aclosing(events) as running:
            async for event in running:
                yield event
    except SessionNotFoundError as error:
        raise SessionNotFoundError(
            app_name=error.app_name,
            user_id=error.user_id,
            session_id=error.session_id,
            hint=MISSING_SESSION_FOR_RUN,
        ) from None


def _invoke(
    ctx: ServerContext, events: AsyncGenerator[Event, None], request: RunAgentRequest
) -> Invocation:
    """The run in a tracked task, indexed by session and invocation (so it can be stopped)."""
    return ctx.invoke(
        events,
        (request.app_name, request.user_id, request.session_id),
        invocation_id=request.invocation_id,
        user_message_first=request.new_message is not None,
    )


@router.post(
    "/run",
    summary="Run an invocation; returns its events (each already committed)",
    responses=ok(list[Event], 400, 404, 409, 413, 422),
)
async def run(body: RunAgentRequest, ctx: Server, caller: Caller) -> Response:
    invocation = _invoke(ctx, await run_events(ctx, body, caller, streaming=False), body)
    return events_response(await invocation.collect())


@router.post(
    "/run_sse",
    summary="Run an invocation as server-sent events (partial chunks too when streaming)",
    response_class=StreamingResponse,
    responses=streams(400, 404, 409, 413, 422),
)
async def run_sse(body: RunAgentRequest, ctx: Server, caller: Caller) -> Response:
    events = await run_events(ctx, body, caller, streaming=body.streaming)
    return await event_stream(_invoke(ctx, events, body))
