"""A long-running tool's update sent as a FunctionResponse without an id answers the oldest
pending call of that name, as ADK matches such answers."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from cairn import Agent, InMemoryRunner, LongRunningFunctionTool
from cairn.errors import InterruptNotPendingError
from cairn.testing import Call, ScriptedLlm


def ask_manager(amount: int) -> dict[str, Any] | None:
    """Ask a manager to approve a refund.

    Args:
        amount: the refund in euros.
    """
    return None


def update(**response: Any) -> types.Content:
    answer = types.FunctionResponse(name="ask_manager", response=response)
    return types.Content(role="user", parts=[types.Part(function_response=answer)])


async def test_an_update_without_an_id_answers_the_pending_call_of_its_name() -> None:
    llm = ScriptedLlm(
        script=[[Call("ask_manager", amount=10), Call("ask_manager", amount=20)], "Both decided."]
    )
    agent = Agent(name="refunds", model=llm, tools=[LongRunningFunctionTool(ask_manager)])
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    hello = types.Content(role="user", parts=[types.Part(text="Refund me")])
    first = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=hello)
    ]
    calls = [c.id for e in first for c in e.get_function_calls()]
    assert len(calls) == 2

    async def send(message: types.Content) -> list[Any]:
        return [
            e
            async for e in runner.run_async(user_id="u", session_id=session.id, new_message=message)
        ]

    await send(update(status="approved"))  # the first call, as they were made
    events = await send(update(status="rejected"))
    assert events[-1].content.parts[0].text == "Both decided."
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    assert stored is not None
    answered = [
        (r.id, r.response)
        for e in stored.events
        if e.author == "user"
        for r in e.get_function_responses()
    ]
    assert answered == [(calls[0], {"status": "approved"}), (calls[1], {"status": "rejected"})]
    # Nothing of that name is waiting any more: the update is refused, saying why.
    with pytest.raises(InterruptNotPendingError, match="no call of 'ask_manager' is waiting"):
        await send(update(status="late"))
