"""A database at revision 0007 gains the run and schedule tables (0008) in place, keeping its
sessions and events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import Connection, insert
from sqlalchemy.ext.asyncio import create_async_engine
from tests.support.databases import mariadb_database, postgres_database

from cairn import Event
from cairn.sessions import DatabaseSessionService
from cairn.sessions.base_session_service import encode_event
from cairn.sessions.run_store import RunStatus, StoredRun, StoredSchedule, run_store_for
from cairn.sessions.sql.migrate import _alembic_config, head_revision
from cairn.sessions.sql.schema import SESSION_SCOPE, events, sessions, state

EVENT = Event(author="user", invocation_id="inv-1", state={"count": 1})


@asynccontextmanager
async def database_url(kind: str, tmp: Path) -> AsyncIterator[str]:
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp / 'store.db'}"
    elif kind == "postgres":
        async with postgres_database() as url:  # type: ignore[attr-defined]
            yield url
    else:
        async with mariadb_database() as url:  # type: ignore[attr-defined]
            yield url


def revision_0007_with_a_session(connection: Connection) -> None:
    command.upgrade(_alembic_config(connection), "0007")
    key = {"app_name": "app", "user_id": "u", "session_id": "s"}
    connection.execute(
        insert(sessions).values(
            **key, revision=1, create_time=1.0, update_time=2.0, initial_state={}
        )
    )
    connection.execute(
        insert(events).values(
            **key,
            seq=1,
            event_id=EVENT.id,
            invocation_id=EVENT.invocation_id,
            timestamp=EVENT.timestamp,
            event=encode_event(EVENT),
        )
    )
    connection.execute(insert(state).values(**key, scope=SESSION_SCOPE, key="count", value=1))


@pytest.mark.parametrize("kind", ["sqlite", "postgres", "mariadb"])
async def test_a_revision_0007_database_gains_runs_in_place(kind: str, tmp_path: Path) -> None:
    async with database_url(kind, tmp_path) as url:
        engine = create_async_engine(url)
        async with engine.begin() as connection:
            await connection.run_sync(revision_0007_with_a_session)
        await engine.dispose()

        async with DatabaseSessionService(url) as store:
            report = await store.migrate()
            assert (report.from_revision, report.applied[0]) == ("0007", "0008")
            assert report.to_revision == head_revision()
            session = await store.get_session(app_name="app", user_id="u", session_id="s")
            assert session is not None and session.events == [EVENT]
            assert session.state == {"count": 1}

            runs = run_store_for(store)
            run = await runs.create_run(
                StoredRun(
                    app_name="app",
                    user_id="u",
                    session_id="s",
                    run_id="inv-2",
                    seq=0,
                    status=RunStatus.PENDING,
                    strategy="enqueue",
                    request={"newMessage": None, "continuing": False},
                    created_at=3.0,
                )
            )
            assert await runs.list_runs("app", "u", "s") == [run]
            schedule = StoredSchedule(
                app_name="app",
                user_id="u",
                schedule_id="daily",
                cron="0 9 * * *",
                timezone="UTC",
                session_id="s",
                request={},
                next_run_at=10.0,
                created_at=3.0,
            )
            await runs.create_schedule(schedule)
            assert await runs.due_schedules(10.0) == [schedule]
