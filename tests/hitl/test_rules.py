"""The rules of pausing and answering, one test each (in one process unless said otherwise)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from tests.hitl.driver import Driver
from tests.hitl.scenarios import runs

from cairn import (
    Agent,
    FunctionTool,
    InMemoryRunner,
    InterruptNotPendingError,
    InvalidAnswerError,
    LongRunningFunctionTool,
    ToolContext,
)
from cairn.testing import Call, ScriptedLlm

APP, USER, SESSION = "rules", "u1", "s1"


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def answer(interrupt_id: str, name: str, response: dict[str, Any]) -> types.Content:
    reply = types.FunctionResponse(id=interrupt_id, name=name, response=response)
    return types.Content(role="user", parts=[types.Part(function_response=reply)])


async def start(agent: Agent) -> InMemoryRunner:
    runner = InMemoryRunner(agent=agent, app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    return runner


async def run(runner: InMemoryRunner, message: types.Content | None = None, **kwargs: Any) -> list:  # type: ignore[type-arg]
    return [
        e
        async for e in runner.run_async(
            user_id=USER, session_id=SESSION, new_message=message, **kwargs
        )
    ]


async def pending(runner: InMemoryRunner) -> list:  # type: ignore[type-arg]
    return await runner.list_pending_interrupts(user_id=USER, session_id=SESSION)


calls: list[dict[str, Any]] = []


def pay(amount: int, to: str, tool_context: ToolContext) -> dict[str, Any]:
    """Pay someone."""
    calls.append({"amount": amount, "to": to, "key": tool_context.idempotency_key})
    return {"paid": amount}


@pytest.fixture(autouse=True)
def fresh_calls() -> None:
    calls.clear()


async def test_an_approval_names_exactly_the_call_it_approves() -> None:
    llm = ScriptedLlm(script=[Call("pay", id="c1", amount=10, to="ann"), "ok"])
    runner = await start(
        Agent(name="a", model=llm, tools=[FunctionTool(pay, require_confirmation=True)])
    )
    await run(runner, said("pay ann"))
    [asked] = await pending(runner)
    changed = {
        "confirmed": True,
        "originalFunctionCall": {"id": "c1", "name": "pay", "args": {"amount": 1000, "to": "eve"}},
    }
    with pytest.raises(InvalidAnswerError, match=r"only for the exact call"):
        await run(runner, answer(asked.id, asked.name, changed))
    other_id = {"confirmed": True, "originalFunctionCall": {"id": "c2", "name": "pay"}}
    with pytest.raises(InvalidAnswerError, match=r"'c2'"):
        await run(runner, answer(asked.id, asked.name, other_id))
    with pytest.raises(InvalidAnswerError, match=r"confirmed"):
        await run(runner, answer(asked.id, asked.name, {"approve": "yes"}))
    assert calls == [] and [i.id for i in await pending(runner)] == [asked.id]
    same = {
        **changed,
        "originalFunctionCall": {"id": "c1", "name": "pay", "args": {"amount": 10, "to": "ann"}},
    }
    await run(runner, answer(asked.id, asked.name, same))
    assert calls == [{"amount": 10, "to": "ann", "key": f"{asked.invocation_id}:c1"}]


async def test_an_approval_does_not_carry_over_to_a_later_identical_call() -> None:
    llm = ScriptedLlm(
        script=[
            Call("pay", id="c1", amount=10, to="ann"),
            "ok",
            Call("pay", id="c2", amount=10, to="ann"),
        ]
    )
    runner = await start(
        Agent(name="a", model=llm, tools=[FunctionTool(pay, require_confirmation=True)])
    )
    await run(runner, said("pay ann"))
    [first] = await pending(runner)
    await run(runner, answer(first.id, first.name, {"confirmed": True}))
    await run(runner, said("again"))
    [second] = await pending(runner)
    assert second.id != first.id and second.function_call.id == "c2"
    assert len(calls) == 1


async def test_a_confirmation_rule_gets_the_arguments_as_keywords_as_in_adk() -> None:
    seen: list[str] = []

    def large(amount: int, tool_context: ToolContext) -> bool:
        seen.append(tool_context.function_call_id or "")
        return amount > 100

    llm = ScriptedLlm(
        script=[
            [Call("pay", id="small", amount=5, to="a"), Call("pay", id="big", amount=500, to="b")],
            "ok",
        ]
    )
    runner = await start(
        Agent(name="a", model=llm, tools=[FunctionTool(pay, require_confirmation=large)])
    )
    await run(runner, said("pay both"))
    assert [c["amount"] for c in calls] == [5]  # the small one ran at once
    assert sorted(seen) == ["big", "small"]  # each call's own context
    [asked] = await pending(runner)
    assert asked.function_call.id == "big"
    await run(runner, answer(asked.id, asked.name, {"confirmed": True}))
    assert [c["amount"] for c in calls] == [5, 500]
    # The model got both results in one turn.
    last = llm.requests[-1].contents[-1]
    assert sorted(p.function_response.id for p in last.parts) == ["big", "small"]


async def test_a_confirmation_rule_may_take_only_some_arguments_or_all_as_kwargs() -> None:
    asked_with: list[dict[str, Any]] = []

    def to_bob(to: str) -> bool:
        return to == "bob"

    def everything(**kwargs: Any) -> bool:
        asked_with.append(kwargs)
        return False

    llm = ScriptedLlm(
        script=[[Call("pay", id="p1", amount=5, to="bob"), Call("free", id="p2", n=1)], "ok"]
    )

    def free(n: int) -> dict[str, int]:
        return {"n": n}

    tools = [
        FunctionTool(pay, require_confirmation=to_bob),
        FunctionTool(free, require_confirmation=everything),
    ]
    runner = await start(Agent(name="a", model=llm, tools=tools))
    await run(runner, said("pay bob"))
    [asked] = await pending(runner)
    assert asked.function_call.id == "p1"
    [kwargs] = asked_with
    assert kwargs["n"] == 1 and kwargs["tool_context"].function_call_id == "p2"


async def test_a_long_running_call_next_to_text_still_pauses() -> None:
    """ADK decides from the last two events; cairn from the whole turn."""

    def ask(question: str) -> None:
        """Ask a human."""
        return None

    reply = types.Content(
        role="model",
        parts=[
            types.Part(
                function_call=types.FunctionCall(id="p", name="pay", args={"amount": 1, "to": "x"})
            ),
            types.Part(
                function_call=types.FunctionCall(id="lr", name="ask", args={"question": "?"})
            ),
            types.Part(text="I paid and asked; waiting for the answer."),
        ],
    )
    llm = ScriptedLlm(script=[reply, "done"])
    runner = await start(Agent(name="a", model=llm, tools=[pay, LongRunningFunctionTool(ask)]))
    events = await run(runner, said("go"))
    assert len(llm.requests) == 1  # the model was not called again while a call is open
    assert [i.id for i in await pending(runner)] == ["lr"]
    assert events[-1].get_function_responses()[0].id == "p"
    await run(runner, answer("lr", "ask", {"answer": "yes"}))
    assert len(llm.requests) == 2 and len(calls) == 1


async def test_continue_by_invocation_id_with_a_state_delta() -> None:
    def ask(question: str) -> None:
        """Ask a human."""
        return None

    llm = ScriptedLlm(script=[Call("ask", id="lr", question="?"), "done"])
    runner = await start(Agent(name="a", model=llm, tools=[LongRunningFunctionTool(ask)]))
    await run(runner, said("go"))
    [waiting] = await pending(runner)
    events = await run(runner, invocation_id=waiting.invocation_id, state_delta={"note": "hi"})
    assert [e.author for e in events] == []  # nothing answered yet: it keeps waiting
    session = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    assert session.state["note"] == "hi"
    assert session.events[-1].invocation_id == waiting.invocation_id
    assert [i.id for i in await pending(runner)] == ["lr"]


async def test_answered_days_later_in_another_process(tmp_path: Path) -> None:
    driver = Driver(str(tmp_path / "s.db"), "long_running", "new", tmp_path / "runs.txt")
    [waiting] = (await driver.step({"say": "refund 50"})).pending
    three_days = str(3 * 24 * 3600)
    done = await driver.step(
        {"answer": [[waiting.id, waiting.name, {"approved": True}]]},
        CAIRN_HITL_CLOCK_SHIFT=three_days,
    )
    assert done.text == 'results: {"ask_manager": {"approved": true}}'
    assert done.events[0].timestamp - waiting.timestamp > 3 * 24 * 3600 - 60
    assert time.time() < done.events[0].timestamp
    assert runs(tmp_path / "runs.txt") == {"ask_manager": 1}


async def test_a_long_running_tool_with_a_pending_status_takes_its_final_answer_later() -> None:
    """ADK's reimbursement pattern: the tool returns {"status": "pending"}, the model is
    told and replies; the call stays open, and the client's later response with the call's
    id is its final result: the model sees it right after the call, the interim left out."""
    tickets: list[str] = []

    def ask_for_approval(purpose: str, amount: float) -> dict[str, Any]:
        """Ask a manager to approve a reimbursement."""
        tickets.append(purpose)
        return {"status": "pending", "ticket": "T-1", "amount": amount}

    llm = ScriptedLlm(
        script=[
            Call("ask_for_approval", id="lr", purpose="flight", amount=250),
            "Asked your manager; ticket T-1 is pending.",
            "Approved: 250 for the flight.",
        ]
    )
    runner = await start(
        Agent(name="a", model=llm, tools=[LongRunningFunctionTool(ask_for_approval)])
    )
    first = await run(runner, said("reimburse the flight"))
    assert first[-1].content.parts[0].text == "Asked your manager; ticket T-1 is pending."
    assert first[1].get_function_responses()[0].response["amount"] == 250  # an int stays one
    [open_call] = await pending(runner)
    assert (open_call.id, open_call.kind) == ("lr", "long_running")

    done = await run(runner, answer("lr", "ask_for_approval", {"status": "approved"}))
    assert done[-1].content.parts[0].text == "Approved: 250 for the flight."
    seen = llm.requests[-1].contents
    assert [p.function_response.response for p in seen[-1].parts] == [{"status": "approved"}]
    assert seen[-2].parts[0].function_call.id == "lr"
    assert await pending(runner) == [] and tickets == ["flight"]  # the tool ran once
    with pytest.raises(InterruptNotPendingError, match="answered already"):
        await run(runner, answer("lr", "ask_for_approval", {"status": "approved"}))
