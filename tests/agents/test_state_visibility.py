"""State written through a context is visible at once in the invocation's session state (as
in ADK), and becomes durable only through the event that carries it."""

from __future__ import annotations

import collections
from typing import Any

from google.genai import types

from cairn import Agent, CallbackContext, InMemoryRunner, ToolContext
from cairn.testing import Call, ScriptedLlm
from cairn.workflow import START, RetryConfig, Workflow, node

APP, USER, SESSION = "demo", "u1", "s1"


async def start(agent: Any) -> InMemoryRunner:
    runner = InMemoryRunner(agent=agent, app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    return runner


async def stored_state(runner: InMemoryRunner) -> dict[str, Any]:
    session = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    assert session is not None
    return session.state


async def run(runner: InMemoryRunner, text: str) -> list[Any]:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return [
        e async for e in runner.run_async(user_id=USER, session_id=SESSION, new_message=message)
    ]


async def test_a_callbacks_write_is_in_session_state_at_once_and_stored_with_its_event() -> None:
    seen: dict[str, Any] = {}
    runner: InMemoryRunner

    async def before_model(callback_context: CallbackContext, llm_request: Any) -> None:
        if seen:
            return  # the second model call
        callback_context.state["mood"] = "sunny"
        callback_context.state["temp:scratch"] = 1
        seen["session"] = dict(callback_context.session.state)
        seen["store"] = await stored_state(runner)

    def tool(tool_context: ToolContext) -> dict[str, Any]:
        """Count."""
        tool_context.state["count"] = 1
        return {"in_session": tool_context.session.state.get("count")}

    llm = ScriptedLlm(script=[Call("tool"), "done"])
    runner = await start(
        Agent(name="a", model=llm, tools=[tool], before_model_callback=before_model)
    )
    events = await run(runner, "go")
    assert seen["session"]["mood"] == "sunny" and seen["session"]["temp:scratch"] == 1
    assert "mood" not in seen["store"]  # not durable before its event is stored
    assert events[1].get_function_responses()[0].response == {"in_session": 1}
    assert events[0].actions.state_delta == {"mood": "sunny", "temp:scratch": 1}
    assert await stored_state(runner) == {"mood": "sunny", "count": 1}  # temp: never stored


attempts = collections.Counter[str]()


@node(retry_config=RetryConfig(max_attempts=2, initial_delay=0, jitter=0))
def flaky(node_input: str, ctx: Any) -> str:
    attempts["flaky"] += 1
    if attempts["flaky"] == 1:
        ctx.state["half_done"] = True
        raise ConnectionError("try again")
    return f"half_done={ctx.session.state.get('half_done')}"


async def test_a_failed_attempts_writes_are_gone_from_session_state_when_it_is_retried() -> None:
    attempts.clear()
    runner = await start(Workflow(name="retry", edges=[(START, flaky)]))
    events = await run(runner, "x")
    # The retry sees the state the log holds, as it would after a crash and a resume.
    assert events[-1].output == "half_done=None"
    assert "half_done" not in await stored_state(runner)
