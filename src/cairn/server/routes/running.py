"""cairn's routes for the invocations this server process runs: which, and stopping one.

Views over runs (``cairn.runs``): every invocation the server starts is a run. Stopping
one is cancelling its run and waiting for its end, from any process sharing the store.
"""

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
    here = ctx.runs.executor.running_here(app_name, user_id, session_id)
    legacy = ctx.running.of_session((app_name, user_id, session_id))
    return {"invocationIds": [*here, *(i for i in legacy if i not in here)]}


@router.post(
    SESSION + "/invocations/{invocation_id}/stop",
    summary="Stop a running invocation; what it committed stays (409 if it does not run)",
    response_model=None,
    responses=ok(StoppedInvocation, 404, 409, 422),
)
async def stop_invocation(
    app_name: str, user_id: str, session_id: str, invocation_id: str, ctx: Server
) -> Any:
    """Cancels the invocation's run and waits for its end (``POST .../runs/{id}/cancel?wait=
    true``). It then shows as ``interrupted`` in the session's interrupts when it stopped
    mid-call, and can be continued with ``invocationId`` (``/run_sse``) like one whose
    process died."""
    await ctx.session_head(app_name, user_id, session_id)
    key = (app_name, user_id, session_id)
    run = await ctx.runs.store.get_run(*key, invocation_id)
    if run is not None and run.status.active:
        await ctx.runs.cancel(*key, invocation_id, wait=True)
        return {"invocationId": invocation_id, "stopped": True}
    invocation = ctx.running.find(key, invocation_id)
    if invocation is not None:  # started by library code through ServerContext.invoke
        await invocation.stop()
        return {"invocationId": invocation_id, "stopped": True}
    raise NotRunningHereError(
        f"invocation {invocation_id!r} of session {session_id!r} is not running in this "
        "server process, nor in another process sharing its store: it has ended, paused, "
        "or never ran. GET .../runs lists the session's runs; GET /cairn/.../interrupts "
        "shows what the session waits for."
    )
