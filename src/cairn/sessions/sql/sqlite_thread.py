"""One connection to a SQLite file, made and used on a thread of its own.

A SQLite call blocks on the disk (and on other processes' writes, up to the busy timeout),
so cairn's SQLite stores make their reads and their waiting writes on a thread that holds
the store's connection (the session store's short writes on a free file are the exception:
``database.SqliteDatabase``). A failure that shows the file is damaged (not a database, a
damaged page) comes back as ``StoreDamagedError`` naming the file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Generic, TypeVar

from cairn.sessions.sql.sqlite_file import damage_of

C = TypeVar("C")
T = TypeVar("T")


class SqliteThread(Generic[C]):
    """Runs work on one connection ``connect()`` makes (on first use, on the thread)."""

    def __init__(
        self,
        path: Path,
        connect: Callable[[], C],
        disconnect: Callable[[C], None],
        *,
        name: str,
    ) -> None:
        self.path = path
        self._connect = connect
        self._disconnect = disconnect
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._connection: C | None = None

    def _connection_here(self) -> C:
        if self._connection is None:
            self._connection = self._connect()
        return self._connection

    async def run(self, work: Callable[[C], T]) -> T:
        """``work(connection)`` on the thread; a damaged file is ``StoreDamagedError``."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, lambda: work(self._connection_here()))
        except Exception as exc:  # sqlite3's errors, SQLAlchemy's, or sqlean's
            damage = damage_of(self.path, exc)
            if damage is None:
                raise
            raise damage from exc

    async def close(self) -> None:
        """Close the connection (a new one is made if the thread is used again)."""

        def close() -> None:
            if self._connection is not None:
                connection, self._connection = self._connection, None
                self._disconnect(connection)

        await asyncio.get_running_loop().run_in_executor(self._executor, close)
