"""Server-sent events: an invocation's events as ``data: <event json>`` lines, as they commit.

The Runner's generator runs in one task of its own (its telemetry context stays in one
task); the response reads its events from a queue. Errors before the first event that are
the request's fault (unknown session, busy, bad answer) become an HTTP error status; any
later error, or the agent's own, ends the stream with ``data: {"error": "..."}``. A client
that disconnects stops the invocation (what was committed stays in the log).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator

from starlette.responses import StreamingResponse

from cairn.events.event import Event
from cairn.server.errors import is_client_error

logger = logging.getLogger("cairn.server")


class _Failed:
    def __init__(self, error: Exception) -> None:
        self.error = error


_END = object()


def sse_data(payload: str) -> str:
    return f"data: {payload}\n\n"


def sse_error(error: Exception) -> str:
    message = str(error) or type(error).__name__
    return sse_data(json.dumps({"error": f"{type(error).__name__}: {message}"}))


async def event_stream(events: AsyncGenerator[Event, None]) -> StreamingResponse:
    """A ``text/event-stream`` response of ``events``; raises a client error that came first."""
    queue: asyncio.Queue[object] = asyncio.Queue()

    async def produce() -> None:
        try:
            async with contextlib.aclosing(events):
                async for event in events:
                    await queue.put(event)
        except Exception as error:
            await queue.put(_Failed(error))
        finally:
            await queue.put(_END)

    task = asyncio.create_task(produce())
    first = await queue.get()
    if isinstance(first, _Failed) and is_client_error(first.error):
        await task
        raise first.error

    async def body() -> AsyncIterator[str]:
        item = first
        try:
            while item is not _END:
                if isinstance(item, _Failed):
                    logger.error("the invocation failed", exc_info=item.error)
                    yield sse_error(item.error)
                elif isinstance(item, Event):
                    yield sse_data(item.to_json())
                item = await queue.get()
        finally:
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    return StreamingResponse(
        body(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
