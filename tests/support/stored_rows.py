"""Every row a SQL store holds, as text: for tests that search a database for what must not
be in it (a secret), whatever table a bug would put it in."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, MetaData, select
from sqlalchemy.ext.asyncio import create_async_engine


def _text(value: Any) -> str:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, dict | list):
        return json.dumps(value, default=str)
    return str(value)


async def stored_rows(store: str) -> dict[str, list[str]]:
    """Each table's rows (reflected from the database, so a new table is searched too), as
    text, by table name; ``store`` is a database URL or a SQLite file's path."""
    url = store if "://" in store else f"sqlite+aiosqlite:///{store}"
    engine = create_async_engine(url)

    def read(connection: Connection) -> dict[str, list[str]]:
        tables = MetaData()
        tables.reflect(connection)
        return {
            name: [" | ".join(_text(v) for v in row) for row in connection.execute(select(table))]
            for name, table in tables.tables.items()
        }

    try:
        async with engine.connect() as connection:
            return await connection.run_sync(read)
    finally:
        await engine.dispose()
