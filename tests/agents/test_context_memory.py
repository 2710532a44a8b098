"""Memory from a callback or tool, through the context, with ADK's method names."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from cairn import Agent, Event, InMemoryRunner
from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.apps import ResumabilityConfig
from cairn.memory import InMemoryMemoryService, MemoryEntry
from cairn.memory.errors import MemoryServiceMissingError
from cairn.sessions import InMemorySessionService
from cairn.testing import ScriptedLlm


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def test_callbacks_add_and_search_memory_through_the_context() -> None:
    found: list[list[str]] = []

    async def remember(callback_context: Any) -> None:
        await callback_context.add_session_to_memory()
        await callback_context.add_memory(
            memories=[
                MemoryEntry(
                    content=types.Content(role="user", parts=[types.Part(text="Likes tea")])
                )
            ],
            custom_metadata={"source": "profile"},
        )
        await callback_context.add_events_to_memory(
            events=[Event(author="note", content=said("Allergic to peanuts"))]
        )
        result = await callback_context.search_memory("tea peanuts paris")
        found.append(sorted(m.content.parts[0].text for m in result.memories))

    memory = InMemoryMemoryService()
    agent = Agent(name="a", model=ScriptedLlm(script=["Noted."]), after_agent_callback=remember)
    runner = InMemoryRunner(agent=agent, app_name="app")
    runner.memory_service = memory
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    async for _ in runner.run_async(
        user_id="u", session_id=session.id, new_message=said("I moved to Paris")
    ):
        pass
    assert found == [["Allergic to peanuts", "I moved to Paris", "Likes tea"]]
    tea = await memory.search_memory(app_name="app", user_id="u", query="tea")
    assert [m.custom_metadata for m in tea.memories] == [{"source": "profile"}]
    other = await memory.search_memory(app_name="app", user_id="someone_else", query="tea")
    assert other.memories == []


async def test_memory_without_a_memory_service_is_a_value_error_naming_the_fix() -> None:
    from cairn.agents.context import Context

    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name="app", user_id="u")
    ctx = InvocationContext(
        session_service=sessions, invocation_id="e-1", agent=Agent(name="a"), session=session
    )
    with pytest.raises(MemoryServiceMissingError, match="memory_service=InMemoryMemoryService"):
        await Context(ctx).search_memory("x")
    assert isinstance(MemoryServiceMissingError("search_memory", "a"), ValueError)


async def test_invocation_context_takes_adks_resumability_config() -> None:
    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name="app", user_id="u")
    ctx = InvocationContext(
        session_service=sessions,
        invocation_id="e-1",
        agent=Agent(name="a"),
        session=session,
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    assert ctx.is_resumable
    assert ctx.for_agent(Agent(name="b")).is_resumable
    plain = InvocationContext(
        session_service=sessions, invocation_id="e-2", agent=Agent(name="a"), session=session
    )
    assert not plain.is_resumable


async def test_a_missing_service_is_named_in_adks_words_first() -> None:
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="ann")
    ctx = InvocationContext(
        session_service=service, invocation_id="inv", agent=Agent(name="a"), session=session
    )
    context = Context(ctx)
    with pytest.raises(ValueError, match=r"^Cannot add memory: memory service is not available\."):
        await context.add_memory(memories=[])
    with pytest.raises(ValueError, match=r"^Cannot add session to memory: memory service"):
        await context.add_session_to_memory()
    with pytest.raises(ValueError, match=r"^Artifact service is not initialized\. list_artifacts"):
        await context.list_artifacts()
