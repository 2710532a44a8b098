"""Session leases: at most one running invocation per session, across every process.

A lease names its holder (``<name>@<host>:<pid>:<process identity>``) and a
generation: every acquisition that is not a renewal by the same holder gets a
new generation, and an append made under a lease (its ``Session`` is bound to
it) is refused by the store, in the same transaction, unless the session's
lease is still that holder at that generation. So a holder that stalled, lost
its lease and woke up again can never commit after another one took over.

Callers of one process waiting for a session wait in line, in arrival order, and the next
is woken as soon as a holder of the process releases it (``hold_session``); between
processes the store's lease decides, by polling. ``take_session_over`` takes a session
from its holder (cancelling it in this process, fencing it in another): the Runner's
``interrupt`` and ``rollback`` strategies and the cancel of a run use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Coroutine
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
    # Read from the model's private values directly: ``session._lease`` goes through
    # pydantic's ``__getattr__``, which costs more than the append's own checks. Anything
    # unusual there (a private value deleted) is left to that path, and its error.
    private = session.__pydantic_private__
    if private is not None and "_lease" in private:
        lease: SessionLease | None = private["_lease"]
        return lease
    return session._lease


# -- waiting in line, and the holders of this process ------------------------------------------
@dataclass(frozen=True)
class HeldLease(SessionLease):
    """The lease ``hold_session`` (or ``take_session_over``) holds; ``interrupted`` names the
    holder it was taken from ("": the session was free, or its holder ended by itself)."""

    interrupted: str = ""


_guard = threading.Lock()
"""Guards the lines and the holders below: callers on every thread's event loop use them."""


@dataclass(eq=False)
class _Ticket:
    """One caller of this process waiting for a session."""

    loop: asyncio.AbstractEventLoop
    woken: asyncio.Event
    taking_over: bool

    def wake(self) -> None:
        # The waiter may run on another thread's loop (``Runner.run``): set its event there.
        with contextlib.suppress(RuntimeError):  # its loop has closed: nobody waits any more
            self.loop.call_soon_threadsafe(self.woken.set)


@dataclass(eq=False)
class _Line:
    """The callers of this process waiting for one session of one store, in arrival order
    (those taking it over first). Only the head asks the store."""

    tickets: list[_Ticket]
    last_holder: str = ""

    def join(self, ticket: _Ticket) -> int:
        """Queue ``ticket``; return how many wait before it."""
        at = len(self.tickets)
        if ticket.taking_over:  # ahead of every plain waiter, behind earlier take-overs
            at = next((i for i, t in enumerate(self.tickets) if not t.taking_over), at)
        self.tickets.insert(at, ticket)
        return at

    def first_is(self, ticket: _Ticket) -> bool:
        with _guard:
            return self.tickets[0] is ticket


@dataclass(eq=False)
class _LocalHolder:
    """A holder of this process: the task running under its lease."""

    task: asyncio.Task[Any]
    loop: asyncio.AbstractEventLoop

    def cancel(self) -> bool:
        """Cancel the task (on its own loop); False if that loop is gone."""
        try:
            self.loop.call_soon_threadsafe(self.task.cancel)
        except RuntimeError:
            return False
        return True


_LineKey = tuple[int, str, str, str]
_lines: dict[_LineKey, _Line] = {}
_holders: dict[str, _LocalHolder] = {}
"""Holder name -> its task, for every lease held through ``hold_session`` in this process
(all threads and event loops): what ``take_session_over`` cancels."""

INTERRUPT_WAIT = 10.0
"""Seconds ``take_session_over`` waits for a cancelled holder of this process to end and
release the session, before it takes the lease over anyway."""


def _line_key(
    service: BaseSessionService, app_name: str, user_id: str, session_id: str
) -> _LineKey:
    # A line lives only while someone waits in it, and a waiter keeps its store alive, so
    # the store's id cannot be reused meanwhile.
    return (id(service), app_name, user_id, session_id)


def _wake_head(key: _LineKey) -> None:
    """Wake the first waiter for the session (a holder of this process released it)."""
    with _guard:
        line = _lines.get(key)
        if line is not None and line.tickets:
            line.tickets[0].wake()


def session_waiters(
    service: BaseSessionService, *, app_name: str, user_id: str, session_id: str
) -> int:
    """How many callers of this process wait for the session (of this store object) now."""
    with _guard:
        line = _lines.get(_line_key(service, app_name, user_id, session_id))
        return 0 if line is None else len(line.tickets)


def holder_name(holder: str) -> str:
    """The name a holder was given (``lease_holder(name)``): for an invocation's lease, its
    invocation id."""
    return holder.rpartition("@")[0] or holder


