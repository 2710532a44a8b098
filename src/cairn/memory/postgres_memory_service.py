"""Memory in PostgreSQL, searched with full-text search (tsvector, GIN index, ts_rank)."""

from __future__ import annotations

import re
from typing import Any

from cairn.memory._text import MemoryRow
from cairn.memory.base_memory_service import DEFAULT_MAX_RESULTS, BaseMemoryService
from cairn.sessions.sql.database import EngineDatabase
from cairn.sessions.sql.engines import async_url

_SETUP_LOCK = 7_236_110_905_301  # pg_advisory_xact_lock key: one process creates the table


def _schema(config: str) -> list[str]:
    return [
        f"""
        CREATE TABLE IF NOT EXISTS cairn_memory (
            app_name TEXT NOT NULL,
            user_id TEXT NOT NULL,
            event_id TEXT NOT NULL,
            session_id TEXT,
            author TEXT NOT NULL,
            timestamp DOUBLE PRECISION NOT NULL,
            content JSONB NOT NULL,
            custom_metadata JSONB NOT NULL,
            text TEXT NOT NULL,
            search TSVECTOR GENERATED ALWAYS AS (to_tsvector('{config}', text)) STORED,
            PRIMARY KEY (app_name, user_id, event_id)
        )""",
        "CREATE INDEX IF NOT EXISTS cairn_memory_search ON cairn_memory USING GIN (search)",
    ]


_INSERT = """
INSERT INTO cairn_memory
    (app_name, user_id, event_id, session_id, author, timestamp, content, custom_metadata, text)
VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9)
ON CONFLICT (app_name, user_id, event_id) DO NOTHING
"""


def _search_sql(config: str) -> str:
    return f"""
    SELECT event_id, session_id, author, timestamp, text, content::text, custom_metadata::text
    FROM cairn_memory, websearch_to_tsquery('{config}', $3) AS query
    WHERE app_name = $1 AND user_id = $2 AND search @@ query
    ORDER BY ts_rank(search, query) DESC, timestamp DESC
    LIMIT $4
    """


class PostgresMemoryService(BaseMemoryService):
    """Memories in a PostgreSQL database, found by full-text search.

    The table ``cairn_memory`` (with a generated ``tsvector`` column and a GIN
    index) is created at first use, so the database may be the session
    store's own. Words are stemmed with the text search configuration
    ``text_search_config`` (default ``'english'``; ``'simple'`` does no
    stemming); results are ranked by ``ts_rank``, newer first among equals.
    Needs asyncpg (``pip install 'cairn[postgres]'``).
    """

    def __init__(
        self,
        url: str,
        *,
        max_results: int = DEFAULT_MAX_RESULTS,
        text_search_config: str = "english",
        pool_size: int = 4,
    ) -> None:
        super().__init__(max_results=max_results)
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", text_search_config):
            raise ValueError(
                f"text_search_config must name a text search configuration such as 'english' "
                f"or 'simple'; got {text_search_config!r}"
            )
        self.url = url
        self.text_search_config = text_search_config
        self.pool_size = pool_size
        self.database = EngineDatabase(
            async_url(url), None, session_schema=False, pool_size=pool_size
        )
        """Its connections, retries and error translation (the session stores' own kind)."""
        self._table_ready = False

    async def _ready(self) -> None:
        """Create the table and its index once (one process at a time, under a lock)."""
        if self._table_ready:
            return
        statements = _schema(self.text_search_config)

        async def create(connection: Any) -> None:
            async with connection.transaction():
                await connection.execute("SELECT pg_advisory_xact_lock($1)", _SETUP_LOCK)
                for statement in statements:
                    await connection.execute(statement)

        await self.database.direct(create, write=True)
        self._table_ready = True

    async def _add(self, app_name: str, user_id: str, rows: list[MemoryRow]) -> None:
        await self._ready()
        values = [
            (
                app_name,
                user_id,
                row.event_id,
                row.session_id,
                row.author,
                row.timestamp,
                row.content_json,
                row.metadata_json,
                row.text,
            )
            for row in rows
        ]

        async def insert(connection: Any) -> None:
            await connection.executemany(_INSERT, values)  # atomic: all rows or none

        await self.database.direct(insert, write=True)

    async def _search(self, app_name: str, user_id: str, query_words: list[str]) -> list[MemoryRow]:
        # Words only (no quotes, no '-'), joined by "or": any word matches.
        query = " or ".join(word for word in query_words if word != "or")
        await self._ready()
        found = await self.database.direct(
            _fetch,
            _search_sql(self.text_search_config),
            app_name,
            user_id,
            query,
            self.max_results,
            write=False,
        )
        return [
            MemoryRow(
                event_id=record[0],
                session_id=record[1],
                author=record[2],
                timestamp=record[3],
                text=record[4],
                content_json=record[5],
                metadata_json=record[6],
            )
            for record in found
        ]

    async def close(self) -> None:
        await self.database.close()


async def _fetch(connection: Any, statement: str, *args: Any) -> list[Any]:
    return list(await connection.fetch(statement, *args))
