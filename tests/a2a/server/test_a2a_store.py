"""The A2A rows beside the runs, on every store: a message id is claimed once (of two claims,
one wins and the other learns the task), tasks are found by id, push configs are kept, the
tasks with push configs are listed, a stop's notification is claimed once (and taken over
only from a holder that has not done it); a database at revision 0008 gains the tables in
place."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import create_async_engine
from tests.support.databases import mariadb_database, postgres_database

from cairn.errors import AlreadyExistsError
from cairn.sessions import DatabaseSessionService, InMemorySessionService
from cairn.sessions.a2a_store import A2aPushConfig, A2aTask, a2a_store_for
from cairn.sessions.sql.migrate import _alembic_config


@asynccontextmanager
async def session_store(kind: str, tmp: Path) -> AsyncIterator[Any]:
    if kind == "memory":
        yield InMemorySessionService()
        return
    if kind == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp / 'store.db'}"
        async with DatabaseSessionService(url) as store:
            yield store
        return
    factory = postgres_database if kind == "postgres" else mariadb_database
    async with factory() as url, DatabaseSessionService(url) as store:  # type: ignore[attr-defined]
        yield store


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres", "mariadb"])
async def test_messages_tasks_and_push_configs(kind: str, tmp_path: Path) -> None:
    async with session_store(kind, tmp_path) as sessions:
        store = a2a_store_for(sessions)
        claims = await asyncio.gather(
            *(store.claim_message("app", "u", "s", "m-1", f"task-{i}") for i in range(5))
        )
        [winner] = [f"task-{i}" for i, earlier in enumerate(claims) if earlier is None]
        assert {c for c in claims if c is not None} == {winner}
        assert await store.message_task("app", "u", "s", "m-1") == winner
        assert await store.message_task("app", "u", "other", "m-1") is None

        task = A2aTask("app", winner, "u", "s", 1.0)
        await store.record_task(task)
        with pytest.raises(AlreadyExistsError):
            await store.record_task(task)
        assert await store.get_task("app", winner) == task
        assert await store.get_task("other-app", winner) is None

        config = {"url": "https://hooks.example.com/a", "token": "t"}
        await store.set_push_config(A2aPushConfig("app", winner, "a", config, 2.0))
        await store.set_push_config(A2aPushConfig("app", winner, "b", {"url": "x"}, 3.0))
        await store.set_push_config(A2aPushConfig("app", winner, "a", {"url": "y"}, 4.0))
        listed = await store.list_push_configs("app", winner)
        assert [(c.config_id, c.config) for c in listed] == [
            ("b", {"url": "x"}),
            ("a", {"url": "y"}),
        ]
        assert await store.delete_push_config("app", winner, "b") is True
        assert await store.delete_push_config("app", winner, "b") is False
        assert [c.config_id for c in await store.list_push_configs("app", winner)] == ["a"]


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres", "mariadb"])
async def test_tasks_with_push_configs_and_one_claim_per_stop(kind: str, tmp_path: Path) -> None:
    async with session_store(kind, tmp_path) as sessions:
        store = a2a_store_for(sessions)
        for app, task, at in (("app", "t-1", 1.0), ("app", "t-2", 2.0), ("other", "t-3", 3.0)):
            await store.record_task(A2aTask(app, task, "u", "s", at))
        await store.record_task(A2aTask("app", "quiet", "u", "s", 0.5))  # no config
        for app, task in (("app", "t-2"), ("app", "t-1"), ("other", "t-3"), ("app", "t-1")):
            config_id = f"c-{len(await store.list_push_configs(app, task))}"
            await store.set_push_config(A2aPushConfig(app, task, config_id, {"url": "x"}, 1.0))
        assert [t.task_id for t in await store.list_push_tasks("app")] == ["t-1", "t-2"]
        assert [t.task_id for t in await store.list_push_tasks()] == ["t-1", "t-2", "t-3"]
        await store.delete_push_config("app", "t-2", "c-0")
        assert [t.task_id for t in await store.list_push_tasks("app")] == ["t-1"]

        # Of five servers claiming one stop at once, one notifies it.
        stop = "done:event-9"
        claims = await asyncio.gather(
            *(store.claim_push("app", "t-1", stop, f"server-{i}") for i in range(5))
        )
        assert claims.count(True) == 1
        winner = f"server-{claims.index(True)}"
        held = await store.push_claim("app", "t-1", stop)
        assert held is not None and (held.holder, held.done) == (winner, False)
        assert await store.push_claim("app", "t-1", "paused:event-4") is None
        # Taken over only from the holder named, and only while not done.
        assert not await store.claim_push("app", "t-1", stop, "late", replacing="someone-else")
        assert await store.claim_push("app", "t-1", stop, "heir", replacing=winner)
        await store.finish_push("app", "t-1", stop)
        held = await store.push_claim("app", "t-1", stop)
        assert held is not None and (held.holder, held.done) == ("heir", True)
        assert not await store.claim_push("app", "t-1", stop, "late", replacing="heir")
        assert not await store.claim_push("app", "t-1", stop, "late")
        # Another stop of the task is claimed on its own.
        assert await store.claim_push("app", "t-1", "paused:event-4", "late")


def revision_0008(connection: Connection) -> None:
    command.upgrade(_alembic_config(connection), "0008")


async def test_a_revision_0008_database_gains_the_a2a_tables(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    engine = create_async_engine(url)
    async with engine.begin() as connection:
        await connection.run_sync(revision_0008)
    await engine.dispose()
    async with DatabaseSessionService(url) as store:
        report = await store.migrate()
        assert (report.from_revision, report.applied) == ("0008", ["0009", "0010"])
        await a2a_store_for(store).record_task(A2aTask("app", "t", "u", "s", 1.0))
