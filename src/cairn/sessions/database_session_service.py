"""A session store on PostgreSQL, MySQL/MariaDB or SQLite through SQLAlchemy 2 (async)."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from sqlalchemy import Connection
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from cairn.errors import StoreDamagedError, StoreUnavailableError
from cairn.events.event import Event
from cairn.sessions.base_session_service import DEFAULT_MAX_EVENT_BYTES
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.ids import check_ids
from cairn.sessions.lease import SessionLease, bound_lease
from cairn.sessions.session import Session
from cairn.sessions.sql import postgres_direct as direct_sql
from cairn.sessions.sql.engines import (
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
from cairn.sessions.sql.migrate import MigrationReport, upgrade_schema
from cairn.sessions.sql.postgres_direct import BrokenConnection, DirectConnections
from cairn.sessions.sql.postgres_direct import is_retryable as is_retryable_statement
from cairn.sessions.sql.sqlite_file import damage_of, prepare_sqlite_file
from cairn.sessions.sql.store import SqlSessionStore
from cairn.sessions.uninterrupted import uninterrupted

T = TypeVar("T")

_RETRIES = 5


class _Engines(NamedTuple):
    writer: AsyncEngine
    reader: AsyncEngine
    """Repeatable-read snapshots (SQLite: a deferred transaction)."""
    direct: DirectConnections | None
    """PostgreSQL via asyncpg: the hot path's connections."""
    one_at_a_time: asyncio.Lock | None
    """A pool of one shared connection (in-memory SQLite): its transactions take turns."""


