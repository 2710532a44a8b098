"""Session leases: at most one running invocation per session, across every process.

A lease names its holder (``<name>@<host>:<pid>:<process identity>``) and a
generation: every acquisition that is not a renewal by the same holder gets a
new generation, and an append made under a lease (its ``Session`` is bound to
it) is refused by the store, in the same transaction, unless the session's
lease is still that holder at that generation. So a holder that stalled, lost
its lease and woke up again can never commit after another one took over.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cairn.errors import SessionBusyError
from cairn.sessions.uninterrupted import uninterrupted

if TYPE_CHECKING:
    from cairn.sessions.base_session_service import BaseSessionService
    from cairn.sessions.session import Session

logger = logging.getLogger(__name__)

_pause = asyncio.sleep
"""The real sleep, taken at import: an app or test that patches ``asyncio.sleep`` (to skip
its retry delays) must not turn the lease's renewal loop into one that never yields."""

_FIRST_POLL = 0.005
_MAX_POLL = 0.25


@dataclass(frozen=True)
class SessionLease:
    """The lease a holder got on one session, and the generation of that acquisition."""

    app_name: str
    user_id: str
    session_id: str
    holder: str
    generation: int


# -- who holds a lease ------------------------------------------------------------------------
def _process_identity(pid: int) -> str | None:
    """What tells this process apart from a later one reusing its pid: its pid namespace and
    start time (Linux ``/proc``); None where they cannot be read."""
    try:
        namespace = os.readlink(f"/proc/{pid}/ns/pid").removeprefix("pid:[").rstrip("]")
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            # The command name (field 2) may hold spaces; the start time is field 22.
            fields = stat.read().rsplit(")", 1)[1].split()
        return f"{namespace}.{fields[19]}"
    except (OSError, IndexError):
        return None


@functools.lru_cache(maxsize=1)
def _own_identity(pid: int) -> str | None:
    """This process's identity (keyed by pid, so a forked child reads its own)."""
    return _process_identity(pid)


def lease_holder(name: str) -> str:
    """A holder name saying what holds the lease (``name``), on which host and process."""
    where = f"{name}@{socket.gethostname()}:{os.getpid()}"
    identity = _own_identity(os.getpid())
    return where if identity is None else f"{where}:{identity}"


def holder_is_gone(holder: str) -> bool:
    """Whether ``holder`` names a process of this host (and pid namespace) that has exited.

    Only holders whose name carries a process identity are judged (pid reuse is
    then detected); any other holder, or one on another host, may be alive.
    """
    _name, at, where = holder.rpartition("@")
    host, _, process = where.partition(":")
    pid_text, _, identity = process.partition(":")
    if not at or host != socket.gethostname() or not pid_text.isdigit() or not identity:
        return False
    own = _own_identity(os.getpid())
    if own is None or identity.split(".")[0] != own.split(".")[0]:
        return False  # another pid namespace (a container sharing the host name): cannot tell
    return _process_identity(int(pid_text)) != identity


# -- a session bound to a lease ---------------------------------------------------------------
def bind_lease(session: Session, lease: SessionLease) -> None:
    """Make every ``append_event(session, ...)`` fenced by ``lease``: refused with
    ``LeaseLostError`` once another holder took the session's lease over."""
    if (lease.app_name, lease.user_id, lease.session_id) != (
        session.app_name,
        session.user_id,
        session.id,
    ):
        raise ValueError(
            f"the lease of session {lease.session_id!r} cannot be bound to session {session.id!r}"
        )
    session._lease = lease


def bound_lease(session: Session) -> SessionLease | None:
    """The lease appends through ``session`` are fenced by (None: not fenced)."""
    return session._lease


# -- holding one ------------------------------------------------------------------------------
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
) -> AsyncIterator[SessionLease]:
    """Hold the session's lease for the duration of the block, renewing it in the background.

    Waits up to ``wait`` seconds for another holder to finish (polling with
    backoff), then raises ``SessionBusyError`` naming the session and holder.
    A holder on this host whose process has exited is replaced at once; one
    elsewhere that stopped renewing loses the lease ``ttl`` seconds after its
    last renewal.
    """
    key: dict[str, Any] = {"app_name": app_name, "user_id": user_id, "session_id": session_id}
    started = time.monotonic()
    poll = _FIRST_POLL
    replacing = None

    async def acquire() -> SessionLease | str:
        try:
            return await service.acquire_session_lease(
                **key, holder=holder, ttl=ttl, replacing=replacing
            )
        except BaseException:
            # Cancelled or failed after the statement may have run: the lease may be ours.
            with contextlib.suppress(Exception):
                await uninterrupted(service.release_session_lease(**key, holder=holder))
            raise

    # Between polls nothing is held: each poll is one short statement of its own.
    while isinstance(got := await acquire(), str):
        if got != replacing and holder_is_gone(got):
            logger.warning("session %r: its holder %s has exited; taking it over", session_id, got)
            replacing = got
            continue
        waited = time.monotonic() - started
        if waited >= wait:
            raise SessionBusyError(**key, waited=waited, holder=got)
        await _pause(min(poll, wait - waited))
        poll = min(poll * 2, _MAX_POLL)
    lease = got

    async def renew() -> None:
        while True:
            await _pause(ttl / 3)
            try:
                renewed = await service.acquire_session_lease(
                    **key, holder=holder, ttl=ttl, generation=lease.generation
                )
            except Exception:  # the store is briefly unreachable: try again next round
                logger.warning("could not renew the lease of %s", holder, exc_info=True)
                continue
            if isinstance(renewed, str):
                logger.warning(
                    "invocation %s lost its lease on session %r to %s; its next append will "
                    "be refused",
                    holder,
                    session_id,
                    renewed or "nobody",
                )
                return

    async def release() -> None:
        renewal.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await renewal  # a renewal that failed (store unavailable) still leaves a release due
        await service.release_session_lease(**key, holder=holder, generation=lease.generation)

    renewal = asyncio.create_task(renew())
    try:
        yield lease
    finally:
        # Whole even if the invocation is being cancelled: a renewal still running when the
        # release is sent would take the lease again, and the session would stay busy.
        await uninterrupted(release())
