"""cairn's routes for the invocations this server process runs: which, and stopping one."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from cairn.server.context import Server
from cairn.server.errors import NotRunningHereError
from cairn.server.models import SERVER_ERRORS, RunningInvocationsJSON, StoppedInvocation, ok

router = APIRouter(prefix="/cairn", tags=["cairn"], responses=SERVER_ERRORS)
SESSION = "/apps/{app_name}/users/{user_id}/sessions/{session_id}"


@router.get(
    SESSION + "/invocations/running",
    summary="The session's invocations that this server process runs now",
    response_model=None,
    responses=ok(RunningInvocationsJSON, 404, 422),
)
async def running_invocations(app_name: str, user_id: str, session_id: str, ctx: Server) -> Any:
    await ctx.session_head(app_name, user_id, session_id)
    return {"invocationIds": ctx.running.of_session((app_name, user_id, session_id))}


@router.post(
    SESSION + "/invocations/{invocation_id}/stop",
    summary="Stop an invocation this process runs; what it committed stays (409 if not here)",
    response_model=None,
    responses=ok(StoppedInvocation, 404, 409, 422),
)
async def stop_invocation(
    app_name: str, user_id: str, session_id: str, invocation_id: str, ctx: Server
) -> Any:
    """Cancels the invocation's task and waits for its end. It then shows as ``interrupted``
    in the session's interrupts when it stopped mid-call, and can be continued with
    ``invocationId`` (``/run_sse``) like one whose process died."""
    await ctx.session_head(app_name, user_id, session_id)
    invocation = ctx.running.find((app_name, user_id, session_id), invocation_id)
    if invocation is None:
        raise NotRunningHereError(
            f"invocation {invocation_id!r} of session {session_id!r} is not running in this "
            "server process: it has ended, paused, or runs in another process (stop it "
            "there). GET .../invocations/running lists the ones running here; "
            "GET /cairn/.../interrupts shows what the session waits for."
        )
    await invocation.stop()
    return {"invocationId": invocation_id, "stopped": True}
