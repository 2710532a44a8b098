"""At most one running invocation per session in this process."""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from cairn.errors import SessionBusyError
from cairn.sessions.base_session_service import BaseSessionService

_SessionKey = tuple[str, str, str]

_guard = threading.Lock()
_holders: weakref.WeakKeyDictionary[BaseSessionService, dict[_SessionKey, str]] = (
    weakref.WeakKeyDictionary()
)
_POLL_SECONDS = 0.005


def _try_acquire(service: BaseSessionService, key: _SessionKey, invocation_id: str) -> str | None:
    """Take the session for ``invocation_id``; return the current holder if it is taken."""
    with _guard:
        held = _holders.setdefault(service, {})
        holder = held.get(key)
        if holder is None:
            held[key] = invocation_id
        return holder


def _release(service: BaseSessionService, key: _SessionKey) -> None:
    with _guard:
        _holders.get(service, {}).pop(key, None)


@asynccontextmanager
async def session_lock(
    service: BaseSessionService, key: _SessionKey, invocation_id: str, timeout: float
) -> AsyncIterator[None]:
    """Hold the session for one invocation; wait up to ``timeout`` s, then SessionBusyError.

    Works across threads and event loops of one process (the sync ``Runner.run``
    drives its own loop in a thread).
    """
    started = time.monotonic()
    while (holder := _try_acquire(service, key, invocation_id)) is not None:
        waited = time.monotonic() - started
        if waited >= timeout:
            app_name, user_id, session_id = key
            raise SessionBusyError(
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                waited=waited,
                holder=holder,
            )
        await asyncio.sleep(_POLL_SECONDS)
    try:
        yield
    finally:
        _release(service, key)
