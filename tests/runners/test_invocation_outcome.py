"""``Runner.run_async(outcome=...)``: what an invocation left waiting, told at its end."""

from __future__ import annotations

from google.genai import types

from cairn import Agent, InMemoryRunner, LongRunningFunctionTool
from cairn.runners import InvocationOutcome
from cairn.testing import Call, ScriptedLlm

APP, USER, SESSION = "outcome", "u", "s"


def ask_manager(amount: int) -> None:
    """Ask a manager to approve a refund."""
    return None


async def refunds(script: list[object]) -> InMemoryRunner:
    llm = ScriptedLlm(script=script)
    agent = Agent(name="refunds", model=llm, tools=[LongRunningFunctionTool(ask_manager)])
    runner = InMemoryRunner(agent=agent, app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    return runner


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def test_a_paused_invocation_tells_its_pending_call_as_the_log_does() -> None:
    runner = await refunds([Call("ask_manager", id="fc-1", amount=50), "Refund approved."])
    outcome = InvocationOutcome()
    async for _ in runner.run_async(
        user_id=USER, session_id=SESSION, new_message=said("refund 50"), outcome=outcome
    ):
        assert outcome.pending is None  # told only once the invocation has ended
    assert outcome.pending is not None
    assert [(i.id, i.kind, i.name) for i in outcome.pending] == [
        ("fc-1", "long_running", "ask_manager")
    ]
    from_log = await runner.list_pending_interrupts(user_id=USER, session_id=SESSION)
    assert outcome.pending == from_log

    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id="fc-1", name="ask_manager", response={"approved": True}
                )
            )
        ],
    )
    answered = InvocationOutcome()
    events = [
        e
        async for e in runner.run_async(
            user_id=USER, session_id=SESSION, new_message=answer, outcome=answered
        )
    ]
    assert events[-1].content.parts[0].text == "Refund approved."
    assert answered.pending == []


async def test_an_invocation_its_caller_stops_reading_tells_nothing() -> None:
    runner = await refunds(["one", "two"])
    outcome = InvocationOutcome()
    events = runner.run_async(
        user_id=USER,
        session_id=SESSION,
        new_message=said("hi"),
        outcome=outcome,
        yield_user_message=True,
    )
    await anext(events)  # the user's message; the agent has not answered yet
    await events.aclose()
    assert outcome.pending is None
