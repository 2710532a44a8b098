"""Store work that a cancellation cannot cut in half."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


async def uninterrupted(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` to its end even if the caller is cancelled meanwhile, then honour that.

    ``work`` runs in a task of its own, which a cancellation of the caller (a client that
    disconnected, a timeout, a server shutting down; also one delivered again and again, as
    anyio's cancel scopes do) never reaches: the caller waits until ``work`` has finished,
    then raises the ``CancelledError``. So a transaction is never stopped between its
    statements and its commit, a connection is never handed back while a statement still
    runs on it, and when the caller sees the cancellation, what ``work`` did is done.
    """
    task = asyncio.ensure_future(work)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError as exc:
            cancelled = exc
        except Exception:
            pass  # the work failed: task.result() below raises it
    if cancelled is not None:
        if not task.cancelled():
            task.exception()  # retrieved: the caller gets its own cancellation instead
        raise cancelled
    return task.result()
