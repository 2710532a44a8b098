"""LiveRequestQueue: what a caller sends into a live (bidirectional) run, in order.

cairn has no live mode (``Runner.run_live`` raises ``LiveStreamingNotSupportedError``):
the queue is here so that code written for ADK's live API imports and its queue handling
works; cairn's runs are request/response (``run_async``) and server-sent events.
"""

from __future__ import annotations

import asyncio

from google.genai import types
from pydantic import BaseModel, ConfigDict


class LiveRequest(BaseModel):
    """One item of a live run's input: a content, a chunk of realtime media, the start or
    end of the user's activity, or the end of the input (``close``)."""

    model_config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")

    content: types.Content | None = None
    blob: types.Blob | None = None
    activity_start: types.ActivityStart | None = None
    activity_end: types.ActivityEnd | None = None
    close: bool = False


class LiveRequestQueue:
    """A first-in first-out queue of ``LiveRequest``: the ``send_*`` methods add (without
    waiting), ``get`` waits for the next; ``close`` adds the request that ends the input."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[LiveRequest] = asyncio.Queue()

    def send(self, req: LiveRequest) -> None:
        self._queue.put_nowait(req)

    def send_content(self, content: types.Content) -> None:
        self.send(LiveRequest(content=content))

    def send_realtime(self, blob: types.Blob) -> None:
        self.send(LiveRequest(blob=blob))

    def send_activity_start(self) -> None:
        self.send(LiveRequest(activity_start=types.ActivityStart()))

    def send_activity_end(self) -> None:
        self.send(LiveRequest(activity_end=types.ActivityEnd()))

    def close(self) -> None:
        self.send(LiveRequest(close=True))

    async def get(self) -> LiveRequest:
        return await self._queue.get()


__all__ = ["LiveRequest", "LiveRequestQueue"]
