"""The memory stores under test: in memory, SQLite FTS5 and PostgreSQL full-text search."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.databases import postgres_database

from cairn.memory import (
    BaseMemoryService,
    InMemoryMemoryService,
    PostgresMemoryService,
    SqliteMemoryService,
)

STORES = ["in_memory", "sqlite", "postgres"]


@pytest.fixture(params=STORES)
async def memory(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[BaseMemoryService]:
    service: BaseMemoryService
    if request.param == "in_memory":
        yield InMemoryMemoryService()
    elif request.param == "sqlite":
        service = SqliteMemoryService(tmp_path / "memory.db")
        yield service
        await service.close()
    else:
        async with postgres_database() as url:
            service = PostgresMemoryService(url)
            yield service
            await service.close()
