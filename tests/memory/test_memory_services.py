"""The memory contract, run on every store: find, rank, isolate, stay idempotent, never raise."""

from __future__ import annotations

import datetime
import json

import pytest
from google.genai import types

from cairn.events import Event
from cairn.memory import BaseMemoryService, MemoryEntry, SearchMemoryResponse
from cairn.sessions import InMemorySessionService, Session


def said(author: str, text: str, timestamp: float | None = None) -> Event:
    role = "user" if author == "user" else "model"
    event = Event(author=author, content=types.Content(role=role, parts=[types.Part(text=text)]))
    if timestamp is not None:
        event.timestamp = timestamp
    return event


def texts(response: SearchMemoryResponse) -> list[str]:
    return [part.text or "" for m in response.memories for part in m.content.parts or []]


async def session_with(app: str, user: str, *events: Event) -> Session:
    service = InMemorySessionService()
    session = await service.create_session(app_name=app, user_id=user)
    for event in events:
        await service.append_event(session, event)
    return session


async def test_a_search_finds_the_events_that_say_it(memory: BaseMemoryService) -> None:
    cold = said("user", "I always feel cold in Beijing in winter.", 1_700_000_000.0)
    session = await session_with(
        "weather",
        "alice",
        said("user", "What's the weather in Hangzhou?"),
        cold,
        said("weather_agent", "It is 23 degrees in Hangzhou."),
    )
    await memory.add_session_to_memory(session)

    found = await memory.search_memory(app_name="weather", user_id="alice", query="cold")

    assert texts(found) == ["I always feel cold in Beijing in winter."]
    entry = found.memories[0]
    assert entry.id == cold.id
    assert entry.author == "user"
    assert (
        entry.timestamp == datetime.datetime.fromtimestamp(cold.timestamp, datetime.UTC).isoformat()
    )
    assert entry.content.role == "user"


async def test_any_word_matches_case_insensitively(memory: BaseMemoryService) -> None:
    session = await session_with(
        "weather", "alice", said("user", "Hangzhou is lovely"), said("user", "Beijing is dry")
    )
    await memory.add_session_to_memory(session)

    found = await memory.search_memory(
        app_name="weather", user_id="alice", query="HANGZHOU beijing"
    )

    assert sorted(texts(found)) == ["Beijing is dry", "Hangzhou is lovely"]


async def test_the_better_match_comes_first(keyword_memory: BaseMemoryService) -> None:
    memory = keyword_memory  # ranked by meaning instead: test_semantic_memory.py
    session = await session_with(
        "weather",
        "alice",
        said("user", "Winter trips are fun.", 1_700_000_100.0),
        said("user", "I feel cold in winter, so winter trips need a coat.", 1_700_000_000.0),
        said("user", "Summer is hot.", 1_700_000_200.0),
    )
    await memory.add_session_to_memory(session)

    found = await memory.search_memory(app_name="weather", user_id="alice", query="cold winter")

    assert texts(found) == [
        "I feel cold in winter, so winter trips need a coat.",
        "Winter trips are fun.",
    ]


async def test_users_and_apps_never_see_each_others_memories(memory: BaseMemoryService) -> None:
    for app, user in [("weather", "alice"), ("weather", "bob"), ("travel", "alice")]:
        session = await session_with(app, user, said("user", f"secret of {app} {user}"))
        await memory.add_session_to_memory(session)

    for app, user in [("weather", "alice"), ("weather", "bob"), ("travel", "alice")]:
        found = await memory.search_memory(app_name=app, user_id=user, query="secret")
        assert texts(found) == [f"secret of {app} {user}"]
    nobody = await memory.search_memory(app_name="weather", user_id="carol", query="secret")
    assert nobody.memories == []


async def test_the_same_event_id_for_another_user_is_another_memory(
    memory: BaseMemoryService,
) -> None:
    event = said("user", "shared words")
    await memory.add_events_to_memory(app_name="a", user_id="u1", events=[event])
    await memory.add_events_to_memory(app_name="a", user_id="u2", events=[event])

    for user in ["u1", "u2"]:
        found = await memory.search_memory(app_name="a", user_id=user, query="shared")
        assert texts(found) == ["shared words"]


async def test_adding_a_session_again_adds_only_its_new_events(memory: BaseMemoryService) -> None:
    service = InMemorySessionService()
    session = await service.create_session(app_name="weather", user_id="alice")
    await service.append_event(session, said("user", "I feel cold today"))
    await memory.add_session_to_memory(session)
    await memory.add_session_to_memory(session)
    await service.append_event(session, said("user", "still cold tomorrow"))
    await memory.add_session_to_memory(session)

    found = await memory.search_memory(app_name="weather", user_id="alice", query="cold")

    assert sorted(texts(found)) == ["I feel cold today", "still cold tomorrow"]


