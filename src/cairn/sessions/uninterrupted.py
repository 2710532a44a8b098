"""Store work that a cancellation cannot cut in half."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Coroutine[Any, Any, Any]])

_NEVER_SUSPENDS: set[types.CodeType] = set()
"""The code of the ``async def`` functions marked ``never_suspends``."""


def never_suspends(function: F) -> F:
    """Mark an ``async def`` whose body awaits nothing that can wait (an in-memory store's
    method, under a thread lock): its coroutine runs to its end in the step that starts it.

    A cancellation reaches a coroutine only where it suspends, so none can cut such work,
    and ``uninterrupted`` runs it in place instead of in a task of its own. Only the
    function's own code is marked: an override (a subclass's, or one patched onto an
    object) is another function, and is run in a task as before.
    """
    _NEVER_SUSPENDS.add(function.__code__)
    return function


async def uninterrupted(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` to its end even if the caller is cancelled meanwhile, then honour that.

    ``work`` runs in a task of its own, which a cancellation of the caller (a client that
    disconnected, a timeout, a server shutting down; also one delivered again and again, as
    anyio's cancel scopes do) never reaches: the caller waits until ``work`` has finished,
    then raises the ``CancelledError``. So a transaction is never stopped between its
    statements and its commit, a connection is never handed back while a statement still
    runs on it, and when the caller sees the cancellation, what ``work`` did is done.

    Work of a function marked ``never_suspends`` runs in place: it ends before the caller
    could be cancelled at all, with the result a task would have given.
    """
    if getattr(work, "cr_code", None) in _NEVER_SUSPENDS:
        return await work
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
