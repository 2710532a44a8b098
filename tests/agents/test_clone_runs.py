"""A cloned LlmAgent runs: its caches are fresh ones, not shared and not left unset."""

from __future__ import annotations

from google.genai import types

from cairn import Agent, InMemoryRunner
from cairn.testing import Call, ScriptedLlm


def add(a: int, b: int) -> int:
    """Adds."""
    return a + b


async def test_a_clone_with_tools_runs_on_its_own_model() -> None:
    original = Agent(name="calc", model=ScriptedLlm(script=["unused"]), tools=[add])
    copy = original.clone(update={"model": ScriptedLlm(script=[Call("add", a=1, b=2), "3"])})
    runner = InMemoryRunner(agent=copy)
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
    events = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message=types.UserContent("1+2?")
        )
    ]
    assert [r.response for e in events for r in e.get_function_responses()] == [{"result": 3}]
    assert events[-1].content is not None and events[-1].content.parts[0].text == "3"
