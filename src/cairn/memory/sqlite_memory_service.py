"""Memory in a SQLite file, searched with FTS5 full-text search ranked by bm25."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from cairn.memory._text import MemoryRow
from cairn.memory.base_memory_service import DEFAULT_MAX_RESULTS, BaseMemoryService
from cairn.sessions.sql.sqlite_file import prepare_sqlite_file
from cairn.sessions.sql.sqlite_thread import SqliteThread

T = TypeVar("T")

DEFAULT_PATH = Path(".cairn") / "memory.db"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cairn_memory (
    id INTEGER PRIMARY KEY,
    app_name TEXT NOT NULL,
    user_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    session_id TEXT,
    author TEXT NOT NULL,
    timestamp REAL NOT NULL,
    content TEXT NOT NULL,
    custom_metadata TEXT NOT NULL,
    UNIQUE (app_name, user_id, event_id)
);
CREATE VIRTUAL TABLE IF NOT EXISTS cairn_memory_fts
    USING fts5(text, tokenize = 'porter unicode61 remove_diacritics 2');
"""
_INSERT = """
INSERT INTO cairn_memory
    (app_name, user_id, event_id, session_id, author, timestamp, content, custom_metadata)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (app_name, user_id, event_id) DO NOTHING
"""
_SEARCH = """
SELECT m.event_id, m.session_id, m.author, m.timestamp, f.text, m.content, m.custom_metadata
FROM cairn_memory_fts AS f JOIN cairn_memory AS m ON m.id = f.rowid
WHERE cairn_memory_fts MATCH ? AND m.app_name = ? AND m.user_id = ?
ORDER BY bm25(cairn_memory_fts), m.timestamp DESC
LIMIT ?
"""


def fts5_query(query_words: list[str]) -> str:
    """An FTS5 query matching any of the words, each quoted so no word is read as syntax."""
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in query_words)


def insert_memory(
    connection: sqlite3.Connection, app_name: str, user_id: str, row: MemoryRow
) -> int | None:
    """Store one memory and index its text; its rowid, or None if it was stored already."""
    cursor = connection.execute(
        _INSERT,
        (
            app_name,
            user_id,
            row.event_id,
            row.session_id,
            row.author,
            row.timestamp,
            row.content_json,
            row.metadata_json,
        ),
    )
    if cursor.rowcount != 1:
        return None
    connection.execute(
        "INSERT INTO cairn_memory_fts (rowid, text) VALUES (?, ?)", (cursor.lastrowid, row.text)
    )
    return cursor.lastrowid


def memory_rows(found: Iterable[Sequence[Any]]) -> list[MemoryRow]:
    """Memories from result rows of (event id, session id, author, timestamp, text,
    content JSON, metadata JSON), the columns every SQLite search selects."""
    return [
        MemoryRow(
            event_id=event_id,
            session_id=session_id,
            author=author,
            timestamp=timestamp,
            text=text,
            content_json=content,
            metadata_json=metadata,
        )
        for event_id, session_id, author, timestamp, text, content, metadata in found
    ]


class SqliteMemoryService(BaseMemoryService):
    """Memories in a SQLite file (default ``.cairn/memory.db``), found by FTS5 full-text search.

    Words match after stemming (``cold`` finds ``colder``); results are
    ranked by bm25, newer first among equals. The tables ``cairn_memory`` and
    ``cairn_memory_fts`` are created at first use, so the file may be the
    session store's own (they are outside its migrations). Work runs on one
    thread per service, so the event loop never waits for the disk.
    """

    def __init__(
        self,
        db_path: str | Path = DEFAULT_PATH,
        *,
        max_results: int = DEFAULT_MAX_RESULTS,
        busy_timeout: float = 30.0,
    ) -> None:
        super().__init__(max_results=max_results)
        text = str(db_path)
        if text.startswith("sqlite:///"):
            text = text.removeprefix("sqlite:///")
        if text in ("", ":memory:"):
            raise ValueError(
                "SqliteMemoryService needs a file; use InMemoryMemoryService for memory that "
                "lives in this process only"
            )
        self.path = Path(text)
        self.busy_timeout = busy_timeout
        # ``self._connect`` is looked up at connect time: the semantic store makes its own.
        self._thread: SqliteThread[sqlite3.Connection] = SqliteThread(
            self.path, lambda: self._connect(), lambda c: c.close(), name="cairn-memory"
        )

    def _connect(self) -> sqlite3.Connection:
        prepare_sqlite_file(self.path, busy_timeout=self.busy_timeout)
        connection = sqlite3.connect(
            self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            # One writer creates the tables; others wait, then find them there.
            connection.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    connection.execute(statement)
            connection.execute("COMMIT")
        except BaseException:
            connection.close()
            raise
        return connection

    async def _on_thread(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await self._thread.run(work)

    async def _add(self, app_name: str, user_id: str, rows: list[MemoryRow]) -> None:
        def add(connection: sqlite3.Connection) -> None:
            connection.execute("BEGIN IMMEDIATE")
            try:
                for row in rows:
                    insert_memory(connection, app_name, user_id, row)
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise

        await self._on_thread(add)

    async def _search(self, app_name: str, user_id: str, query_words: list[str]) -> list[MemoryRow]:
        arguments = (fts5_query(query_words), app_name, user_id, self.max_results)

        def search(connection: sqlite3.Connection) -> list[MemoryRow]:
            return memory_rows(connection.execute(_SEARCH, arguments))

        return await self._on_thread(search)

    async def close(self) -> None:
        await self._thread.close()
