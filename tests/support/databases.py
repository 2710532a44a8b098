"""Throw-away databases on the local PostgreSQL and MariaDB servers, one per test.

A server that is not running skips the test on a laptop and fails it in CI
(``CAIRN_REQUIRE_SERVICES=1``), so CI always exercises the real databases.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

REQUIRE_SERVICES = os.environ.get("CAIRN_REQUIRE_SERVICES") == "1"

POSTGRES = os.environ.get("CAIRN_TEST_POSTGRES", "postgresql+asyncpg://postgres@127.0.0.1:5432")
MARIADB = os.environ.get("CAIRN_TEST_MARIADB", "mysql+asyncmy://root@127.0.0.1:3306")
MARIADB_AIOMYSQL = MARIADB.replace("mysql+asyncmy://", "mysql+aiomysql://")


def service_unavailable(reason: str) -> None:
    """Skip the test on a laptop without the server; fail it in CI."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{reason} (CAIRN_REQUIRE_SERVICES=1 requires it)")
    pytest.skip(reason)


@asynccontextmanager
async def fresh_database(server: str, admin_database: str) -> AsyncIterator[str]:
    """Create an empty database on ``server`` and yield its URL; drop it afterwards."""
    name = f"cairn_test_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(f"{server}/{admin_database}", isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as connection:
            await connection.execute(text(f"CREATE DATABASE {name}"))
    except Exception as exc:
        await admin.dispose()
        service_unavailable(f"no database server at {server}: {str(exc).splitlines()[0]}")
    try:
        yield f"{server}/{name}"
    finally:
        async with admin.connect() as connection:
            if server.startswith("postgresql"):
                await connection.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            else:
                await connection.execute(text(f"DROP DATABASE IF EXISTS {name}"))
        await admin.dispose()


def postgres_database() -> AsyncIterator[str]:
    return fresh_database(POSTGRES, "postgres")  # type: ignore[return-value]


def mariadb_database(driver_url: str = MARIADB) -> AsyncIterator[str]:
    return fresh_database(driver_url, "test")  # type: ignore[return-value]
