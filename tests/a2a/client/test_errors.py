"""A remote that fails, answers with an error, or cannot be reached gives a typed error in an
error event (the runner goes on); a card that cannot be had or used says why."""

from __future__ import annotations

from pathlib import Path

import pytest
from a2a.types import AgentCapabilities, AgentCard, AgentInterface
from tests.a2a.client.steps import (
    SESSION,
    USER,
    answer,
    logged_events,
    records,
    texts,
    turn,
)
from tests.support.a2a_scripted_server import ScriptedA2aServer, a2a_scripted_server
from tests.support.model_server import free_port

from cairn import Agent, AgentTool, BaseAgent, Event, InMemoryRunner, Runner
from cairn.agents.remote_a2a_agent import RemoteA2aAgent
from cairn.errors import InputValidationError
from cairn.testing import Call, ScriptedLlm


async def runner_for(agent: BaseAgent) -> Runner:
    runner = InMemoryRunner(agent=agent, app_name="app")
    await runner.session_service.create_session(app_name="app", user_id=USER, session_id=SESSION)
    return runner


def only_error(events: list[Event]) -> Event:
    [failed] = [e for e in events if e.error_code]
    return failed


async def test_an_unreachable_card_is_an_error_event_naming_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/.well-known/agent-card.json"
    runner = await runner_for(RemoteA2aAgent(name="helper", agent_card=url))
    events = await turn(runner, "hello")
    failed = only_error(events)
    assert failed.error_code == "AgentCardResolutionError" and failed.author == "helper"
    assert url in (failed.error_message or "") and "helper" in (failed.error_message or "")
    assert records(await logged_events(runner), "call") == []  # nothing was sent
    stored = await runner.session_service.get_session(
        app_name="app", user_id=USER, session_id=SESSION
    )
    assert stored is not None and stored.events[-1].error_code == "AgentCardResolutionError"


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("missing.json", "does not exist"),
        ("not-a-card.json", "not a valid agent card"),
        ("http://example.com/.well-known/agent-card.json", "must use https"),
    ],
)
async def test_a_card_that_cannot_be_had_says_what_to_fix(
    source: str, problem: str, tmp_path: Path
) -> None:
    (tmp_path / "not-a-card.json").write_text("[1, 2")
    path = source if source.startswith("http") else str(tmp_path / source)
    runner = await runner_for(RemoteA2aAgent(name="helper", agent_card=path))
    failed = only_error(await turn(runner, "hello"))
    assert failed.error_code == "AgentCardResolutionError"
    assert problem in (failed.error_message or "")


async def test_a_card_in_code_naming_a_closed_port_could_not_be_reached() -> None:
    url = f"http://127.0.0.1:{free_port()}/rpc"
    card = AgentCard(
        name="stray",
        supported_interfaces=[AgentInterface(protocol_binding="JSONRPC", url=url)],
        capabilities=AgentCapabilities(),
    )
    runner = await runner_for(RemoteA2aAgent(name="helper", agent_card=card))
    failed = only_error(await turn(runner, "hello"))
    assert failed.error_code == "A2AClientError"
    assert "could not be reached" in (failed.error_message or "") and url in (
        failed.error_message or ""
    )


async def test_a_card_with_no_transport_this_client_speaks() -> None:
    card = AgentCard(
        name="grpc_only",
        supported_interfaces=[AgentInterface(protocol_binding="GRPC", url="http://127.0.0.1:9")],
    )
    runner = await runner_for(RemoteA2aAgent(name="helper", agent_card=card))
    failed = only_error(await turn(runner, "hello"))
    assert failed.error_code == "AgentCardResolutionError"
    assert "offers GRPC" in (failed.error_message or "")


async def test_a_fetched_card_may_send_messages_to_its_own_origin_only() -> None:
    with a2a_scripted_server("--card-host", "localhost") as server:
        runner = await runner_for(RemoteA2aAgent(name="helper", agent_card=server.card_url))
        failed = only_error(await turn(runner, "hello"))
        assert failed.error_code == "AgentCardResolutionError"
        assert "on another origin" in (failed.error_message or "")
        assert server.received() == []


def test_bad_arguments_are_refused_at_once() -> None:
    with pytest.raises(ValueError, match="agent_card is empty"):
        RemoteA2aAgent(name="helper", agent_card="  ")
    with pytest.raises(TypeError, match="AgentCard, a URL or a file path"):
        RemoteA2aAgent(name="helper", agent_card=42)  # type: ignore[arg-type]
    with pytest.raises(InputValidationError, match="'helper': mode='task' is not supported"):
        RemoteA2aAgent(name="helper", agent_card="card.json", mode="task")


