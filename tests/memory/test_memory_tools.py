"""Seed 1's weather scenario: s2 learns the unit from ``user:`` state and the cold from memory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from google.genai import types
from tests.support.databases import postgres_database

from cairn import Agent, Runner
from cairn.events import Event
from cairn.memory import (
    BaseMemoryService,
    InMemoryMemoryService,
    PostgresMemoryService,
    SqliteMemoryService,
)
from cairn.sessions import InMemorySessionService, SqliteSessionService
from cairn.testing import Call, ScriptedLlm
from cairn.tools.load_memory_tool import LoadMemoryTool, load_memory
from cairn.tools.preload_memory_tool import PreloadMemoryTool, preload_memory


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def set_temperature_unit(unit: str, tool_context: object) -> dict[str, str]:
    """Remember the user's temperature unit for all their sessions."""
    tool_context.state["user:temperature_unit"] = unit  # type: ignore[attr-defined]
    return {"unit": unit}


async def run(runner: Runner, session_id: str, text: str) -> list[Event]:
    return [
        event
        async for event in runner.run_async(
            user_id="alice", session_id=session_id, new_message=said(text)
        )
    ]


async def first_session(runner: Runner, memory: BaseMemoryService) -> None:
    """s1: the user sets Celsius and mentions being cold; the session goes to memory."""
    service = runner.session_service
    await service.create_session(app_name="weather", user_id="alice", session_id="s1")
    await run(runner, "s1", "Use Celsius please. I get cold easily, so warn me about chilly days.")
    s1 = await service.get_session(app_name="weather", user_id="alice", session_id="s1")
    assert s1 is not None
    await memory.add_session_to_memory(s1)
    await service.create_session(app_name="weather", user_id="alice", session_id="s2")


Stores = tuple[InMemorySessionService | SqliteSessionService, BaseMemoryService]


@pytest.fixture(params=["in_memory", "sqlite", "postgres"])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    if request.param == "in_memory":
        yield InMemorySessionService(), InMemoryMemoryService()
    elif request.param == "sqlite":
        # One file for both: memory's tables sit beside the session store's.
        path = tmp_path / "cairn.db"
        sessions = SqliteSessionService(path)
        yield sessions, SqliteMemoryService(path)
        await sessions.close()
    else:
        async with postgres_database() as url:
            yield InMemorySessionService(), PostgresMemoryService(url)


async def test_preload_memory_shows_the_cold_before_s2s_message(
    stores: Stores,
) -> None:
    sessions, memory = stores
    llm = ScriptedLlm(
        script=[
            Call("set_temperature_unit", unit="C"),
            "Celsius it is.",
            "12°C in Beijing; take a warm coat.",
        ]
    )
    agent = Agent(
        name="weather_agent",
        model=llm,
        instruction="Temperature unit: {user:temperature_unit?}",
        tools=[set_temperature_unit, preload_memory],
    )
    runner = Runner(
        app_name="weather", agent=agent, session_service=sessions, memory_service=memory
    )
    await first_session(runner, memory)
    before = len(llm.requests)

    await run(runner, "s2", "How cold is Beijing today?")

    s2_request = llm.requests[before]
    instructions = s2_request.system_instruction_text
    assert "Temperature unit: C" in instructions  # from user: state
    assert "PAST_CONVERSATIONS" not in instructions
    assert "preload_memory" not in [d.name for d in s2_request.function_declarations]
    # As ADK: the memories come as a user content right before the user's message (s2 did
    # not get s1's messages otherwise: only memory carried them over).
    recalled, message = s2_request.contents
    assert recalled.role == "user" and message.role == "user"
    assert "<PAST_CONVERSATIONS>" in (recalled.parts or [])[0].text  # type: ignore[operator]
    assert "I get cold easily" in (recalled.parts or [])[0].text  # type: ignore[operator]
    assert (message.parts or [])[0].text == "How cold is Beijing today?"
    # Only that model call gets them: the session stores no such event.
    stored = await sessions.get_session(app_name="weather", user_id="alice", session_id="s2")
    assert stored is not None
    assert not any("PAST_CONVERSATIONS" in str(e.content) for e in stored.events)
    await memory.close()


