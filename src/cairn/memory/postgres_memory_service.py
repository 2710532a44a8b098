"""Memory in PostgreSQL, searched with full-text search (tsvector, GIN index, ts_rank)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from cairn.memory._text import MemoryRow
from cairn.memory.base_memory_service import DEFAULT_MAX_RESULTS, BaseMemoryService

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


def asyncpg_dsn(url: str) -> str:
    """An asyncpg DSN from a ``postgresql://`` or SQLAlchemy ``postgresql+asyncpg://`` URL."""
    return re.sub(r"^postgres(ql)?\+\w+://", "postgresql://", url)


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
        self._pool: Any = None
        self._opening = asyncio.Lock()

    async def _connections(self) -> Any:
        if self._pool is not None:
            return self._pool
        async with self._opening:
            if self._pool is None:
                import asyncpg

                pool = await asyncpg.create_pool(
                    asyncpg_dsn(self.url), min_size=1, max_size=self.pool_size
                )
                try:
                    async with pool.acquire() as connection, connection.transaction():
                        await connection.execute("SELECT pg_advisory_xact_lock($1)", _SETUP_LOCK)
                        for statement in _schema(self.text_search_config):
                            await connection.execute(statement)
                except BaseException:
                    await pool.close()
                    raise
                self._pool = pool
        return self._pool

    async def _add(self, app_name: str, user_id: str, rows: list[MemoryRow]) -> None:
        pool = await self._connections()
        async with pool.acquire() as connection:
            await connection.executemany(
                _INSERT,
                [
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
                ],
            )

    async def _search(self, app_name: str, user_id: str, query_words: list[str]) -> list[MemoryRow]:
        # Words only (no quotes, no '-'), joined by "or": any word matches.
        query = " or ".join(word for word in query_words if word != "or")
        pool = await self._connections()
        async with pool.acquire() as connection:
            found = await connection.fetch(
                _search_sql(self.text_search_config), app_name, user_id, query, self.max_results
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
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()
