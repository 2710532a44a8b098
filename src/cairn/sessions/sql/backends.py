"""One backend per kind of database, chosen once when a store is built.

A backend runs the store's operations on its ``Database``. Every operation has a SQLAlchemy
Core version (``operations``), which ``CoreBackend`` runs as is: SQLite through aiosqlite,
and any other driver. The hot operations (load a session, append an event, take and
release a lease) have a faster form where the driver allows one, and the backend of that
database runs it instead:

- ``SqliteBackend`` (``SqliteSessionService``): the sqlite3 module itself
  (``sqlite_direct``), inside the same transactions.
- ``PostgresBackend`` (PostgreSQL through asyncpg): one SQL statement per operation on an
  asyncpg connection (``postgres_direct``), state deletions included.
- ``MysqlBackend`` (MySQL/MariaDB through asyncmy or aiomysql): one trip per operation on
  the driver's connection (``mysql_direct``); an append is one multi-statement transaction.

Each form stores the same rows, takes its locks in the one order ``operations.append_event``
writes down, and raises the same errors; the conformance suite runs every store.
"""

from __future__ import annotations

from typing import Any

from cairn.events.event import Event
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.lease import SessionLease
from cairn.sessions.session import Session
from cairn.sessions.sql import mysql_direct, postgres_direct, sqlite_direct
from cairn.sessions.sql import operations as ops
from cairn.sessions.sql.database import Database, EngineDatabase, SqliteDatabase


class CoreBackend:
    """Every operation through SQLAlchemy Core, in the database's transactions."""

    # The transaction functions of the hot operations; a faster backend names its own.
    _load: Any = staticmethod(ops.load_session)
    _append: Any = staticmethod(ops.append_event)
    _acquire: Any = staticmethod(ops.acquire_lease)
    _release: Any = staticmethod(ops.release_lease)

    def __init__(self, database: Database) -> None:
        self.database = database

    async def load_session(
        self, key: ops.SessionKey, config: GetSessionConfig | None
    ) -> Session | None:
        found: Session | None = await self.database.transaction(
            self._load, key, config, write=False
        )
        return found

    async def append_event(
        self,
        key: ops.SessionKey,
        held_revision: int,
        held_update_time: float,
        event: Event,
        raw: str,
        rows: list[dict[str, Any]],
        removals: list[dict[str, Any]],
        lease: SessionLease | None,
    ) -> tuple[int, float] | None:
        """The new (revision, update_time); None when this exact event is already stored
        (a retry). A taken event id raises SQLAlchemy's ``IntegrityError``."""
        try:
            appended: tuple[int, float] = await self.database.transaction(
                self._append,
                key,
                held_revision,
                held_update_time,
                event,
                raw,
                rows,
                removals,
                lease,
                write=True,
            )
        except ops.EventAlreadyStored:
            return None
        return appended

    async def acquire_lease(
        self,
        key: ops.SessionKey,
        holder: str,
        ttl: float,
        generation: int | None,
        replacing: str | None,
    ) -> SessionLease | str:
        """Raises ``IntegrityError`` when another process created the lease row first."""
        got: SessionLease | str = await self.database.transaction(
            self._acquire, key, holder, ttl, generation, replacing, write=True, durable=False
        )
        return got

    async def release_lease(self, key: ops.SessionKey, holder: str, generation: int | None) -> None:
        await self.database.transaction(
            self._release, key, holder, generation, write=True, durable=False
        )


class SqliteBackend(CoreBackend):
    """A SQLite file through sqlite3: the hot operations in ``sqlite_direct``, through
    ``SqliteDatabase.direct`` (a write runs on the calling thread when the file is free)."""

    database: SqliteDatabase

    async def load_session(
        self, key: ops.SessionKey, config: GetSessionConfig | None
    ) -> Session | None:
        return await self.database.direct(sqlite_direct.load_session, key, config, write=False)

    async def append_event(
        self,
        key: ops.SessionKey,
        held_revision: int,
        held_update_time: float,
        event: Event,
        raw: str,
        rows: list[dict[str, Any]],
        removals: list[dict[str, Any]],
        lease: SessionLease | None,
    ) -> tuple[int, float] | None:
        try:
            await self.database.direct(
                sqlite_direct.append_event,
                key,
                held_revision,
                event,
                raw,
                rows,
                removals,
                lease,
                write=True,
            )
        except ops.EventAlreadyStored:
            return None
        return held_revision + 1, max(held_update_time, event.timestamp)

    async def acquire_lease(
        self,
        key: ops.SessionKey,
        holder: str,
        ttl: float,
        generation: int | None,
        replacing: str | None,
    ) -> SessionLease | str:
        return await self.database.direct(
            sqlite_direct.acquire_lease,
            key,
            holder,
            ttl,
            generation,
            replacing,
            write=True,
            durable=False,
        )

    async def release_lease(self, key: ops.SessionKey, holder: str, generation: int | None) -> None:
        await self.database.direct(
            sqlite_direct.release_lease, key, holder, generation, write=True, durable=False
        )


class DirectBackend(CoreBackend):
    """The hot operations sent straight to the driver (``EngineDatabase.statement``), each
    in one trip: ``_direct`` is the module that writes them for one kind of database."""

    database: EngineDatabase
    _direct: Any

    async def load_session(
        self, key: ops.SessionKey, config: GetSessionConfig | None
    ) -> Session | None:
        found: Session | None = await self.database.statement(
            self._direct.load_session, key, config, write=False
        )
        return found

    async def append_event(
        self,
        key: ops.SessionKey,
        held_revision: int,
        held_update_time: float,
        event: Event,
        raw: str,
        rows: list[dict[str, Any]],
        removals: list[dict[str, Any]],
        lease: SessionLease | None,
    ) -> tuple[int, float] | None:
        stored = await self.database.statement(
            self._direct.append_event,
            key,
            held_revision,
            event,
            raw,
            rows,
            removals,
            lease,
            write=True,
        )
        if not stored:
            return None
        return held_revision + 1, max(held_update_time, event.timestamp)

    async def acquire_lease(
        self,
        key: ops.SessionKey,
        holder: str,
        ttl: float,
        generation: int | None,
        replacing: str | None,
    ) -> SessionLease | str:
        got: SessionLease | str = await self.database.statement(
            self._direct.acquire_lease,
            key,
            holder,
            ttl,
            generation,
            replacing,
            write=True,
            durable=False,
        )
        return got

    async def release_lease(self, key: ops.SessionKey, holder: str, generation: int | None) -> None:
        await self.database.statement(
            self._direct.release_lease, key, holder, generation, write=True, durable=False
        )


class PostgresBackend(DirectBackend):
    """PostgreSQL through asyncpg: each hot operation one statement (``postgres_direct``)."""

    _direct = postgres_direct


class MysqlBackend(DirectBackend):
    """MySQL/MariaDB through asyncmy or aiomysql: each hot operation one trip, an append or a
    lease one multi-statement transaction (``mysql_direct``)."""

    _direct = mysql_direct


def backend_for(database: Database) -> CoreBackend:
    """The backend of ``database``'s kind (decided once, from its URL or engine)."""
    if isinstance(database, SqliteDatabase):
        return SqliteBackend(database)
    if isinstance(database, EngineDatabase) and database.driver == "asyncpg":
        return PostgresBackend(database)
    if isinstance(database, EngineDatabase) and database.driver in ("asyncmy", "aiomysql"):
        return MysqlBackend(database)
    return CoreBackend(database)
