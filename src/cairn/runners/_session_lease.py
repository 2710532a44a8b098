"""At most one running invocation per session, across every process sharing the store."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import AsyncIterator

from cairn.errors import SessionBusyError
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.uninterrupted import uninterrupted

logger = logging.getLogger(__name__)

_FIRST_POLL = 0.005
_MAX_POLL = 0.25


def lease_holder(invocation_id: str) -> str:
    """A holder name that says which invocation, on which host and process."""
    return f"{invocation_id}@{socket.gethostname()}:{os.getpid()}"


@contextlib.asynccontextmanager
async def hold_session(
    service: BaseSessionService,
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    holder: str,
    wait: float,
    ttl: float,
) -> AsyncIterator[None]:
    """Hold the session's lease for the duration of the block, renewing it in the background.

    Waits up to ``wait`` seconds for another holder to finish (polling with
    backoff), then raises ``SessionBusyError`` naming the session and holder.
    If this process dies, the lease expires ``ttl`` seconds after its last renewal.
    """
    key = {"app_name": app_name, "user_id": user_id, "session_id": session_id}

    async def acquire() -> str | None:
        try:
            return await service.acquire_session_lease(**key, holder=holder, ttl=ttl)
        except BaseException:
            # Cancelled or failed after the statement may have run: the lease may be ours.
            with contextlib.suppress(Exception):
                await uninterrupted(service.release_session_lease(**key, holder=holder))
            raise

    started = time.monotonic()
    poll = _FIRST_POLL
    # Between polls nothing is held: each poll is one short statement of its own.
    while (current := await acquire()) is not None:
        waited = time.monotonic() - started
        if waited >= wait:
            raise SessionBusyError(**key, waited=waited, holder=current)
        await asyncio.sleep(min(poll, wait - waited))
        poll = min(poll * 2, _MAX_POLL)

    async def renew() -> None:
        while True:
            await asyncio.sleep(ttl / 3)
            taken_by = await service.acquire_session_lease(**key, holder=holder, ttl=ttl)
            if taken_by is not None:
                logger.warning(
                    "invocation %s lost its lease on session %r to %s; its next append will "
                    "be refused as stale",
                    holder,
                    session_id,
                    taken_by,
                )
                return

    async def release() -> None:
        renewal.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await renewal  # a renewal that failed (store unavailable) still leaves a release due
        await service.release_session_lease(**key, holder=holder)

    renewal = asyncio.create_task(renew())
    try:
        yield
    finally:
        # Whole even if the invocation is being cancelled: a renewal still running when the
        # release is sent would take the lease again, and the session would stay busy.
        await uninterrupted(release())
