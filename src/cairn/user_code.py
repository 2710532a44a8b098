"""Calling user code (tools, callbacks, instruction providers, plugin hooks) off the event loop.

A synchronous function run on the event loop stops everything else that loop
does while it runs: other invocations, HTTP requests and the background
renewal of session leases (a lease that is not renewed expires, and another
process may take the session over). So cairn runs every synchronous piece of
user code on a thread of its own pool, with the caller's ``contextvars``
copied (OpenTelemetry's current span and the like stay current), and awaits
it; ``async`` functions are awaited on the loop as they are.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

MAX_THREADS = 64
"""How many synchronous user functions run at once, per process; more wait for a thread."""

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    """The process's pool for user code (its own: a slow tool never holds up DNS lookups or
    other work of the loop's default executor)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=MAX_THREADS, thread_name_prefix="cairn-user")
        return _pool


def _forget_pool() -> None:
    """A forked child has none of its parent's threads: it starts a pool of its own."""
    global _pool, _pool_lock
    _pool = None
    _pool_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


def is_async_callable(func: Any) -> bool:
    """Whether calling ``func`` returns an awaitable without doing the work (``async def``,
    a ``functools.partial`` of one, or an object whose ``__call__`` is ``async def``)."""
    while isinstance(func, functools.partial):
        func = func.func
    if inspect.iscoroutinefunction(func):
        return True
    call = getattr(func, "__call__", None)  # noqa: B004 - the method itself is what we inspect
    return call is not None and not inspect.isfunction(func) and inspect.iscoroutinefunction(call)


async def in_thread(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``func(*args, **kwargs)`` on a thread of cairn's user-code pool, contextvars copied."""
    context = contextvars.copy_context()
    call = functools.partial(context.run, func, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_executor(), call)


async def call_user_code(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Call a user's function, sync or async, without blocking the event loop; its result.

    An ``async`` function is awaited on the loop. Anything else runs on a thread
    (see ``in_thread``); if it returns an awaitable (a lambda returning a
    coroutine), that is then awaited on the loop.
    """
    if is_async_callable(func):
        return await func(*args, **kwargs)
    result = await in_thread(func, *args, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


async def call_callback(callback: Callable[..., Any], /, **arguments: Any) -> Any:
    """Call an app's callback as ADK does: with ``arguments`` by name when it takes those
    names (or ``**kwargs``), else by position in their order (a lambda or function of its
    own parameter names). A callable whose signature cannot be read is called by name."""
    try:
        inspect.signature(callback).bind(**arguments)
    except TypeError:
        return await call_user_code(callback, *arguments.values())
    except ValueError:
        pass
    return await call_user_code(callback, **arguments)


_DONE = object()


async def iterate_in_thread(items: Iterator[Any]) -> AsyncIterator[Any]:
    """Each item of a synchronous generator, each step computed on a thread; an async
    generator of them."""

    def step() -> Any:
        return next(items, _DONE)

    while (item := await in_thread(step)) is not _DONE:
        yield item
