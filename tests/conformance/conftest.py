"""The store contract is written once and run against every session store.

Add a store by adding a factory to ``STORES``: every test in this folder then
runs against it. Server-backed stores get a fresh database per test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
from tests.support.databases import MARIADB_AIOMYSQL, mariadb_database, postgres_database

from cairn.sessions import (
    BaseSessionService,
    DatabaseSessionService,
    InMemorySessionService,
    SqliteSessionService,
)

StoreFactory = Callable[[Path], AbstractAsyncContextManager[BaseSessionService]]


@asynccontextmanager
async def in_memory(_: Path) -> AsyncIterator[BaseSessionService]:
    yield InMemorySessionService()


@asynccontextmanager
async def sqlite_file(tmp: Path) -> AsyncIterator[BaseSessionService]:
    yield SqliteSessionService(tmp / "sessions.db")


@asynccontextmanager
async def database_over_sqlite(tmp: Path) -> AsyncIterator[BaseSessionService]:
    yield DatabaseSessionService(f"sqlite+aiosqlite:///{tmp / 'sessions.db'}")


@asynccontextmanager
async def postgres(_: Path) -> AsyncIterator[BaseSessionService]:
    async with postgres_database() as url:  # type: ignore[attr-defined]
        yield DatabaseSessionService(url)


@asynccontextmanager
async def mariadb(_: Path) -> AsyncIterator[BaseSessionService]:
    async with mariadb_database() as url:  # type: ignore[attr-defined]
        yield DatabaseSessionService(url)


@asynccontextmanager
async def mariadb_aiomysql(_: Path) -> AsyncIterator[BaseSessionService]:
    async with mariadb_database(MARIADB_AIOMYSQL) as url:  # type: ignore[attr-defined]
        yield DatabaseSessionService(url)


STORES: dict[str, StoreFactory] = {
    "memory": in_memory,
    "sqlite": sqlite_file,
    "db-sqlite": database_over_sqlite,
    "postgres": postgres,
    "mariadb": mariadb,
    "mariadb-aiomysql": mariadb_aiomysql,
}


@pytest.fixture(params=list(STORES))
async def store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[BaseSessionService]:
    async with STORES[request.param](tmp_path) as service:
        try:
            yield service
        finally:
            await service.close()
