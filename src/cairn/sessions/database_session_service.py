"""A session store on PostgreSQL, MySQL/MariaDB or SQLite through SQLAlchemy 2 (async)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from cairn.sessions.base_session_service import DEFAULT_MAX_EVENT_BYTES
from cairn.sessions.sql.database import Database, database_for
from cairn.sessions.sql.migrate import MigrationReport
from cairn.sessions.sql.store import SqlSessionStore


class DatabaseSessionService(SqlSessionStore):
    """Sessions in a SQL database shared by any number of processes.

    ``db_url``: ``postgresql+asyncpg://``, ``mysql+asyncmy://``,
    ``mysql+aiomysql://`` (MySQL and MariaDB) or ``sqlite+aiosqlite://``
    (``postgresql://``, ``mysql://`` and ``sqlite://`` pick those drivers); or
    pass a ready ``db_engine``. Extra keyword arguments go to
    ``create_async_engine`` (pool size, ``connect_args``, ...). A SQLite URL
    is the SQLite store of ``SqliteSessionService`` (``synchronous="FULL"``,
    30 s busy timeout; ``sqlite+aiosqlite:///:memory:`` keeps it in memory);
    there the keyword arguments only shape ``engine``. Connections
    are pooled; one that sat unused for 2 seconds is pinged before use and
    replaced if dead (say, after a server restart), so a busy pool pays no
    ping. If a connection dies in use anyway, the pool is discarded: a read is
    retried once on a fresh connection, a write fails with
    ``StoreUnavailableError`` (nothing half-written) and the next call
    reconnects. ``pool_pre_ping=True`` pings every connection before every use
    instead. The schema is created or migrated in place on first use. Use
    ``async with`` or ``close()`` to release the pool.
    """

    database: Database

    def __init__(
        self,
        db_url: str | URL | None = None,
        db_engine: AsyncEngine | None = None,
        *,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        **engine_kwargs: Any,
    ) -> None:
        super().__init__(
            database_for(db_url, db_engine, **engine_kwargs), max_event_bytes=max_event_bytes
        )

    @property
    def engine(self) -> AsyncEngine:
        """The engine used on the running event loop (SQLite: one on the same file for SQL of
        your own; cairn's own work on SQLite goes through sqlite3, as in
        ``SqliteSessionService``)."""
        return self.database.engine

    async def migrate(self) -> MigrationReport:
        """Create or upgrade the schema now (otherwise it happens on first use).

        Safe to run from many processes at once: a database lock makes the
        others wait, then find the schema current.
        """
        return await self.database.migrate()

    async def prepare_tables(self) -> None:
        """ADK's name for ``migrate()``: create or upgrade the schema now, not on first use."""
        await self.database.migrate_once()