async def test_task_mode_is_refused_and_what_the_error_names_instead_works(
    server: ScriptedA2aServer,
) -> None:
    with pytest.raises(InputValidationError) as refused:
        RemoteA2aAgent(name="helper", agent_card=server.card_url, mode="task")
    assert "tools=[AgentTool(agent=RemoteA2aAgent(...))]" in str(refused.value)
    server.script({"ask": "Which size?"}, {"answer": "Ordered size {input}."})
    helper = RemoteA2aAgent(name="helper", agent_card=server.card_url, description="Orders.")
    model = ScriptedLlm(script=[Call("helper", request="order a shirt"), "Done."])
    parent = Agent(name="desk", model=model, tools=[AgentTool(agent=helper)])
    runner = await runner_for(parent)
    await turn(runner, "a shirt, please")
    [waiting] = await runner.list_pending_interrupts(user_id=USER, session_id=SESSION)
    assert waiting.args == {"input_required": "Which size?"}
    await turn(runner, answer(waiting.id, waiting.name, {"result": "M"}))
    [result] = [
        p.function_response.response
        for c in model.requests[-1].contents
        for p in c.parts or []
        if p.function_response
    ]
    assert result == {"result": "Ordered size M."}  # the task's result, back to the parent


async def test_a_failed_remote_task_is_an_error_event_with_its_reason(
    server: ScriptedA2aServer,
) -> None:
    server.script({"fail": "the printer is on fire"}, {"answer": "fine now"})
    runner = await runner_for(RemoteA2aAgent(name="helper", agent_card=server.card_url))
    failed = only_error(await turn(runner, "print it"))
    assert failed.error_code == "TASK_STATE_FAILED"
    assert "the printer is on fire" in (failed.error_message or "")
    assert texts(await turn(runner, "try again")) == ["fine now"]  # the runner goes on


async def test_a_remote_agent_that_raises_fails_its_task(
    streaming_server: ScriptedA2aServer,
) -> None:
    streaming_server.reset()
    streaming_server.script({"raise": "boom"})
    runner = await runner_for(RemoteA2aAgent(name="helper", agent_card=streaming_server.card_url))
    failed = only_error(await turn(runner, "go"))
    assert failed.error_code == "TASK_STATE_FAILED"  # its stream broke; the task, read, failed


async def test_a_remote_agent_that_raises_answers_a_blocking_call_with_an_error(
    plain_server: ScriptedA2aServer,
) -> None:
    plain_server.reset()
    plain_server.script({"raise": "boom"})
    runner = await runner_for(RemoteA2aAgent(name="helper", agent_card=plain_server.card_url))
    failed = only_error(await turn(runner, "go"))
    assert failed.error_code == "A2AClientError"
    assert "answered with an error: InternalError: boom" in (failed.error_message or "")


async def test_an_http_error_is_an_a2a_client_error_and_the_next_turn_sends_it_again() -> None:
    with a2a_scripted_server("--status", "503") as server:
        runner = await runner_for(RemoteA2aAgent(name="helper", agent_card=server.card_url))
        events = await turn(runner, "hello")
        failed = only_error(events)
        assert failed.error_code == "A2AClientError"
        message = failed.error_message or ""
        assert "503" in message and "answered with an error" in message
        logged = await logged_events(runner)
        [closed] = [r for e in records(logged, "close") for r in e.get_function_responses()]
        assert "error" in (closed.response or {})
        await turn(runner, "still there?")
    logged_later = (await logged_events(runner))[len(logged) :]
    [call] = [c for e in records(logged_later, "call") for c in e.get_function_calls()]
    sent = (call.args or {})["message"]["parts"]
    assert [p["text"] for p in sent] == ["hello", "still there?"]  # the remote never had it


async def test_a_remote_gone_after_its_card_could_not_be_reached(tmp_path: Path) -> None:
    with a2a_scripted_server() as server:
        agent = RemoteA2aAgent(name="helper", agent_card=server.card_url)
        runner = await runner_for(agent)
        server.script({"answer": "hi"})
        assert texts(await turn(runner, "hello")) == ["hi"]
    failed = only_error(await turn(runner, "anyone?"))
    assert failed.error_code == "A2AClientError"
    assert "could not be reached" in (failed.error_message or "")
