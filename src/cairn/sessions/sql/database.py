"""The database seam: one object per store URL owns its connections, the one retry policy and
the one translation of driver errors into cairn's errors.

Every SQL store of cairn (sessions, artifacts, credentials) works through
``Database.transaction(operation, *args, write=..., durable=...)``: ``operation(connection,
*args)`` runs in one transaction on a SQLAlchemy ``Connection`` and is committed, or rolled
back and its error raised. What a caller never sees: which thread or pool the connection
came from, the retries, the schema's creation or migration on first use.

- ``SqliteDatabase``: one SQLite file (sqlite3 and aiosqlite URLs alike), a sqlite3
  connection on a thread of its own, and one for the hot path's short writes on the calling
  thread while the file is free (``direct``). A write begins ``IMMEDIATE``. With
  ``synchronous=FULL`` a durable write returns once its commit is on disk, the writers of
  the moment sharing one flush of the file's log (``wal_flush``: group commit); a
  non-durable one (a lease) does not wait for the disk. Waiting for another process's
  write is sqlite3's busy timeout; a damaged file is ``StoreDamagedError``.
- ``EngineDatabase``: a SQLAlchemy async engine (PostgreSQL, MySQL/MariaDB), one
  pool per event loop, reads in repeatable-read snapshots. A deadlock or serialization
  failure is retried with backoff; a connection that died is replaced (a read runs again
  once on a fresh one, a write fails with ``StoreUnavailableError``: nothing half-written).
  On PostgreSQL and MySQL/MariaDB it also holds driver connections for the hot operations
  (``EngineDatabase.direct``), under the same retry policy.
"""

from __future__ import annotations

import abc
import asyncio
import random
import sqlite3
import threading
import time
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, NamedTuple, TypeVar, cast

from sqlalchemy import Connection, create_engine
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import SingletonThreadPool

from cairn.errors import StoreUnavailableError
from cairn.sessions.sql.direct import BrokenConnection, DirectConnections, DirectDriver
from cairn.sessions.sql.direct import is_retryable as is_retryable_statement
from cairn.sessions.sql.engines import (
    Synchronous,
    UnsupportedStoreUrlError,
    async_url,
    describe,
    install_sqlite_settings,
    is_retryable,
    is_unavailable,
    missing_part,
    ping_idle_connections,
    refuse_connections_in_transaction,
)
from cairn.sessions.sql.migrate import MigrationReport, current_schema, upgrade_schema
from cairn.sessions.sql.mysql_direct import AIOMYSQL, ASYNCMY
from cairn.sessions.sql.postgres_direct import POSTGRES
from cairn.sessions.sql.sqlite_file import damage_of, prepare_sqlite_file
from cairn.sessions.sql.sqlite_thread import SqliteThread
from cairn.sessions.sql.wal_flush import WalFlusher
from cairn.sessions.uninterrupted import uninterrupted

T = TypeVar("T")

RETRIES = 8
"""Attempts of a transaction that met a deadlock, a serialization failure or a
``WriteConflict``."""


SLOW_COMMIT = 0.01
"""Seconds: an inline SQLite write that took longer (a slow or busy disk) sends the writes
of the next ``SLOW_PAUSE`` seconds to the store's thread, so a slow disk holds up the event
loop at most once in that time."""
SLOW_PAUSE = 10.0


class WriteConflict(Exception):
    """Raised by an operation when a concurrent writer took what it was about to write (a
    unique key such as an artifact's next version number): run again, it will succeed.
    The database rolls it back and retries it under its one retry policy."""


_DIRECT_DRIVERS: dict[str, DirectDriver] = {
    "asyncpg": POSTGRES,
    "asyncmy": ASYNCMY,
    "aiomysql": AIOMYSQL,
}
"""The drivers whose connections ``EngineDatabase.direct`` hands out."""


