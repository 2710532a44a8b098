"""An in-memory SQLite store has one shared connection: concurrent calls take turns on it."""

from __future__ import annotations

import asyncio

from cairn.errors import StaleSessionError
from cairn.events import Event, EventActions
from cairn.sessions import DatabaseSessionService


async def test_concurrent_first_calls_and_appends_do_not_collide() -> None:
    async with DatabaseSessionService("sqlite+aiosqlite:///:memory:") as service:
        created = await asyncio.gather(
            *(service.create_session(app_name=f"app{i}", user_id="u") for i in range(5))
        )
        assert len({s.id for s in created}) == 5
        session = created[0]
        copies = [session.model_copy(deep=True) for _ in range(2)]
        events = [
            Event(author="user", actions=EventActions(state_delta={f"k{i}": i})) for i in range(2)
        ]
        results = await asyncio.gather(
            *(service.append_event(c, e) for c, e in zip(copies, events, strict=True)),
            return_exceptions=True,
        )
        errors = [r for r in results if isinstance(r, BaseException)]
        # One writer wins; the other is told its copy is stale (not a driver error).
        assert len(errors) == 1 and isinstance(errors[0], StaleSessionError)
        assert "modified in storage" in str(errors[0])
        stored = await service.get_session(app_name="app0", user_id="u", session_id=session.id)
        assert stored is not None and len(stored.events) == 1


async def test_prepare_tables_creates_the_schema_up_front() -> None:
    async with DatabaseSessionService("sqlite+aiosqlite:///:memory:") as service:
        await service.prepare_tables()
        await service.prepare_tables()  # a no-op once done
        made = await service.create_session(app_name="a", user_id="u", session_id="s")
        assert made.id == "s"
