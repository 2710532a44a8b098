"""Server-sent events: an invocation's events as ``data: <event json>`` lines, as they commit.

Errors before the first event that are the request's fault (unknown session, busy, bad
answer) become an HTTP error status; any later error, or the agent's own, ends the stream
with ``data: {"error": "..."}`` (a server failure: a generic message and its ``errorId``,
the detail only in the server's log). A client that disconnects does not stop the
invocation: it runs to its end or its pause, every event committed, and can be read from
the session's log.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from starlette.responses import StreamingResponse

from cairn.server.errors import failure_of, is_client_error
from cairn.server.invocations import Failed, Listened
from cairn.server.models import wire_json


def sse_data(payload: str) -> str:
    return f"data: {payload}\n\n"


def sse_error(error: Exception) -> str:
    """The stream's last event: a 4xx error's type and message; a 5xx's safe detail and id."""
    failure = failure_of(error)
    if failure.error_id is None:
        message = str(error) or type(error).__name__
        return sse_data(json.dumps({"error": f"{type(error).__name__}: {message}"}))
    return sse_data(json.dumps({"error": failure.detail, "errorId": failure.error_id}))


async def event_stream(invocation: Listened) -> StreamingResponse:
    """A ``text/event-stream`` response of ``invocation``; raises a client error that came
    first. The response stops listening when the client leaves; the invocation goes on."""
    try:
        first = await invocation.next()
    except BaseException:
        invocation.detach()
        raise
    if isinstance(first, Failed) and is_client_error(first.error):
        invocation.detach()
        raise first.error

    async def body() -> AsyncIterator[str]:
        item = first
        try:
            while item is not None:
                if isinstance(item, Failed):
                    yield sse_error(item.error)
                else:
                    yield sse_data(wire_json(item))
                item = await invocation.next()
        finally:
            invocation.detach()

    return StreamingResponse(
        body(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