class Database(abc.ABC):
    """A store's database: its connections, retries and error translation."""

    dialect: str
    """``sqlite``, ``postgresql`` or ``mysql``."""
    driver: str
    """``sqlite3``, ``asyncpg``, ``asyncmy`` or ``aiomysql``."""

    @abc.abstractmethod
    async def direct(
        self, operation: Callable[..., Any], *args: Any, write: bool, durable: bool = True
    ) -> Any:
        """``operation(driver_connection, *args)`` (awaited where the driver is async): a hot
        operation (``backends``) on the driver's own connection, under the same retries and
        error translation as ``transaction``. ``durable=False`` as there."""

    @abc.abstractmethod
    async def transaction(
        self, operation: Callable[..., T], *args: Any, write: bool, durable: bool = True
    ) -> T:
        """``operation(connection, *args)`` in one committed transaction.

        ``write=False`` reads one snapshot; ``durable=False`` (a lease) may skip waiting for
        the disk at commit, where the database allows it.
        """

    @abc.abstractmethod
    async def migrate(self) -> MigrationReport:
        """Create or upgrade the schema now (otherwise it happens on first use)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release the connections (they are made again if the database is used again)."""

    _migrated: bool

    async def migrate_once(self) -> None:
        """``migrate()`` unless it already ran."""
        if not self._migrated:
            await self.migrate()

    @property
    @abc.abstractmethod
    def engine(self) -> AsyncEngine:
        """A SQLAlchemy async engine on this database, for SQL of the caller's own."""


def database_for(
    url: str | URL | None, engine: AsyncEngine | None, **engine_kwargs: Any
) -> Database:
    """The database ``DatabaseSessionService(db_url=..., db_engine=..., **kwargs)`` names:
    SQLite (sqlite3 and aiosqlite URLs alike) is a ``SqliteDatabase``, every other kind an
    ``EngineDatabase``."""
    if (url is None) == (engine is None):
        raise ValueError("DatabaseSessionService needs exactly one of db_url= or db_engine=")
    parsed = engine.url if engine is not None else async_url(url)  # type: ignore[arg-type]
    if parsed.get_backend_name() != "sqlite":
        return EngineDatabase(parsed, engine, **engine_kwargs)
    name = parsed.database or ""
    in_memory = name in ("", ":memory:") or (name.startswith("file:") and "mode=memory" in name)
    if in_memory and engine is not None:
        raise ValueError(
            "an in-memory SQLite engine cannot be shared with the store (each connection has "
            "a database of its own): pass db_url='sqlite+aiosqlite:///:memory:' instead, or an "
            "engine on a file"
        )
    if name.startswith("file:") and not in_memory:
        raise UnsupportedStoreUrlError(
            parsed.render_as_string(hide_password=True),
            "name the SQLite file by its path (sqlite+aiosqlite:///path/to/file.db), not as a "
            "file: URI",
        )
    return SqliteDatabase(
        None if in_memory else Path(name),
        synchronous="FULL",
        busy_timeout=30.0,
        engine=engine,
        engine_kwargs=engine_kwargs,
    )


# -- SQLite through sqlite3 ------------------------------------------------------------------------


