"""After a rewind the model never sees the rewound turns, and their pauses are gone."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from cairn import Agent, FunctionTool, InMemoryRunner, InterruptNotPendingError
from cairn.testing import Call, ScriptedLlm

APP, USER, SESSION = "rewind-llm", "u1", "s1"


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def texts(request: Any) -> list[str]:
    return [p.text for c in request.contents for p in c.parts or [] if p.text]


def transfer(amount: int) -> dict[str, Any]:
    """Move money."""
    return {"moved": amount}


async def run(runner: InMemoryRunner, message: types.Content) -> str:
    invocation = ""
    async for event in runner.run_async(user_id=USER, session_id=SESSION, new_message=message):
        invocation = event.invocation_id
    return invocation


async def test_the_model_sees_only_live_turns_after_a_rewind() -> None:
    llm = ScriptedLlm(script=["one", "two", "three"])
    runner = InMemoryRunner(agent=Agent(name="a", model=llm), app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    await run(runner, said("first"))
    second = await run(runner, said("second"))
    await runner.rewind_async(user_id=USER, session_id=SESSION, rewind_before_invocation_id=second)
    await run(runner, said("again"))
    assert texts(llm.requests[-1]) == ["first", "one", "again"]


async def test_rewinding_a_paused_invocation_drops_its_pending_interrupts() -> None:
    llm = ScriptedLlm(script=[Call("transfer", id="c1", amount=5), "done", "fresh"])
    tool = FunctionTool(transfer, require_confirmation=True)
    runner = InMemoryRunner(agent=Agent(name="a", model=llm, tools=[tool]), app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    paused = await run(runner, said("pay"))
    waiting = await runner.list_pending_interrupts(user_id=USER, session_id=SESSION)
    assert [i.kind for i in waiting] == ["confirmation"]

    await runner.rewind_async(user_id=USER, session_id=SESSION, rewind_before_invocation_id=paused)

    assert await runner.list_pending_interrupts(user_id=USER, session_id=SESSION) == []
    answer = types.FunctionResponse(
        id=waiting[0].id, name=waiting[0].name, response={"confirmed": True}
    )
    with pytest.raises(InterruptNotPendingError):
        await run(runner, types.Content(role="user", parts=[types.Part(function_response=answer)]))
    await run(runner, said("hello"))
    assert texts(llm.requests[-1]) == ["hello"]