def _turn(lock: asyncio.Lock | None) -> contextlib.AbstractAsyncContextManager[Any]:
    """Hold ``lock`` (a shared connection's turn), or nothing when there is none."""
    return lock if lock is not None else contextlib.nullcontext()


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
        if engine.dialect.driver == "asyncpg" and (
            engine is not self._given_engine or not self._engines
        ):
            refuse_connections_in_transaction(engine.sync_engine)
        dialect = engine.dialect.name
        if dialect == "sqlite":
            if engine is not self._given_engine or not self._engines:
                install_sqlite_settings(engine.sync_engine, "FULL", 30.0)
            reader = engine.execution_options(cairn_begin="BEGIN")
        else:
            # One snapshot for the session row, its state and its events.
            reader = engine.execution_options(isolation_level="REPEATABLE READ")
        direct = None
        if engine.dialect.driver == "asyncpg":
            ping = bool(self._engine_kwargs.get("pool_pre_ping"))
            direct = DirectConnections(engine, ping_every_use=ping)
        shared = asyncio.Lock() if isinstance(engine.pool, StaticPool) else None
        found = _Engines(engine, reader, direct, shared)
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
        engines = self._engines_here()
        engine = engines.writer
        if engine.dialect.name == "sqlite":
            engine = engine.execution_options(cairn_begin="BEGIN EXCLUSIVE")
            if self._sqlite_file is not None:
                await asyncio.to_thread(prepare_sqlite_file, self._sqlite_file)

        async def upgrade() -> MigrationReport:
            async with _turn(engines.one_at_a_time), engine.begin() as connection:
                return await connection.run_sync(upgrade_schema)

        try:
            report = await uninterrupted(upgrade())
        except Exception as exc:
            damage = self._damage(exc)
            if damage is not None:
                raise damage from exc
            if is_unavailable(exc):
                raise self._unavailable(exc) from exc
            raise
        self._migrated = True
        return report

    async def prepare_tables(self) -> None:
        """ADK's name for ``migrate()``: create or upgrade the schema now, not on first use."""
        if not self._migrated:
            await self.migrate()

    @property
    def _sqlite_file(self) -> Path | None:
        """The file of a SQLite store (None for other databases and in-memory SQLite)."""
        database = self._url.database
        if self._url.get_backend_name() != "sqlite" or database in (None, "", ":memory:"):
            return None
        return None if database.startswith("file:") else Path(database)

    def _damage(self, exc: BaseException) -> StoreDamagedError | None:
        """The damaged-file error a SQLite failure reports, if it is one."""
        if self._url.get_backend_name() != "sqlite":
            return None
        return damage_of(self._sqlite_file or str(self._url.database), exc)

    def _unavailable(self, exc: BaseException) -> StoreUnavailableError:
        """The error for a store that cannot answer: what failed, and what to check or do."""
        reason = next(
            (str(cause) for cause in (getattr(exc, "orig", None), exc) if cause and str(cause)),
            type(exc).__name__,
        ).splitlines()[0]
        missing = missing_part(exc)
        if missing == "database":
            name = self._url.database
            fix = (
                f"Create the database (e.g. CREATE DATABASE {name}) or name an existing one "
                "in the store URL."
            )
        elif missing == "role":
            user = self._url.username
            create = (
                f"CREATE ROLE {user} LOGIN"
                if self._url.get_backend_name() == "postgresql"
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

    async def _transaction(self, operation: Callable[..., T], *args: Any, write: bool) -> T:
        if not self._migrated:
            await self.migrate()
        return await uninterrupted(self._run_transaction(operation, args, write))

    async def _run_transaction(
        self, operation: Callable[..., T], args: tuple[Any, ...], write: bool
    ) -> T:
        """``operation`` in one transaction (retried on deadlock); run it ``uninterrupted``."""
        engines = self._engines_here()
        engine = engines.writer if write else engines.reader
        for attempt in range(_RETRIES):
            try:
                async with _turn(engines.one_at_a_time), engine.connect() as connection:
                    # Begin, work and commit in one trip into synchronous code.
                    return await connection.run_sync(_in_transaction, operation, args)
            except Exception as exc:
                damage = self._damage(exc)
                if damage is not None:
                    raise damage from exc
                if is_retryable(exc) and attempt + 1 < _RETRIES:
                    await asyncio.sleep(0.01 * 2**attempt)
                    continue
                if is_unavailable(exc):
                    if not write and attempt == 0:
                        continue  # a read may simply run again on a fresh connection
                    raise self._unavailable(exc) from exc
                raise
        raise AssertionError("unreachable")

    async def close(self) -> None:
        """Close this loop's connection pool (a given ``db_engine`` is left to its owner)."""
        loop = asyncio.get_running_loop()
        found = self._engines.pop(loop, None)
        if found is None:
            return
        if found.direct is not None:
            await found.direct.close()
        if self._given_engine is None:
            await found.writer.dispose()

    # -- the hot path on PostgreSQL ---------------------------------------------------------------
    async def _direct(
        self, operation: Callable[..., Awaitable[T]], *args: Any, write: bool, durable: bool = True
    ) -> T:
        """Run one of ``postgres_direct``'s statements, with the retries of ``_transaction``."""
        if not self._migrated:
            await self.migrate()
        return await uninterrupted(self._run_direct(operation, args, write, durable))

    async def _run_direct(
        self,
        operation: Callable[..., Awaitable[T]],
        args: tuple[Any, ...],
        write: bool,
        durable: bool,
    ) -> T:
        direct = self._engines_here().direct
        assert direct is not None
        for attempt in range(_RETRIES):
            try:
                async with direct.connection(durable=durable) as connection:
                    return await operation(connection, *args)
            except BrokenConnection as exc:
                if not write and attempt == 0:
                    continue  # a read may simply run again on a fresh connection
                raise self._unavailable(exc.__cause__ or exc) from exc
            except Exception as exc:
                if is_retryable_statement(exc) and attempt + 1 < _RETRIES:
                    await asyncio.sleep(0.01 * 2**attempt)
                    continue
                if is_unavailable(exc):  # connecting failed
                    raise self._unavailable(exc) from exc
                raise
        raise AssertionError("unreachable")

    def _has_direct(self) -> bool:
        return self._engines_here().direct is not None

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        check_ids(app_name, user_id, session_id)
        if not self._has_direct():
            return await super().get_session(
                app_name=app_name, user_id=user_id, session_id=session_id, config=config
            )
        key = (app_name, user_id, session_id)
        return await self._direct(direct_sql.load_session, key, config, write=False)

    async def _append_event_impl(self, session: Session, event: Event) -> tuple[int, float] | None:
        if not self._has_direct() or event.actions.removed_state_keys:
            # Deleting state keys is rare (a rewind): it takes the general path.
            return await super()._append_event_impl(session, event)
        raw, rows, _ = self._encode_append(session, event)
        key = (session.app_name, session.user_id, session.id)
        stored = await self._direct(
            direct_sql.append_event,
            key,
            session.revision,
            event,
            raw,
            rows,
            bound_lease(session),
            write=True,
        )
        if not stored:
            return None
        return session.revision + 1, max(session.last_update_time, event.timestamp)

    async def acquire_session_lease(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        holder: str,
        ttl: float,
        generation: int | None = None,
        replacing: str | None = None,
    ) -> SessionLease | str:
        check_ids(app_name, user_id, session_id)
        if not self._has_direct():
            return await super().acquire_session_lease(
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                holder=holder,
                ttl=ttl,
                generation=generation,
                replacing=replacing,
            )
        key = (app_name, user_id, session_id)
        return await self._direct(
            direct_sql.acquire_lease,
            key,
            holder,
            ttl,
            generation,
            replacing,
            write=True,
            durable=False,
        )

    async def release_session_lease(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        holder: str,
        generation: int | None = None,
    ) -> None:
        check_ids(app_name, user_id, session_id)
        if not self._has_direct():
            return await super().release_session_lease(
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                holder=holder,
                generation=generation,
            )
        key = (app_name, user_id, session_id)
        await self._direct(
            direct_sql.release_lease, key, holder, generation, write=True, durable=False
        )


def _in_transaction(
    connection: Connection, operation: Callable[..., T], args: tuple[Any, ...]
) -> T:
    with connection.begin():
        return operation(connection, *args)
