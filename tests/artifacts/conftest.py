"""Every artifact service under test, each on a fresh place, and a way to open it again."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from tests.support.databases import MARIADB, MARIADB_AIOMYSQL, mariadb_database, postgres_database

from cairn.artifacts import (
    BaseArtifactService,
    FileArtifactService,
    InMemoryArtifactService,
    SessionStoreArtifactService,
)
from cairn.sessions import BaseSessionService, DatabaseSessionService, SqliteSessionService

STORES = ["memory", "file", "sqlite", "db-sqlite", "postgres", "mariadb", "mariadb-aiomysql"]

OpenService = Callable[[], BaseArtifactService]
"""A new service on the same place, as another process would open it (memory: the same one)."""


@pytest.fixture(params=STORES)
async def open_service(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[OpenService]:
    kind: str = request.param
    opened: list[BaseSessionService] = []
    if kind == "memory":
        memory = InMemoryArtifactService()
        yield lambda: memory
        return
    if kind == "file":
        yield lambda: FileArtifactService(tmp_path / "artifacts")
        return

    def sql(url: str) -> OpenService:
        def open_one() -> BaseArtifactService:
            store: BaseSessionService
            if kind == "sqlite":
                store = SqliteSessionService(tmp_path / "store.db")
            else:
                store = DatabaseSessionService(url)
            opened.append(store)
            return SessionStoreArtifactService(store)

        return open_one

    try:
        if kind in ("sqlite", "db-sqlite"):
            yield sql(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
        elif kind == "postgres":
            async with postgres_database() as url:  # type: ignore[attr-defined]
                yield sql(url)
                for store in opened:
                    await store.close()
                opened.clear()
        else:
            driver = MARIADB_AIOMYSQL if kind == "mariadb-aiomysql" else MARIADB
            async with mariadb_database(driver) as url:  # type: ignore[attr-defined]
                yield sql(url)
                for store in opened:
                    await store.close()
                opened.clear()
    finally:
        for store in opened:
            await store.close()


@pytest.fixture
def service(open_service: OpenService) -> BaseArtifactService:
    return open_service()