async def _woken(ticket: _Ticket, timeout: float) -> None:
    """Wait until ``ticket`` is woken, or ``timeout`` seconds."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(max(timeout, 0.0)):
            await ticket.woken.wait()


async def _acquire(
    service: BaseSessionService,
    key: dict[str, Any],
    *,
    holder: str,
    ttl: float,
    wait: float,
    take_over: bool,
    only: str | None = None,
) -> HeldLease | None:
    """The session's lease for ``holder``, taken in this process's line for the session.

    A plain waiter polls the store (only at the head of the line) until the lease is free,
    up to ``wait`` seconds; one ``take_over`` goes ahead of the plain waiters and stops the
    holder (``take_session_over``). None only when ``only`` names a holder that does not
    hold the session (nothing was done).
    """
    line_key = _line_key(service, **key)
    ticket = _Ticket(asyncio.get_running_loop(), asyncio.Event(), take_over)
    with _guard:
        line = _lines.setdefault(line_key, _Line([]))
        ahead = line.join(ticket)
    started = time.monotonic()
    deadline = started + wait + (2 * INTERRUPT_WAIT if take_over else 0.0)
    poll = _FIRST_POLL
    replacing: str | None = None
    interrupted = ""
    cancelled: dict[str, float] = {}  # local holders cancelled -> when to stop waiting for them

    def busy(current: str) -> SessionBusyError:
        waited = time.monotonic() - started
        with _guard:
            ahead = line.tickets.index(ticket)
        return SessionBusyError(**key, waited=waited, holder=current, ahead=ahead)

    async def attempt() -> SessionLease | str:
        try:
            return await service.acquire_session_lease(
                **key, holder=holder, ttl=ttl, replacing=replacing
            )
        except BaseException:
            # Cancelled or failed after the statement may have run: the lease may be ours.
            with contextlib.suppress(Exception):
                await uninterrupted(service.release_session_lease(**key, holder=holder))
            raise

    try:
        if ahead and wait <= 0 and not take_over:
            raise busy(line.last_holder)
        while True:
            if not line.first_is(ticket):
                if time.monotonic() >= deadline:
                    raise busy(line.last_holder)
                await _woken(ticket, deadline - time.monotonic())
                ticket.woken.clear()
                continue
            ticket.woken.clear()  # before asking: a release from now on wakes the wait below
            got = await attempt()
            if isinstance(got, SessionLease):
                line.last_holder = holder
                lease = HeldLease(
                    got.app_name,
                    got.user_id,
                    got.session_id,
                    got.holder,
                    got.generation,
                    interrupted,
                )
                if only is not None and interrupted != only:
                    await release_session(service, lease)  # free all along: not ours to take
                    return None
                return lease
            line.last_holder = got
            if only is not None and got != only:
                return None
            now = time.monotonic()
            if take_over:
                interrupted = got
                with _guard:
                    local = _holders.get(got)
                if local is not None and local.task is not asyncio.current_task():
                    if got not in cancelled and local.cancel():
                        cancelled[got] = now + INTERRUPT_WAIT
                    if now < cancelled.get(got, now):
                        # It ends (its release wakes us; a poll notices it too) or the wait
                        # for it runs out.
                        await _woken(ticket, min(_MAX_POLL, cancelled[got] - now))
                        continue
                if got == replacing and now >= deadline:
                    raise busy(got)
                replacing = got  # in another process (then fenced), or it did not end in time
                continue
            if got != replacing and holder_is_gone(got):
                logger.warning(
                    "session %r: its holder %s has exited; taking it over", key["session_id"], got
                )
                replacing = got
                continue
            if now >= deadline:
                raise busy(got)
            await _woken(ticket, min(poll, deadline - now))
            poll = min(poll * 2, _MAX_POLL)
    finally:
        with _guard:
            head = line.tickets[0] is ticket
            line.tickets.remove(ticket)
            if line.tickets:
                if head:
                    line.tickets[0].wake()
            elif _lines.get(line_key) is line:
                del _lines[line_key]


# -- holding one ------------------------------------------------------------------------------
async def _renew(
    service: BaseSessionService, key: dict[str, Any], lease: HeldLease, ttl: float
) -> None:
    """Renew ``lease`` every third of ``ttl`` until it is lost (or the task is cancelled)."""
    while True:
        try:
            renewed = await service.acquire_session_lease(
                **key, holder=lease.holder, ttl=ttl, generation=lease.generation
            )
        except Exception:  # the store is briefly unreachable: try again next round
            logger.warning("could not renew the lease of %s", lease.holder, exc_info=True)
            renewed = None
        if isinstance(renewed, str):
            logger.warning(
                "invocation %s lost its lease on session %r to %s; its next append will be refused",
                lease.holder,
                lease.session_id,
                renewed or "nobody",
            )
            return
        await _pause(ttl / 3)


async def _release(
    service: BaseSessionService, lease: SessionLease, renewal: asyncio.Task[None] | None = None
) -> None:
    """Stop the renewals, then give ``lease`` back, whole even if the caller is cancelled
    meanwhile (``uninterrupted``: raised once it is done); then wake the next waiter of
    this process."""

    def release() -> Coroutine[Any, Any, None]:
        return service.release_session_lease(
            app_name=lease.app_name,
            user_id=lease.user_id,
            session_id=lease.session_id,
            holder=lease.holder,
            generation=lease.generation,
        )

    try:
        # Without renewals, the work is the store's own release (run in place by
        # ``uninterrupted`` when that never suspends).
        await uninterrupted(release() if renewal is None else _after(renewal, release))
    finally:
        _wake_head(_line_key(service, lease.app_name, lease.user_id, lease.session_id))


async def _after(
    renewal: asyncio.Task[None], release: Callable[[], Coroutine[Any, Any, None]]
) -> None:
    """Cancel ``renewal`` and wait for it to end, then ``release``."""
    renewal.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await renewal  # a renewal that failed (store unavailable) still leaves a release due
    await release()


async def release_session(service: BaseSessionService, lease: SessionLease) -> None:
    """Give back a lease ``take_session_over`` returned; the next waiter of this process is
    woken at once."""
    await _release(service, lease)


class _Holding:
    """``hold_session``'s block: the holder known to this process as the current task's
    (what ``take_session_over`` cancels), the lease taken in line, renewed in the
    background, released at the end."""

    def __init__(
        self,
        service: BaseSessionService,
        key: dict[str, Any],
        holder: str,
        wait: float,
        ttl: float,
        take_over: bool,
    ) -> None:
        self.service = service
        self.key = key
        self.holder = holder
        self.wait = wait
        self.ttl = ttl
        self.take_over = take_over
        self.task: asyncio.Task[Any] | None = None
        self.lease: HeldLease | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.renewal: asyncio.Task[None] | None = None

    async def __aenter__(self) -> HeldLease:
        self.task = task = asyncio.current_task()
        if task is not None:
            with _guard:
                _holders[self.holder] = _LocalHolder(task, asyncio.get_running_loop())
        try:
            lease = await _acquire(
                self.service,
                self.key,
                holder=self.holder,
                ttl=self.ttl,
                wait=self.wait,
                take_over=self.take_over,
            )
            assert lease is not None
        except BaseException:
            self._forget_holder()
            raise
        self.lease = lease
        # The renewals start a third of the ttl from now, in a task of their own then: most
        # invocations have ended by that time, and make no task for them.
        self.timer = asyncio.get_running_loop().call_later(self.ttl / 3, self._start_renewing)
        return lease

    def _start_renewing(self) -> None:
        assert self.lease is not None
        self.renewal = asyncio.create_task(_renew(self.service, self.key, self.lease, self.ttl))

    async def __aexit__(self, *exc_info: object) -> None:
        assert self.lease is not None and self.timer is not None
        try:
            self.timer.cancel()
            # Whole even if the invocation is being cancelled: a renewal still running when
            # the release is sent would take the lease again, and the session would stay busy.
            await _release(self.service, self.lease, self.renewal)
        finally:
            self._forget_holder()

    def _forget_holder(self) -> None:
        task = self.task
        if task is not None:
            with _guard:
                if _holders.get(self.holder) is not None and _holders[self.holder].task is task:
                    del _holders[self.holder]


def hold_session(
    service: BaseSessionService,
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    holder: str,
    wait: float,
    ttl: float,
    take_over: bool = False,
) -> contextlib.AbstractAsyncContextManager[HeldLease]:
    """Hold the session's lease for the duration of the block, renewing it in the background.

    Callers of this process wait in line, in arrival order: only the first asks the
    store (polling with backoff), and it is woken at once when a holder of this process
    releases the session. Waiters of other processes are not in that line: between
    processes, whoever polls first after a release gets the session. After ``wait``
    seconds (``0``: at once, also when others wait ahead) the caller gets
    ``SessionBusyError`` naming the session and holder. A holder on this host whose process
    has exited is replaced at once; one elsewhere that stopped renewing loses the lease
    ``ttl`` seconds after its last renewal.

    ``take_over=True`` takes the session from its holder instead of waiting
    (``take_session_over``); the lease's ``interrupted`` names that holder.
    """
    key: dict[str, Any] = {"app_name": app_name, "user_id": user_id, "session_id": session_id}
    return _Holding(service, key, holder, wait, ttl, take_over)


async def take_session_over(
    service: BaseSessionService,
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    holder: str,
    ttl: float,
    interrupting: str | None = None,
) -> HeldLease | None:
    """Take the session's lease for ``holder`` from whoever holds it now (or only from
    ``interrupting``), ahead of the callers of this process waiting for it.

    A holder in this process is cancelled, and waited for until it has released the
    session (at most ``INTERRUPT_WAIT`` seconds, then its lease is taken over anyway). A
    holder in another process cannot be reached: its lease is taken over
    (``acquire_session_lease(..., replacing=...)``), and the store refuses its next append
    with ``LeaseLostError`` (fencing) — it stops at its next event boundary; what it
    committed stays. Returns the lease now held (give it back with ``release_session``), or
    None when ``interrupting`` is given and that holder does not hold the session (then
    nothing was done).
    """
    key: dict[str, Any] = {"app_name": app_name, "user_id": user_id, "session_id": session_id}
    return await _acquire(
        service, key, holder=holder, ttl=ttl, wait=0.0, take_over=True, only=interrupting
    )
