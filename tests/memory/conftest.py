"""The memory stores under test: in memory, SQLite FTS5, SQLite semantic (embeddings with
sqlite-vec) and PostgreSQL full-text search."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.databases import postgres_database

from cairn.memory import (
    BaseMemoryService,
    InMemoryMemoryService,
    MiniLmEmbedder,
    PostgresMemoryService,
    SemanticSqliteMemoryService,
    SqliteMemoryService,
)

KEYWORD_STORES = ["in_memory", "sqlite", "postgres"]
STORES = [*KEYWORD_STORES, "semantic_sqlite"]


@pytest.fixture(scope="session")
def embedder() -> MiniLmEmbedder:
    """The real default model, loaded once for the whole test session."""
    model = MiniLmEmbedder(device="cpu")
    model.embed(["load the weights now"])
    return model


async def _memory(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[BaseMemoryService]:
    service: BaseMemoryService
    if kind == "in_memory":
        yield InMemoryMemoryService()
    elif kind in ("sqlite", "semantic_sqlite"):
        if kind == "sqlite":
            service = SqliteMemoryService(tmp_path / "memory.db")
        else:
            embedder = request.getfixturevalue("embedder")
            service = SemanticSqliteMemoryService(tmp_path / "memory.db", embedder=embedder)
        yield service
        await service.close()
    else:
        async with postgres_database() as url:
            service = PostgresMemoryService(url)
            yield service
            await service.close()


@pytest.fixture(params=STORES)
async def memory(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[BaseMemoryService]:
    """Every store: the contract they all keep."""
    async for service in _memory(request.param, tmp_path, request):
        yield service


@pytest.fixture(params=KEYWORD_STORES)
async def keyword_memory(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[BaseMemoryService]:
    """The stores that match words (the semantic store matches meanings instead)."""
    async for service in _memory(request.param, tmp_path, request):
        yield service
