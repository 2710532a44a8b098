"""A session store on PostgreSQL, MySQL/MariaDB or SQLite through SQLAlchemy 2 (async)."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from sqlalchemy import Connection
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from cairn.errors import StoreUnavailableError
from cairn.sessions.base_session_service import DEFAULT_MAX_EVENT_BYTES
from cairn.sessions.sql.engines import (
    UnsupportedStoreUrlError,
    async_url,
    describe,
    install_sqlite_settings,
    is_retryable,
    ping_idle_connections,
)
from cairn.sessions.sql.migrate import MigrationReport, upgrade_schema
from cairn.sessions.sql.store import SqlSessionStore

T = TypeVar("T")

_RETRIES = 5
_DISCONNECT_WORDS = ("connection", "closed", "terminat", "refused", "lost", "gone away", "reset")


class _Engines(NamedTuple):
    writer: AsyncEngine
    reader: AsyncEngine
    """Repeatable-read snapshots (SQLite: a deferred transaction)."""
    autocommit: AsyncEngine
    """For operations that are one statement on this database."""


class DatabaseSessionService(SqlSessionStore):
    """Sessions in a SQL database shared by any number of processes.

    ``db_url``: ``postgresql+asyncpg://``, ``mysql+asyncmy://``,
    ``mysql+aiomysql://`` (MySQL and MariaDB) or ``sqlite+aiosqlite://``
    (``postgresql://``, ``mysql://`` and ``sqlite://`` pick those drivers); or
    pass a ready ``db_engine``. Extra keyword arguments go to
    ``create_async_engine`` (pool size, ``connect_args``, ...). Connections
    are pooled; one that sat unused for 2 seconds is pinged before use and
    replaced if dead (say, after a server restart), so a busy pool pays no
    ping. If a connection dies in use anyway, the pool is discarded: a read is
    retried once on a fresh connection, a write fails with
    ``StoreUnavailableError`` (nothing half-written) and the next call
    reconnects. ``pool_pre_ping=True`` pings every connection before every use
    instead. The schema is created or migrated in place on first use. Use
    ``async with`` or ``close()`` to release the pool.
    """

    def __init__(
        self,
        db_url: str | URL | None = None,
        db_engine: AsyncEngine | None = None,
        *,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        **engine_kwargs: Any,
    ) -> None:
        super().__init__(max_event_bytes=max_event_bytes)
        if (db_url is None) == (db_engine is None):
            raise ValueError("DatabaseSessionService needs exactly one of db_url= or db_engine=")
        self._given_engine = db_engine
        self._url = db_engine.url if db_engine is not None else async_url(db_url)  # type: ignore[arg-type]
        if self._url.get_backend_name() == "mysql":
            engine_kwargs.setdefault("isolation_level", "READ COMMITTED")
        self._engine_kwargs = engine_kwargs
        self._where = describe(self._url)
        # asyncio drivers bind connections to one event loop, so each loop gets its own pool.
        self._engines: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Engines] = (
            weakref.WeakKeyDictionary()
        )
        self._migrated = False

    @property
    def engine(self) -> AsyncEngine:
        """The engine used on the running event loop."""
        return self._engines_here().writer

    def _engines_here(self) -> _Engines:
        """The engines for the running loop."""
        loop = asyncio.get_running_loop()
        found = self._engines.get(loop)
        if found is not None:
            return found
        engine = self._given_engine or self._create_engine()
        if engine is not self._given_engine and not self._engine_kwargs.get("pool_pre_ping"):
            ping_idle_connections(engine.sync_engine)
        dialect = engine.dialect.name
        if dialect == "sqlite":
            if engine is not self._given_engine or not self._engines:
                install_sqlite_settings(engine.sync_engine, "FULL", 30.0)
            reader = engine.execution_options(cairn_begin="BEGIN")
        else:
            # One snapshot for the session row, its state and its events.
            reader = engine.execution_options(isolation_level="REPEATABLE READ")
        found = _Engines(engine, reader, engine.execution_options(isolation_level="AUTOCOMMIT"))
        self._engines[loop] = found
        return found

    def _create_engine(self) -> AsyncEngine:
        try:
            return create_async_engine(self._url, **self._engine_kwargs)
        except ModuleNotFoundError as exc:
            raise UnsupportedStoreUrlError(
                self._url.render_as_string(hide_password=True),
                f"its driver is not installed ({exc.name}); install it as shown below",
            ) from exc

    async def migrate(self) -> MigrationReport:
        """Create or upgrade the schema now (otherwise it happens on first use).

        Safe to run from many processes at once: a database lock makes the
        others wait, then find the schema current.
        """
        engine = self._engines_here().writer
        if engine.dialect.name == "sqlite":
            engine = engine.execution_options(cairn_begin="BEGIN EXCLUSIVE")
        try:
            async with engine.begin() as connection:
                report = await connection.run_sync(upgrade_schema)
        except (OSError, InterfaceError, OperationalError) as exc:
            raise self._unavailable(exc) from exc
        self._migrated = True
        return report

    def _unavailable(self, exc: BaseException) -> StoreUnavailableError:
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        return StoreUnavailableError(
            f"cannot reach the session store, {self._where}: {reason}. Check that the server "
            "is running and that the URL's host, port, database and user are right."
        )

    async def _transaction(self, operation: Callable[..., T], *args: Any, write: bool) -> T:
        if not self._migrated:
            await self.migrate()
        engines = self._engines_here()
        single = engines.writer.dialect.name in getattr(operation, "single_statement_on", ())
        engine = engines.autocommit if single else engines.writer if write else engines.reader
        run = _directly if single else _in_transaction
        for attempt in range(_RETRIES):
            try:
                async with engine.connect() as connection:
                    # Begin, work and commit in one trip into synchronous code.
                    return await connection.run_sync(run, operation, args)
            except DBAPIError as exc:
                if is_retryable(exc) and attempt + 1 < _RETRIES:
                    await asyncio.sleep(0.01 * 2**attempt)
                    continue
                if exc.connection_invalidated or (
                    isinstance(exc, InterfaceError | OperationalError)
                    and any(word in str(exc.orig).lower() for word in _DISCONNECT_WORDS)
                ):
                    if not write and attempt == 0:
                        continue  # a read may simply run again on a fresh connection
                    raise self._unavailable(exc) from exc
                raise
            except OSError as exc:
                raise self._unavailable(exc) from exc
        raise AssertionError("unreachable")

    async def close(self) -> None:
        """Close this loop's connection pool (a given ``db_engine`` is left to its owner)."""
        loop = asyncio.get_running_loop()
        found = self._engines.pop(loop, None)
        if found is not None and self._given_engine is None:
            await found.writer.dispose()


def _in_transaction(
    connection: Connection, operation: Callable[..., T], args: tuple[Any, ...]
) -> T:
    with connection.begin():
        return operation(connection, *args)


def _directly(connection: Connection, operation: Callable[..., T], args: tuple[Any, ...]) -> T:
    return operation(connection, *args)
