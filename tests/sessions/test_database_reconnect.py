"""A pooled connection cut while idle (server restart, firewall) is replaced before use."""

from __future__ import annotations

import asyncio

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine
from tests.support.databases import POSTGRES, postgres_database

from cairn import DatabaseSessionService, Event
from cairn.sessions.sql.engines import IDLE_PING_AFTER


async def test_idle_connection_killed_by_the_server_is_replaced_transparently() -> None:
    async with postgres_database() as url:  # type: ignore[attr-defined]
        store = DatabaseSessionService(url)
        session = await store.create_session(app_name="a", user_id="u", session_id="s")
        await store.append_event(session, Event(author="bot", state={"n": 1}))

        admin = create_async_engine(f"{POSTGRES}/postgres", isolation_level="AUTOCOMMIT")
        async with admin.connect() as connection:
            killed = await connection.execute(
                text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = :name AND pid <> pg_backend_pid()"
                ),
                {"name": make_url(url).database},
            )
            assert killed.scalar_one() >= 1
        await admin.dispose()

        await asyncio.sleep(IDLE_PING_AFTER + 0.3)
        # Both a write and a read go through: the dead connection is replaced before use.
        await store.append_event(session, Event(author="bot", state={"n": 2}))
        loaded = await store.get_session(app_name="a", user_id="u", session_id="s")
        assert loaded is not None and loaded.state == {"n": 2} and loaded.revision == 2
        await store.close()