class SqliteDatabase(Database):
    """One SQLite file, in WAL mode, reached through two connections of one process.

    The store's thread holds one: every SQLAlchemy transaction, every read (a long read
    never holds up the event loop) and every write that has to wait for the write lock run
    there. A short write of the hot path (``direct``: an append, a lease) runs at once on
    the calling thread on the other connection when the write lock is free, because handing
    it to a thread costs more than the transaction itself: the caller waits for SQLite's
    commit, never for another writer, since that connection does not wait (busy timeout 0)
    and the write goes to the thread instead.

    With ``synchronous=FULL`` on a file in WAL mode, both connections commit without
    flushing (``NORMAL``) and a durable write then waits for a flush of the log shared with
    the other writers of the moment (``WalFlusher``), never holding up the event loop for
    the disk.
    """

    dialect = "sqlite"
    driver = "sqlite3"

    def __init__(
        self,
        path: Path | None,
        *,
        synchronous: Synchronous,
        busy_timeout: float,
        engine: AsyncEngine | None = None,
        engine_kwargs: dict[str, Any] | None = None,
    ) -> None:
        """``path=None``: a database in memory, private to this object (everything then runs
        on the thread, on its one connection). ``engine`` (or one made from
        ``engine_kwargs``) is what ``engine`` returns."""
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be 'FULL' or 'NORMAL'; got {synchronous!r}")
        self.path = path
        self.synchronous = synchronous
        self.busy_timeout = busy_timeout
        self._thread = SqliteThread(
            path or Path(":memory:"), self._connect, self._disconnect, name="cairn-sqlite"
        )
        self._given_engine = engine
        self._engine_kwargs = engine_kwargs or {}
        self._engines: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncEngine] = (
            weakref.WeakKeyDictionary()
        )
        self._migrated = False
        self._now: sqlite3.Connection | None = None
        """The calling thread's connection, opened by the thread once the schema is current."""
        self._now_turn = threading.Lock()
        """Held while a calling thread uses ``_now`` (a store may serve several event loops)."""
        self._now_from = 0.0
        """``time.monotonic()`` from which writes may run on the calling thread again."""
        self._flusher = WalFlusher(path) if path is not None and synchronous == "FULL" else None
        """Flushes the log for durable writes; None: each commit is as ``synchronous`` says."""

    @property
    def engine(self) -> AsyncEngine:
        """An aiosqlite engine on the same file, for SQL of your own (made on first use, one
        per event loop); cairn's own work never goes through it."""
        if self._given_engine is not None:
            return self._given_engine
        if self.path is None:
            raise ValueError(
                "an in-memory SQLite store has no engine: its database lives in the store's "
                "own connection. Use a file (sqlite+aiosqlite:///path) to reach it with SQL."
            )
        loop = asyncio.get_running_loop()
        found = self._engines.get(loop)
        if found is None:
            kwargs = {"connect_args": {"timeout": self.busy_timeout}, **self._engine_kwargs}
            found = self._engines[loop] = create_async_engine(
                f"sqlite+aiosqlite:///{self.path}", **kwargs
            )
        return found

    def _connect(self) -> Connection:
        if self.path is not None:
            prepare_sqlite_file(self.path, busy_timeout=self.busy_timeout)
        engine = create_engine(
            f"sqlite:///{self.path or ':memory:'}",
            poolclass=SingletonThreadPool,
            connect_args={"timeout": self.busy_timeout, "check_same_thread": False},
        )
        install_sqlite_settings(engine, self._commit_synchronous(), self.busy_timeout)
        self._migrated = False
        connection = engine.connect()
        driver = connection.connection.driver_connection
        assert driver is not None
        if self._flusher is not None and not _in_wal_mode(driver):
            # The file cannot be in WAL mode (a file system without shared memory): each
            # commit flushes itself.
            self._flusher = None
            driver.execute(f"PRAGMA synchronous = {self.synchronous}")
        return connection

    def _commit_synchronous(self) -> Synchronous:
        """What the connections commit with: ``NORMAL`` when the flusher makes writes
        durable, else the chosen ``synchronous``."""
        return "NORMAL" if self._flusher is not None else self.synchronous

    async def _durable(self) -> None:
        """Return once the commits that ended before this call are on disk."""
        if self._flusher is not None:
            await uninterrupted(self._flusher.flushed(self._flusher.committed()))

    def _disconnect(self, connection: Connection) -> None:
        with self._now_turn:
            now, self._now = self._now, None
            if now is not None:
                now.close()
        engine = connection.engine
        connection.close()
        engine.dispose()

    def _in_transaction(
        self,
        connection: Connection,
        begin: str,
        operation: Callable[..., T],
        args: tuple[Any, ...],
        durable: bool,
    ) -> T:
        """Run ``operation`` in a transaction that starts with ``begin`` (sent to sqlite3 as is).

        The driver is in autocommit mode, so SQLAlchemy's begin sends nothing;
        its commit and rollback end the transaction begun here.
        """
        driver = connection.connection.driver_connection
        assert driver is not None
        relaxed = self._commit_synchronous() == "FULL" and not durable
        if relaxed:  # e.g. a lease: no need to wait for the disk
            driver.execute("PRAGMA synchronous = NORMAL")
        try:
            with connection.begin():
                driver.execute(begin)
                return operation(connection, *args)
        finally:
            if relaxed:
                driver.execute("PRAGMA synchronous = FULL")

    def _migrate_on(self, connection: Connection) -> MigrationReport:
        report = self._in_transaction(
            connection, "BEGIN", current_schema, (), True
        ) or self._in_transaction(connection, "BEGIN EXCLUSIVE", upgrade_schema, (), True)
        self._migrated = True
        if self._now is None and self.path is not None:
            now = sqlite3.connect(
                self.path, timeout=0, isolation_level=None, check_same_thread=False
            )
            now.execute(f"PRAGMA synchronous = {self._commit_synchronous()}")
            self._now = now
        return report

    async def migrate(self) -> MigrationReport:
        report = await self._thread.run(self._migrate_on)
        await self._durable()
        return report

    async def transaction(
        self, operation: Callable[..., T], *args: Any, write: bool, durable: bool = True
    ) -> T:
        begin = "BEGIN IMMEDIATE" if write else "BEGIN"

        def work(connection: Connection) -> T:
            if not self._migrated:
                self._migrate_on(connection)
            return self._in_transaction(connection, begin, operation, args, durable)

        result = await self._thread.run(work)
        if write and durable:
            await self._durable()
        return result

    async def direct(
        self, operation: Callable[..., T], *args: Any, write: bool, durable: bool = True
    ) -> T:
        """``operation(sqlite3_connection, *args)`` in one committed transaction (rolled back
        if it raises): a write on the calling thread if the write lock is free, else (and a
        read always) on the store's thread."""
        if write and time.monotonic() >= self._now_from and self._now_turn.acquire(blocking=False):
            try:
                done, result = self._write_now(operation, args, durable)
            finally:
                self._now_turn.release()
            if done:
                if durable:
                    await self._durable()
                return cast(T, result)

        def on_driver(connection: Connection, *args: Any) -> T:
            return operation(connection.connection.driver_connection, *args)

        return await self.transaction(on_driver, *args, write=write, durable=durable)

    def _write_now(
        self, operation: Callable[..., T], args: tuple[Any, ...], durable: bool
    ) -> tuple[bool, Any]:
        """(True, the result) if the write ran here; (False, None) if it has to wait for the
        write lock (or the connection is not open yet), having changed nothing."""
        now = self._now
        if now is None:
            return False, None
        relaxed = self._commit_synchronous() == "FULL" and not durable
        started = time.monotonic()
        try:
            if relaxed:
                now.execute("PRAGMA synchronous = NORMAL")
            try:
                now.execute("BEGIN IMMEDIATE")
                result = operation(now, *args)
                now.execute("COMMIT")
            except BaseException as exc:
                if now.in_transaction:
                    now.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError) and exc.sqlite_errorcode & 0xFF in (
                    sqlite3.SQLITE_BUSY,
                    sqlite3.SQLITE_LOCKED,
                ):
                    return False, None  # another writer has the file: wait on the thread
                raise
            finally:
                if relaxed:
                    now.execute("PRAGMA synchronous = FULL")
        except Exception as exc:
            damage = damage_of(self.path or ":memory:", exc)
            if damage is None:
                raise
            raise damage from exc
        finished = time.monotonic()
        if finished - started > SLOW_COMMIT:
            self._now_from = finished + SLOW_PAUSE
        return True, result

    async def close(self) -> None:
        await self._thread.close()
        if self._flusher is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._flusher.close)
        found = self._engines.pop(asyncio.get_running_loop(), None)
        if found is not None:
            await found.dispose()


