"""The hot operations of a session store, one complete module per kind of database, chosen
once when the store is built.

An invocation loads its session, takes and releases a lease, and appends each event. Each
kind of database has these four written for its own driver, run by its ``Database.direct``
on the driver's own connection:

- SQLite (sqlite3, and aiosqlite URLs too): ``sqlite_direct``, in a transaction on a
  sqlite3 connection (an append or a lease on the calling thread while the file is free).
- PostgreSQL (asyncpg): ``postgres_direct``, each operation one SQL statement.
- MySQL/MariaDB (asyncmy, aiomysql): ``mysql_direct``, each operation one trip (an append
  is one multi-statement transaction).

Everything else runs through SQLAlchemy Core (``operations``), the same for every kind. The
rows the hot operations write, and why an append is refused, come from ``rows``.

Every backend takes an append's locks in one order: the lease row, share-locked, so a
takeover waits for this append to commit or this append sees the takeover; the session
row, by the conditional UPDATE that checks the revision (appends to one session serialize
here, and nothing else is written when it is stale); the state rows, upserted and deleted in
a fixed key order; the event row last, so among appends that wrote one key, event ``pk``
order is commit order. (SQLite's ``BEGIN IMMEDIATE`` holds the whole file first.)

Every backend takes a lease by one algorithm, a single conditional upsert on the lease row:
a free, released, expired or ``replacing`` holder's lease is overwritten with the next
generation, and anyone else's live lease is left alone (its holder is returned); a renewal
extends only the caller's own acquisition, (holder, generation). Lease writes need not wait
for the disk where the database allows it: losing one in a power cut frees a session early
or refuses its new holder's appends (``LeaseLostError``), and never lets two holders commit,
because a durable append flushes every lease write before it.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from cairn.events.event import Event
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.lease import SessionLease
from cairn.sessions.session import Session
from cairn.sessions.sql import mysql_direct, postgres_direct, sqlite_direct
from cairn.sessions.sql.database import Database, SqliteDatabase
from cairn.sessions.sql.rows import EventAlreadyStored, SessionKey

_MODULES = {
    "asyncpg": postgres_direct,
    "asyncmy": mysql_direct,
    "aiomysql": mysql_direct,
}


class Backend:
    """The four hot operations of ``database``'s kind, from the module that writes them."""

    def __init__(self, database: Database, module: ModuleType) -> None:
        self.database = database
        self.module = module

    async def load_session(
        self, key: SessionKey, config: GetSessionConfig | None
    ) -> Session | None:
        found: Session | None = await self.database.direct(
            self.module.load_session, key, config, write=False
        )
        return found

    async def append_event(
        self,
        key: SessionKey,
        held_revision: int,
        held_update_time: float,
        event: Event,
        raw: str,
        rows: list[dict[str, Any]],
        removals: list[dict[str, Any]],
        lease: SessionLease | None,
    ) -> tuple[int, float] | None:
        """The new (revision, update_time); None when this exact event is already stored
        (a retry). Refusals raise (``rows.refusal``, ``LeaseLostError``)."""
        try:
            await self.database.direct(
                self.module.append_event,
                key,
                held_revision,
                event,
                raw,
                rows,
                removals,
                lease,
                write=True,
            )
        except EventAlreadyStored:
            return None
        return held_revision + 1, max(held_update_time, event.timestamp)

    async def acquire_lease(
        self,
        key: SessionKey,
        holder: str,
        ttl: float,
        generation: int | None,
        replacing: str | None,
    ) -> SessionLease | str:
        got: SessionLease | str = await self.database.direct(
            self.module.acquire_lease,
            key,
            holder,
            ttl,
            generation,
            replacing,
            write=True,
            durable=False,
        )
        return got

    async def release_lease(self, key: SessionKey, holder: str, generation: int | None) -> None:
        await self.database.direct(
            self.module.release_lease, key, holder, generation, write=True, durable=False
        )


def backend_for(database: Database) -> Backend:
    """The backend of ``database``'s kind (decided once, from its URL or engine)."""
    if isinstance(database, SqliteDatabase):
        return Backend(database, sqlite_direct)
    return Backend(database, _MODULES[database.driver])