async def test_add_events_to_memory_keeps_custom_metadata(memory: BaseMemoryService) -> None:
    await memory.add_events_to_memory(
        app_name="weather",
        user_id="alice",
        events=[said("user", "umbrella needed"), said("user", "no text here")],
        session_id="s1",
        custom_metadata={"source": "import", "n": 1},
    )

    found = await memory.search_memory(app_name="weather", user_id="alice", query="umbrella")

    assert texts(found) == ["umbrella needed"]
    assert found.memories[0].custom_metadata == {"source": "import", "n": 1}


async def test_events_without_text_are_not_remembered(memory: BaseMemoryService) -> None:
    call = Event(
        author="agent",
        content=types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(name="cold", args={"x": "cold"}))],
        ),
    )
    await memory.add_events_to_memory(
        app_name="a", user_id="u", events=[call, Event(author="agent"), said("user", "   ")]
    )

    found = await memory.search_memory(app_name="a", user_id="u", query="cold")

    assert found.memories == []


@pytest.mark.parametrize(
    "query",
    [
        "",
        "   ",
        '"',
        "'",
        '"cold',
        "cold\"'",
        "(cold",
        "cold)",
        "cold*",
        "NEAR(cold winter)",
        "cold AND OR NOT",
        "-cold",
        "cold:winter",
        "^cold",
        "col*d +winter",
        "!!!???",
        "; DROP TABLE cairn_memory; --",
        "\x00cold",
        "冷",
        "c" * 5000,
    ],
)
async def test_odd_queries_never_raise(memory: BaseMemoryService, query: str) -> None:
    await memory.add_events_to_memory(
        app_name="a", user_id="u", events=[said("user", "I feel cold in winter")]
    )

    found = await memory.search_memory(app_name="a", user_id="u", query=query)

    assert isinstance(found, SearchMemoryResponse)
    if any(word in query.lower() for word in ["cold", "winter"]):
        assert texts(found) == ["I feel cold in winter"]
    again = await memory.search_memory(app_name="a", user_id="u", query="winter")
    assert texts(again) == ["I feel cold in winter"]


async def test_text_in_other_scripts_is_found(memory: BaseMemoryService) -> None:
    await memory.add_events_to_memory(
        app_name="a", user_id="u", events=[said("user", "Ich friere oft, café au lait")]
    )

    found = await memory.search_memory(app_name="a", user_id="u", query="friere")

    assert texts(found) == ["Ich friere oft, café au lait"]


async def test_app_and_user_are_required(memory: BaseMemoryService) -> None:
    with pytest.raises(ValueError, match="per app and user"):
        await memory.search_memory(app_name="a", user_id="", query="x")
    with pytest.raises(ValueError, match="per app and user"):
        await memory.add_events_to_memory(app_name="", user_id="u", events=[said("user", "x")])


def test_search_responses_are_camel_case_json() -> None:
    response = SearchMemoryResponse(
        memories=[
            MemoryEntry(
                content=types.Content(role="user", parts=[types.Part(text="hi")]),
                author="user",
                timestamp="2026-01-01T00:00:00+00:00",
                id="e1",
                custom_metadata={"k": 1},
            )
        ]
    )
    data = json.loads(response.model_dump_json())
    assert data["memories"][0]["customMetadata"] == {"k": 1}
    assert SearchMemoryResponse.model_validate_json(response.model_dump_json()) == response


async def test_turns_taken_back_by_a_rewind_are_not_remembered(
    memory: BaseMemoryService,
) -> None:
    from cairn.events import EventActions

    kept = said("user", "I live in Oslo and the winters are freezing.")
    dropped = said("user", "I moved to a sunny beach in Lisbon.")
    dropped.invocation_id = "second"
    rewind = Event(author="user", actions=EventActions(rewind_before_invocation_id="second"))
    session = await session_with("weather", "alice", kept, dropped, rewind)
    await memory.add_session_to_memory(session)
    found = await memory.search_memory(app_name="weather", user_id="alice", query="Lisbon beach")
    assert "I moved to a sunny beach in Lisbon." not in texts(found)
    found = await memory.search_memory(app_name="weather", user_id="alice", query="Oslo winters")
    assert texts(found) == ["I live in Oslo and the winters are freezing."]
