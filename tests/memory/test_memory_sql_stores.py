"""The SQL memory stores: memories outlive the service, setup is idempotent, writers race safely."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from google.genai import types
from tests.support.databases import postgres_database

from cairn.events import Event
from cairn.memory import (
    BaseMemoryService,
    PostgresMemoryService,
    SemanticSqliteMemoryService,
    SqliteMemoryService,
)
from cairn.memory.sqlite_memory_service import fts5_query
from cairn.sessions import SqliteSessionService

Opener = Callable[[], BaseMemoryService]


def said(text: str) -> Event:
    return Event(author="user", content=types.Content(role="user", parts=[types.Part(text=text)]))


@pytest.fixture(params=["sqlite", "semantic_sqlite", "postgres"])
async def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opener]:
    if request.param == "sqlite":
        yield lambda: SqliteMemoryService(tmp_path / "memory.db")
    elif request.param == "semantic_sqlite":
        embedder = request.getfixturevalue("embedder")
        yield lambda: SemanticSqliteMemoryService(tmp_path / "memory.db", embedder=embedder)
    else:
        async with postgres_database() as url:
            yield lambda: PostgresMemoryService(url)


async def test_memories_outlive_the_service(open_store: Opener) -> None:
    first = open_store()
    await first.add_events_to_memory(app_name="a", user_id="u", events=[said("I feel cold")])
    await first.close()

    second = open_store()
    found = await second.search_memory(app_name="a", user_id="u", query="cold")
    await second.close()

    assert [m.content.parts[0].text for m in found.memories] == ["I feel cold"]  # type: ignore[index]


async def test_services_racing_on_a_new_store_each_remember_once(open_store: Opener) -> None:
    events = [said(f"cold day number {n}") for n in range(20)]
    services = [open_store() for _ in range(4)]

    await asyncio.gather(
        *(s.add_events_to_memory(app_name="a", user_id="u", events=events) for s in services)
    )

    found = await services[0].search_memory(app_name="a", user_id="u", query="cold")
    assert sorted(m.id or "" for m in found.memories) == sorted(e.id for e in events)
    for service in services:
        await service.close()


async def test_a_session_store_may_share_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cairn.db"
    memory = SqliteMemoryService(path)
    await memory.add_events_to_memory(app_name="a", user_id="u", events=[said("cold")])
    sessions = SqliteSessionService(path)  # its migrations run beside memory's tables

    session = await sessions.create_session(app_name="a", user_id="u")
    await sessions.append_event(session, said("still cold"))
    stored = await sessions.get_session(app_name="a", user_id="u", session_id=session.id)
    assert stored is not None
    await memory.add_session_to_memory(stored)

    found = await memory.search_memory(app_name="a", user_id="u", query="cold")
    assert len(found.memories) == 2
    await sessions.close()
    await memory.close()


def test_fts5_queries_quote_every_word() -> None:
    assert fts5_query(["cold", "near"]) == '"cold" OR "near"'


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="InMemoryMemoryService"):
        SqliteMemoryService(":memory:")
    with pytest.raises(ValueError, match="text_search_config"):
        PostgresMemoryService("postgresql://h/db", text_search_config="english'; drop")
    with pytest.raises(ValueError, match="max_results"):
        SqliteMemoryService("x.db", max_results=0)