async def test_preloaded_memories_follow_a_function_response_in_a_tool_turn() -> None:
    memory = InMemoryMemoryService()
    await memory.add_events_to_memory(
        app_name="weather",
        user_id="alice",
        events=[Event(author="user", content=said("I get cold easily"))],
    )
    llm = ScriptedLlm(script=[Call("set_temperature_unit", unit="C"), "Wear a coat."])
    agent = Agent(name="weather_agent", model=llm, tools=[set_temperature_unit, preload_memory])
    runner = Runner(
        app_name="weather",
        agent=agent,
        session_service=InMemorySessionService(),
        memory_service=memory,
    )
    await runner.session_service.create_session(app_name="weather", user_id="alice", session_id="s")

    await run(runner, "s", "I get cold: what to wear?")

    first, second = llm.requests
    assert ["PAST_CONVERSATIONS" in str(c) for c in first.contents] == [True, False]
    # Going on with its tool calls, the model gets them after the results, not before the
    # message (the turn's history stays as it was).
    assert ["PAST_CONVERSATIONS" in str(c) for c in second.contents] == [
        False,
        False,
        False,
        True,
    ]
    assert second.contents[2].parts[0].function_response is not None  # type: ignore[index]


async def test_load_memory_returns_the_cold_to_the_model(
    stores: Stores,
) -> None:
    sessions, memory = stores
    llm = ScriptedLlm(
        script=[
            Call("set_temperature_unit", unit="C"),
            "Celsius it is.",
            Call("load_memory", query="cold"),
            "You told me you get cold easily: take a warm coat.",
        ]
    )
    agent = Agent(
        name="weather_agent",
        model=llm,
        instruction="Temperature unit: {user:temperature_unit?}",
        tools=[set_temperature_unit, load_memory],
    )
    runner = Runner(
        app_name="weather", agent=agent, session_service=sessions, memory_service=memory
    )
    await first_session(runner, memory)
    before = len(llm.requests)

    events = await run(runner, "s2", "What should I wear in Beijing?")

    assert "load_memory" in [d.name for d in llm.requests[before].function_declarations]
    assert "call load_memory" in llm.requests[before].system_instruction_text
    responses = [r for e in events for r in e.get_function_responses()]
    assert [r.name for r in responses] == ["load_memory"]
    memories = (responses[0].response or {})["result"]["memories"]  # ADK's shape
    assert [m["content"]["parts"][0]["text"] for m in memories] == [
        "Use Celsius please. I get cold easily, so warn me about chilly days."
    ]
    assert memories[0]["author"] == "user"
    assert set(memories[0]) == {"content", "custom_metadata", "id", "author", "timestamp"}
    assert events[-1].content is not None
    assert "warm coat" in (events[-1].content.parts or [])[0].text  # type: ignore[operator]
    await memory.close()


async def test_memories_of_other_users_are_not_preloaded() -> None:
    memory = InMemoryMemoryService()
    await memory.add_events_to_memory(
        app_name="weather",
        user_id="bob",
        events=[Event(author="user", content=said("I hate the cold"))],
    )
    llm = ScriptedLlm(script=["Sunny."])
    agent = Agent(name="weather_agent", model=llm, tools=[preload_memory])
    runner = Runner(
        app_name="weather",
        agent=agent,
        session_service=InMemorySessionService(),
        memory_service=memory,
    )
    await runner.session_service.create_session(app_name="weather", user_id="alice", session_id="s")

    await run(runner, "s", "Is it cold?")

    assert "PAST_CONVERSATIONS" not in str(llm.requests[0])


async def test_without_a_memory_service_the_error_says_how_to_add_one() -> None:
    llm = ScriptedLlm(script=["unused"])
    agent = Agent(name="weather_agent", model=llm, tools=[PreloadMemoryTool()])
    runner = Runner(app_name="weather", agent=agent, session_service=InMemorySessionService())
    await runner.session_service.create_session(app_name="weather", user_id="alice", session_id="s")

    with pytest.raises(ValueError, match="memory_service=InMemoryMemoryService"):
        await run(runner, "s", "Is it cold?")


def test_the_tools_have_adks_names() -> None:
    assert isinstance(load_memory, LoadMemoryTool) and load_memory.name == "load_memory"
    assert isinstance(preload_memory, PreloadMemoryTool) and preload_memory.name == "preload_memory"
    declaration = load_memory.declaration()
    assert isinstance(declaration.parameters_json_schema, dict)
    assert declaration.parameters_json_schema["required"] == ["query"]
    assert preload_memory.declaration() is None
