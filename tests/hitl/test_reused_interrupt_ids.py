"""An interrupt id used again by a later invocation of the same session (a fixed
``interrupt_id``, a model that numbers its calls ``call-1``, ...): an answer belongs to the
invocation it resumed, so the later interrupt is pending, listed and answerable, and two
invocations waiting under one id are each answered in turn, each resuming its own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from cairn import (
    Agent,
    Event,
    InMemorySessionService,
    LongRunningFunctionTool,
    Runner,
    SqliteSessionService,
)
from cairn.errors import InterruptNotPendingError
from cairn.server.nodes import node_statuses
from cairn.sessions.base_session_service import BaseSessionService
from cairn.testing import Call, ScriptedLlm
from cairn.workflow import START, RequestInput, Workflow, node

U, S = "u", "s"


@node(rerun_on_resume=True)
def review(node_input: str, ctx):  # type: ignore[no-untyped-def]
    if not ctx.resume_inputs:
        yield RequestInput(interrupt_id="review-1", message="ok?", payload={"draft": node_input})
        return
    yield f"{node_input}: {ctx.resume_inputs['review-1']}"


def reply(interrupt_id: str, name: str, response: dict[str, Any]) -> types.Content:
    answer = types.FunctionResponse(id=interrupt_id, name=name, response=response)
    return types.Content(role="user", parts=[types.Part(function_response=answer)])


YES = reply("review-1", "adk_request_input", {"result": "yes"})


@pytest.fixture(params=["memory", "sqlite"])
async def service(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    store: BaseSessionService = (
        SqliteSessionService(tmp_path / "s.db")
        if request.param == "sqlite"
        else InMemorySessionService()
    )
    yield store
    await store.close()


async def start(service: BaseSessionService, agent: Any) -> Runner:
    runner = Runner(app_name="a", agent=agent, session_service=service)
    await service.create_session(app_name="a", user_id=U, session_id=S)
    return runner


async def run(runner: Runner, message: types.Content) -> list[Event]:
    return [e async for e in runner.run_async(user_id=U, session_id=S, new_message=message)]


async def test_a_fixed_interrupt_id_asked_again_by_a_later_run_is_pending(
    service: BaseSessionService,
) -> None:
    runner = await start(service, Workflow(name="mail", edges=[(START, review)]))
    await run(runner, types.UserContent("one"))
    assert (await run(runner, YES))[-1].output == "one: yes"
    await run(runner, types.UserContent("two"))
    [waiting] = await runner.list_pending_interrupts(user_id=U, session_id=S)
    assert (waiting.id, waiting.payload) == ("review-1", {"draft": "two"})
    assert (await run(runner, YES))[-1].output == "two: yes"
    assert await runner.list_pending_interrupts(user_id=U, session_id=S) == []


async def test_two_runs_waiting_under_one_id_are_answered_newest_first(
    service: BaseSessionService,
) -> None:
    runner = await start(service, Workflow(name="mail", edges=[(START, review)]))
    await run(runner, types.UserContent("one"))
    await run(runner, types.UserContent("two"))
    first, second = await runner.list_pending_interrupts(user_id=U, session_id=S)
    assert (first.payload, second.payload) == ({"draft": "one"}, {"draft": "two"})
    newest = await run(runner, YES)
    assert newest[-1].output == "two: yes" and {e.invocation_id for e in newest} == {
        second.invocation_id
    }
    [left] = await runner.list_pending_interrupts(user_id=U, session_id=S)
    assert left.invocation_id == first.invocation_id
    oldest = await run(runner, YES)
    assert oldest[-1].output == "one: yes" and {e.invocation_id for e in oldest} == {
        first.invocation_id
    }
    with pytest.raises(InterruptNotPendingError, match="answered already"):
        await run(runner, YES)


def ask_manager(question: str) -> None:
    """Ask a manager; the answer comes later."""


async def test_a_model_reusing_a_call_id_waits_again_in_a_later_run(
    service: BaseSessionService,
) -> None:
    model = ScriptedLlm(
        script=[
            Call("ask_manager", id="call-1", question="first?"),
            "first done",
            Call("ask_manager", id="call-1", question="second?"),
            "second done",
        ]
    )
    agent = Agent(name="clerk", model=model, tools=[LongRunningFunctionTool(ask_manager)])
    runner = await start(service, agent)
    await run(runner, types.UserContent("ask"))
    done = await run(runner, reply("call-1", "ask_manager", {"ok": 1}))
    assert done[-1].content is not None and done[-1].content.parts[0].text == "first done"
    await run(runner, types.UserContent("ask again"))
    [waiting] = await runner.list_pending_interrupts(user_id=U, session_id=S)
    assert waiting.function_call is not None and waiting.function_call.args == {
        "question": "second?"
    }
    done = await run(runner, reply("call-1", "ask_manager", {"ok": 2}))
    assert done[-1].content is not None and done[-1].content.parts[0].text == "second done"


async def test_the_node_of_a_later_run_shows_as_waiting(service: BaseSessionService) -> None:
    """The node statuses the server's graph view reads (``GET .../nodes``)."""
    runner = await start(service, Workflow(name="mail", edges=[(START, review)]))
    await run(runner, types.UserContent("one"))
    first = await run(runner, YES)
    later = await run(runner, types.UserContent("two"))
    session = await service.get_session(app_name="a", user_id=U, session_id=S)
    assert session is not None

    def status(invocation_id: str) -> str:
        [node] = [
            n for n in node_statuses(session.events, invocation_id) if n.path.endswith("review@1")
        ]
        return node.status

    assert status(first[-1].invocation_id) == "completed"
    assert status(later[-1].invocation_id) == "waiting"


def ask_again(node_input: str):  # type: ignore[no-untyped-def]
    yield RequestInput(interrupt_id="review-1", message="ok?", payload={"draft": node_input})


def decide(node_input: str):  # type: ignore[no-untyped-def]
    yield Event(route="done" if node_input == "yes" else "again", output=node_input)


def finish() -> str:
    return "finished"


async def test_a_fixed_interrupt_id_asked_twice_in_one_run_fails_the_node_naming_the_fix(
    service: BaseSessionService,
) -> None:
    """Within one invocation the answer to the first request is in the log: a second
    request with that id could never be told apart, so the node fails instead of waiting
    unlisted."""
    loop = Workflow(
        name="mail",
        edges=[(START, ask_again, decide), (decide, {"done": finish, "again": ask_again})],
    )
    runner = await start(service, loop)
    await run(runner, types.UserContent("one"))
    with pytest.raises(ValueError) as raised:  # as ADK, the node's error reaches the caller
        await run(runner, reply("review-1", "adk_request_input", {"result": "more"}))
    assert "interrupt_id 'review-1', which 'mail@1/ask_again@1' used already" in str(raised.value)
    assert "leave interrupt_id out" in str(raised.value)
    session = await service.get_session(app_name=runner.app_name, user_id=U, session_id=S)
    assert session is not None
    failed = [e for e in session.events if e.error_code]
    assert len(failed) == 1 and failed[0].error_message == str(raised.value)  # stored first
    assert not any(e.long_running_tool_ids for e in session.events[-len(failed) :])
    assert await runner.list_pending_interrupts(user_id=U, session_id=S) == []
