"""RemoteA2aAgent against a real A2A server on loopback: one turn, turns in one remote context,
streaming, bare messages, the card as a URL, an object or a file, the transport the card
offers."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from a2a.client.card_resolver import parse_agent_card
from tests.a2a.client.steps import (
    SESSION,
    USER,
    record_calls,
    records,
    sent_message_ids,
    texts,
    turn,
)
from tests.support.a2a_scripted_server import ScriptedA2aServer, a2a_scripted_server
from tests.support.waiting import BOUND_SECONDS

from cairn import InMemoryRunner, Runner
from cairn.agents.remote_a2a_agent import RemoteA2aAgent
from cairn.agents.run_config import RunConfig, StreamingMode
from cairn.sessions import SqliteSessionService


async def runner_for(agent: RemoteA2aAgent) -> Runner:
    runner = InMemoryRunner(agent=agent, app_name="app")
    await runner.session_service.create_session(app_name="app", user_id=USER, session_id=SESSION)
    return runner


async def test_one_turn_is_recorded_like_a_tool_call_in_the_log_and_not_given_to_the_caller(
    server: ScriptedA2aServer, tmp_path: Path
) -> None:
    server.script({"answer": "echo: {input}"})
    store = tmp_path / "sessions.db"
    runner = Runner(
        app_name="app",
        agent=RemoteA2aAgent(name="helper", agent_card=server.card_url),
        session_service=SqliteSessionService(store),
    )
    await runner.session_service.create_session(app_name="app", user_id=USER, session_id=SESSION)
    events = await turn(runner, "hello")
    await runner.close()
    await runner.session_service.close()
    assert texts(events) == ["echo: hello"]
    assert record_calls(events) == []  # the caller sees what google-adk's client yields

    reader = SqliteSessionService(store)  # the log, as any process reads it
    try:
        stored = await reader.get_session(app_name="app", user_id=USER, session_id=SESSION)
    finally:
        await reader.close()
    assert stored is not None
    logged = stored.events[1:]
    [call] = records(logged, "call")
    assert logged.index(call) == 0  # committed before anything came back
    [sent] = server.received()
    assert sent["text"] == "hello" and sent_message_ids(logged) == [sent["messageId"]]
    [reply] = records(logged, "reply")
    assert [e.id for e in events] == [reply.id]  # of the log, the caller got the reply only
    assert reply.author == "helper" and reply.error_code is None
    assert reply.custom_metadata is not None
    assert reply.custom_metadata["a2a:task_state"] == "TASK_STATE_COMPLETED"
    assert reply.custom_metadata["a2a:message_id"] == sent["messageId"]
    closed = [r for e in records(logged, "close") for r in e.get_function_responses()]
    assert closed and closed[-1].response == {
        "taskId": reply.custom_metadata["a2a:task_id"],
        "contextId": reply.custom_metadata["a2a:context_id"],
        "state": "TASK_STATE_COMPLETED",
    }
    assert set(record_calls(logged)) == {"cairn_a2a_send_message"} | (
        {"cairn_a2a_await_task"} if sent["method"] == "stream" else set()
    )


async def test_the_next_turn_sends_only_what_is_new_in_the_same_context(
    server: ScriptedA2aServer,
) -> None:
    server.script({"answer": "first"}, {"answer": "second"})
    runner = await runner_for(RemoteA2aAgent(name="helper", agent_card=server.card_url))
    first = await turn(runner, "hello")
    second = await turn(runner, "and then?")
    assert texts(first) == ["first"] and texts(second) == ["second"]
    one, two = server.received()
    assert two["text"] == "and then?"  # not the first turn again: the remote has it
    [reply] = records(first, "reply")
    assert reply.custom_metadata is not None
    assert two["contextId"] == reply.custom_metadata["a2a:context_id"] != ""
    assert one["contextId"] == "" and two["taskId"] == ""  # a new task in the same context


async def test_a_streamed_answer_reaches_an_sse_caller_in_chunks_and_is_stored_whole(
    streaming_server: ScriptedA2aServer,
) -> None:
    streaming_server.reset()
    streaming_server.script({"stream": ["Hel", "lo ", "world"]})
    runner = await runner_for(RemoteA2aAgent(name="helper", agent_card=streaming_server.card_url))
    events = await turn(runner, "hi", run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    partial = [p for e in events if e.partial and e.content for p in e.content.parts or []]
    assert [p.text for p in partial if not p.thought] == ["Hel", "lo ", "world"]
    assert [p.text for p in partial if p.thought] == ["working on it"]
    assert texts(events) == ["Hel", "lo ", "world"]  # the artifact, in one stored reply
    [sent] = streaming_server.received()
    assert sent["method"] == "stream"
    stored = await runner.session_service.get_session(
        app_name="app", user_id=USER, session_id=SESSION
    )
    assert stored is not None and not any(e.partial for e in stored.events)
    assert len(records(stored.events, "reply")) == 1


async def test_a_remote_without_streaming_gets_one_blocking_call(
    plain_server: ScriptedA2aServer,
) -> None:
    plain_server.reset()
    plain_server.script({"stream": ["a", "b"]})
    runner = await runner_for(RemoteA2aAgent(name="helper", agent_card=plain_server.card_url))
    events = await turn(runner, "hi", run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    assert not any(e.partial for e in events)
    assert texts(events) == ["a", "b"]
    assert [r["method"] for r in plain_server.received()] == ["send"]
    assert records(events, "accepted") == []  # its answer came whole: no wait recorded


async def test_a_bare_message_answers_and_its_context_carries_on(server: ScriptedA2aServer) -> None:
    server.script({"message": "just a note"}, {"answer": "ok"})
    runner = await runner_for(RemoteA2aAgent(name="helper", agent_card=server.card_url))
    assert texts(await turn(runner, "note this")) == ["just a note"]
    await turn(runner, "thanks")
    _, two = server.received()
    assert two["text"] == "thanks" and two["contextId"] != ""


async def test_the_card_as_an_object_or_a_file(server: ScriptedA2aServer, tmp_path: Path) -> None:
    data = httpx.get(server.card_url, timeout=BOUND_SECONDS).json()
    (tmp_path / "card.json").write_text(json.dumps(data))
    for card in (parse_agent_card(dict(data)), str(tmp_path / "card.json")):
        server.reset()
        server.script({"answer": "hi"})
        agent = RemoteA2aAgent(name="helper", agent_card=card)
        assert texts(await turn(await runner_for(agent), "hello")) == ["hi"]
        assert agent.description == "A scripted remote agent for cairn's tests."


async def test_a_url_card_gives_its_description_once_resolved(server: ScriptedA2aServer) -> None:
    agent = RemoteA2aAgent(name="helper", agent_card=server.url)  # the host: the well-known path
    assert agent.description == ""
    server.script({"answer": "hi"})
    await turn(await runner_for(agent), "hello")
    assert agent.description == "A scripted remote agent for cairn's tests."
    mine = RemoteA2aAgent(name="helper", agent_card=server.card_url, description="Books trips.")
    assert mine.description == "Books trips."


async def test_the_transport_is_the_one_the_card_offers_first() -> None:
    with a2a_scripted_server("--rest-first") as server:
        server.script({"answer": "over rest"})
        runner = await runner_for(RemoteA2aAgent(name="helper", agent_card=server.card_url))
        assert texts(await turn(runner, "hello")) == ["over rest"]
        posts = [r["path"] for r in server.requests() if r["method"] == "POST"]
        assert posts and all(path.startswith("/rest/") for path in posts)
