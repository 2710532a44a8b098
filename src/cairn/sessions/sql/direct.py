"""Driver connections held out of a SQLAlchemy engine's pool, for a backend's hot operations.

Through SQLAlchemy's async engine a statement costs several times its round trip in Python;
the PostgreSQL and MySQL/MariaDB backends send their hot operations straight to the driver
instead (``postgres_direct``, ``mysql_direct``). The connections still come out of the
engine's own pool, so the URL, SSL and ``connect_args`` the user gave apply unchanged.
What differs between drivers (how to tell a connection is reusable, how to ping it, how a
connection is prepared for direct use) is a ``DirectDriver``, given once.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from cairn.errors import CairnError
from cairn.sessions.sql.engines import IDLE_PING_AFTER, is_unavailable

KEEP_IDLE = 4
"""Connections kept ready per kind (durable, relaxed); more are opened under load."""


class BrokenConnection(Exception):
    """The connection failed mid-statement (or could not be made); it was discarded."""


async def _nothing(_driver: Any) -> None:
    return None


@dataclass(frozen=True)
class DirectDriver:
    """What ``DirectConnections`` needs to know about one driver."""

    reusable: Callable[[Any], bool]
    """Open, and not inside a transaction (whose locks and snapshot the next user would get)."""
    ping: Callable[[Any], Awaitable[Any]]
    """A round trip that leaves no transaction open."""
    refused: Callable[[BaseException], bool]
    """The server refused the statement (the connection itself is fine)."""
    prepare: Callable[[Any], Awaitable[None]] = _nothing
    """Sets a fresh connection up for direct use."""
    relax: Callable[[Any], Awaitable[None]] | None = None
    """Makes a connection's commits skip the flush (None: the database cannot, per session)."""
    restore: Callable[[Any], Awaitable[None]] = _nothing
    """Undoes ``prepare`` before the connection goes back to the engine's pool."""


class DirectConnections:
    """Driver connections held out of an engine's pool for the hot path.

    A connection comes back to the idle list only when it is reusable (open, outside any
    transaction), after a statement succeeded or the server refused it; after anything else
    (a network error, a terminated backend, the driver losing track of it) it is discarded,
    and the caller gets ``BrokenConnection`` with the cause chained. One that sat idle for
    ``IDLE_PING_AFTER`` seconds (or any, with ``ping_every_use``) is pinged first and
    replaced if dead. Callers run each use ``uninterrupted``: a cancellation landing
    mid-statement would leave the connection busy with a statement nobody waits for.
    """

    def __init__(
        self, engine: AsyncEngine, driver: DirectDriver, *, ping_every_use: bool = False
    ) -> None:
        self._engine = engine
        self._driver = driver
        self._ping_after = 0.0 if ping_every_use else IDLE_PING_AFTER
        self._idle: dict[bool, list[tuple[AsyncConnection, Any, float]]] = {True: [], False: []}

    @contextlib.asynccontextmanager
    async def connection(self, *, durable: bool = True) -> AsyncIterator[Any]:
        """A driver connection; ``durable=False`` gives one whose commits may skip the flush."""
        # A driver that cannot skip the flush per session keeps one idle list for both.
        durable = durable or self._driver.relax is None
        held, driver = await self._checkout(durable)
        try:
            yield driver
        except BaseException as exc:
            if isinstance(exc, CairnError) or (
                self._driver.refused(exc) and not is_unavailable(exc)
            ):
                # The server refused a statement, or cairn refused what the statements found
                # (a stale revision, a lost lease): the connection itself is fine.
                await self._checkin(durable, held, driver)
                raise
            await _discard(held)
            if isinstance(exc, Exception) and is_unavailable(exc):
                raise BrokenConnection(str(exc) or type(exc).__name__) from exc
            raise
        else:
            await self._checkin(durable, held, driver)

    async def _checkout(self, durable: bool) -> tuple[AsyncConnection, Any]:
        idle = self._idle[durable]
        while idle:
            held, driver, since = idle.pop()
            if not self._driver.reusable(driver):
                await _discard(held)
                continue
            if time.monotonic() - since < self._ping_after:
                return held, driver
            try:
                await self._driver.ping(driver)
                return held, driver
            except Exception:  # a dead idle connection is simply replaced
                await _discard(held)
        try:
            held = await self._engine.connect()
        except Exception as exc:
            if is_unavailable(exc):
                raise BrokenConnection(str(exc)) from exc
            raise
        try:
            raw = await held.get_raw_connection()
            driver = raw.driver_connection
            assert driver is not None
            await self._driver.prepare(driver)
            if not durable and self._driver.relax is not None:
                await self._driver.relax(driver)
        except BaseException as exc:
            await _discard(held)
            if isinstance(exc, Exception) and is_unavailable(exc):
                raise BrokenConnection(str(exc)) from exc
            raise
        return held, driver

    async def _checkin(self, durable: bool, held: AsyncConnection, driver: Any) -> None:
        idle = self._idle[durable]
        if not self._driver.reusable(driver):
            await _discard(held)
        elif len(idle) < KEEP_IDLE:
            idle.append((held, driver, time.monotonic()))
        else:
            await self._return(held, driver)

    async def _return(self, held: AsyncConnection, driver: Any) -> None:
        """Back to the engine's pool, as the engine made it (or discarded if that fails)."""
        try:
            await self._driver.restore(driver)
        except Exception:
            await _discard(held)
            return
        await held.close()

    async def close(self) -> None:
        """Return every held connection to the engine's pool."""
        for idle in self._idle.values():
            while idle:
                held, driver, _since = idle.pop()
                await self._return(held, driver)


async def _discard(held: AsyncConnection) -> None:
    with contextlib.suppress(Exception):
        await held.invalidate()
    with contextlib.suppress(Exception):
        await held.close()


def is_retryable(exc: BaseException) -> bool:
    """A deadlock, serialization failure or lock wait timeout (PostgreSQL's SQLSTATE, MySQL's
    error number): the transaction changed nothing and may be rerun."""
    if getattr(exc, "sqlstate", None) in {"40P01", "40001"}:
        return True
    return exc.args[:1] in ((1213,), (1205,))