def _in_wal_mode(driver: Any) -> bool:
    row = driver.execute("PRAGMA journal_mode").fetchone()
    return bool(row) and str(row[0]).lower() == "wal"


# -- any database through a SQLAlchemy async engine ------------------------------------------------


class _Engines(NamedTuple):
    writer: AsyncEngine
    reader: AsyncEngine
    """Repeatable-read snapshots."""
    direct: DirectConnections
    """Driver connections for the hot operations (``direct``)."""


def _in_transaction(
    connection: Connection, operation: Callable[..., T], args: tuple[Any, ...]
) -> T:
    with connection.begin():
        return operation(connection, *args)


class EngineDatabase(Database):
    """PostgreSQL (asyncpg) or MySQL/MariaDB (asyncmy, aiomysql) through a SQLAlchemy async
    engine, one pool per event loop."""

    def __init__(
        self,
        url: URL,
        engine: AsyncEngine | None,
        *,
        session_schema: bool = True,
        **engine_kwargs: Any,
    ) -> None:
        """``session_schema=False``: for a store with tables of its own (memory), which
        creates them itself; cairn's session schema is then never created or checked."""
        self._given_engine = engine
        self.url = url
        if url.get_backend_name() == "mysql":
            engine_kwargs.setdefault("isolation_level", "READ COMMITTED")
        self._engine_kwargs = engine_kwargs
        self.dialect = url.get_backend_name()
        self.driver = url.get_driver_name()
        """``asyncpg``, ``asyncmy`` or ``aiomysql``."""
        if self.driver not in _DIRECT_DRIVERS:
            raise UnsupportedStoreUrlError(
                url.render_as_string(hide_password=True),
                f"cairn's stores run on the drivers listed below, not {self.driver}",
            )
        self._where = describe(self.url)
        # asyncio drivers bind connections to one event loop, so each loop gets its own pool.
        self._engines: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Engines] = (
            weakref.WeakKeyDictionary()
        )
        self._migrated = not session_schema

    @property
    def engine(self) -> AsyncEngine:
        """The engine used on the running event loop."""
        return self._engines_here().writer

    def _engines_here(self) -> _Engines:
        loop = asyncio.get_running_loop()
        found = self._engines.get(loop)
        if found is not None:
            return found
        engine = self._given_engine or self._create_engine()
        if engine is not self._given_engine and not self._engine_kwargs.get("pool_pre_ping"):
            ping_idle_connections(engine.sync_engine)
        if engine.dialect.driver == "asyncpg" and (
            engine is not self._given_engine or not self._engines
        ):
            refuse_connections_in_transaction(engine.sync_engine)
        # One snapshot for the session row, its state and its events.
        reader = engine.execution_options(isolation_level="REPEATABLE READ")
        ping = bool(self._engine_kwargs.get("pool_pre_ping"))
        direct = DirectConnections(engine, _DIRECT_DRIVERS[self.driver], ping_every_use=ping)
        found = _Engines(engine, reader, direct)
        self._engines[loop] = found
        return found

    def _create_engine(self) -> AsyncEngine:
        try:
            return create_async_engine(self.url, **self._engine_kwargs)
        except ModuleNotFoundError as exc:
            raise UnsupportedStoreUrlError(
                self.url.render_as_string(hide_password=True),
                f"its driver is not installed ({exc.name}); install it as shown below",
            ) from exc

    async def migrate(self) -> MigrationReport:
        """Safe from many processes at once: a database lock makes the others wait, then
        find the schema current."""
        engines = self._engines_here()

        async def upgrade() -> MigrationReport:
            async with engines.reader.begin() as connection:
                current = await connection.run_sync(current_schema)
            if current is not None:
                return current
            async with engines.writer.begin() as connection:
                return await connection.run_sync(upgrade_schema)

        report = await uninterrupted(self._retry_loop(upgrade, write=True, conflict=is_retryable))
        self._migrated = True
        return report

    async def transaction(
        self, operation: Callable[..., T], *args: Any, write: bool, durable: bool = True
    ) -> T:
        engines = self._engines_here()
        engine = engines.writer if write else engines.reader

        async def attempt() -> T:
            async with engine.connect() as connection:
                # Begin, work and commit in one trip into synchronous code.
                return await connection.run_sync(_in_transaction, operation, args)

        return await self._retrying(attempt, write=write, conflict=is_retryable)

    async def _retrying(
        self,
        attempt: Callable[[], Awaitable[T]],
        *,
        write: bool,
        conflict: Callable[[BaseException], bool],
    ) -> T:
        """Run ``attempt`` under the retry policy (``_retry_loop``), the whole of it
        ``uninterrupted``: a cancellation takes effect once it ends, never in the middle of
        a transaction."""
        await self.migrate_once()
        return await uninterrupted(self._retry_loop(attempt, write=write, conflict=conflict))

    async def direct(
        self, operation: Callable[..., Awaitable[T]], *args: Any, write: bool, durable: bool = True
    ) -> T:
        """``await operation(driver_connection, *args)``: one trip to PostgreSQL (asyncpg) or
        MySQL/MariaDB (asyncmy, aiomysql), on a connection that skips the flush at commit
        when ``durable=False`` and the database allows it."""
        direct = self._engines_here().direct

        async def attempt() -> T:
            async with direct.connection(durable=durable) as connection:
                return await operation(connection, *args)

        return await self._retrying(attempt, write=write, conflict=is_retryable_statement)

    async def _retry_loop(
        self,
        attempt: Callable[[], Awaitable[T]],
        *,
        write: bool,
        conflict: Callable[[BaseException], bool],
    ) -> T:
        """The one retry policy: a conflict (deadlock, serialization failure) runs again after
        a backoff, up to ``RETRIES`` times; a read whose connection died runs once more on a
        fresh one; otherwise a dead store is ``StoreUnavailableError``."""
        for number in range(RETRIES):
            try:
                return await attempt()
            except Exception as exc:
                if (conflict(exc) or isinstance(exc, WriteConflict)) and number + 1 < RETRIES:
                    # Jittered, so writers that collided once do not collide again.
                    await asyncio.sleep(random.uniform(0, 0.005 * 2**number))
                    continue
                if isinstance(exc, BrokenConnection) or is_unavailable(exc):
                    if not write and number == 0:
                        continue  # a read may simply run again on a fresh connection
                    cause = exc.__cause__ if isinstance(exc, BrokenConnection) else exc
                    raise self._unavailable(cause or exc) from exc
                raise
        raise AssertionError("unreachable")

    def _unavailable(self, exc: BaseException) -> StoreUnavailableError:
        """The error for a store that cannot answer: what failed, and what to check or do."""
        reason = next(
            (str(cause) for cause in (getattr(exc, "orig", None), exc) if cause and str(cause)),
            type(exc).__name__,
        ).splitlines()[0]
        missing = missing_part(exc)
        if missing == "database":
            name = self.url.database
            fix = (
                f"Create the database (e.g. CREATE DATABASE {name}) or name an existing one "
                "in the store URL."
            )
        elif missing == "role":
            user = self.url.username
            create = (
                f"CREATE ROLE {user} LOGIN"
                if self.dialect == "postgresql"
                else f"CREATE USER '{user}'@'%' and a GRANT on the database"
            )
            fix = f"Create the user (e.g. {create}), or fix the user and password in the store URL."
        else:
            fix = (
                "Check that the server is running and that the URL's host, port, database "
                "and user are right."
            )
        return StoreUnavailableError(
            f"cannot use the session store, {self._where}: {reason}. {fix}"
        )

    async def close(self) -> None:
        """Close this loop's pool (a given engine is left to its owner)."""
        found = self._engines.pop(asyncio.get_running_loop(), None)
        if found is None:
            return
        await found.direct.close()
        if self._given_engine is None:
            await found.writer.dispose()
