"""cairn's interrupt routes: what a session waits for, and answering one (streamed)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from google.genai import types
from starlette.responses import Response, StreamingResponse

from cairn.errors import InterruptNotPendingError
from cairn.events.interrupts import Interrupt
from cairn.server.context import Server
from cairn.server.foreground import start_foreground
from cairn.server.models import SERVER_ERRORS, AnswerInterruptRequest, camel, ok, streams
from cairn.server.streaming import event_stream

router = APIRouter(prefix="/cairn", tags=["cairn"], responses=SERVER_ERRORS)
SESSION = "/apps/{app_name}/users/{user_id}/sessions/{session_id}"


@router.get(
    SESSION + "/interrupts",
    summary="The session's pending interrupts, oldest first",
    response_model=None,
    responses=ok(list[Interrupt], 404, 422),
)
async def list_interrupts(app_name: str, user_id: str, session_id: str, ctx: Server) -> list[Any]:
    runner = await ctx.runner(app_name)
    pending = await runner.list_pending_interrupts(user_id=user_id, session_id=session_id)
    return [camel(interrupt) for interrupt in pending]


@router.post(
    SESSION + "/interrupts/{interrupt_id}",
    summary="Answer an interrupt and run the resumed invocation (server-sent events)",
    response_class=StreamingResponse,
    responses=streams(400, 404, 409, 413, 422),
)
async def answer_interrupt(
    ctx: Server,
    app_name: str,
    user_id: str,
    session_id: str,
    interrupt_id: str,
    body: AnswerInterruptRequest,
) -> Response:
    """An ``interrupted`` invocation (its process died mid-call) is continued; the others
    get ``response`` as their answer (``{"result": value}`` unless it is an object)."""
    runner = await ctx.runner(app_name)
    pending = await runner.list_pending_interrupts(user_id=user_id, session_id=session_id)
    interrupt = next((i for i in pending if i.id == interrupt_id), None)
    if interrupt is None:
        raise InterruptNotPendingError(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            interrupt_id=interrupt_id,
            reason="no pending interrupt of the session has this id",
            pending=[i.id for i in pending],
        )
    if interrupt.kind == "interrupted":
        message = None
    else:
        response = body.response if isinstance(body.response, dict) else {"result": body.response}
        answer = types.FunctionResponse(id=interrupt.id, name=interrupt.name, response=response)
        message = types.Content(role="user", parts=[types.Part(function_response=answer)])
    started = await start_foreground(
        ctx,
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        new_message=message,
        invocation_id=interrupt.invocation_id,
        streaming=body.streaming,
    )
    return await event_stream(started)
