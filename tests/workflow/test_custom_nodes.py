"""Nodes of your own class (ADK's BaseNode subclasses), ctx.output, and JoinNode schemas."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.genai import types
from pydantic import BaseModel, Field

from cairn import Event, InMemoryRunner
from cairn.agents.context import Context
from cairn.workflow import START, BaseNode, JoinNode, RequestInput, Workflow


async def run(workflow: Workflow, *messages: types.Content) -> list[list[Event]]:
    runner = InMemoryRunner(node=workflow)
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
    return [
        [e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=m)]
        for m in messages
    ]


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


class Shout(BaseNode):
    suffix: str = "!"

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        text = node_input.parts[0].text if isinstance(node_input, types.Content) else node_input
        yield f"{text.upper()}{self.suffix}"


class Route(BaseNode):
    async def run(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        yield Event(output=node_input, route="long" if len(node_input) > 4 else "short")


class Quiet(BaseNode):
    """Sets its output and state on the context instead of yielding them."""

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        ctx.state["seen"] = node_input
        ctx.output = f"kept {node_input}"
        return
        yield


class Seen(BaseNode):
    inputs: list[Any] = Field(default_factory=list)

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        self.inputs.append(node_input)
        yield node_input


async def test_a_base_node_subclass_runs_its_run_impl_and_routes() -> None:
    shout, route = Shout(name="shout"), Route(name="route")
    long_, short = Seen(name="long_text"), Seen(name="short_text")
    wf = Workflow(name="wf", edges=[(START, shout, route, {"long": long_, "short": short})])
    (events,) = await run(wf, said("hello"))
    outputs = [(e.node_info.path, e.output) for e in events if e.output is not None]
    assert outputs == [
        ("wf@1/shout@1", "HELLO!"),
        ("wf@1/route@1", "HELLO!"),
        ("wf@1/long_text@1", "HELLO!"),
    ]
    assert [e.actions.route for e in events if e.node_info.path == "wf@1/route@1"] == ["long"]
    assert long_.inputs == ["HELLO!"] and short.inputs == []


async def test_ctx_output_is_the_node_output_with_its_state() -> None:
    wf = Workflow(name="wf", edges=[(START, Shout(name="shout"), Quiet(name="quiet"))])
    (events,) = await run(wf, said("hi"))
    last = events[-1]
    assert last.node_info.path == "wf@1/quiet@1"
    assert last.output == "kept HI!"
    assert last.actions.state_delta == {"seen": "HI!"}


async def test_a_custom_node_pauses_and_takes_the_answer() -> None:
    class Ask(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            yield RequestInput(interrupt_id="ask-1", message="ok?")

    after = Seen(name="after")
    wf = Workflow(name="wf", edges=[(START, Ask(name="ask"), after)])
    reply = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id="ask-1", name="adk_request_input", response={"ok": True}
                )
            )
        ],
    )
    first, _ = await run(wf, said("go"), reply)
    assert first[-1].long_running_tool_ids == {"ask-1"}
    assert after.inputs == [{"ok": True}]


async def test_a_base_node_that_does_nothing_names_the_fix() -> None:
    wf = Workflow(name="wf", edges=[(START, BaseNode(name="empty"))])
    with pytest.raises(NotImplementedError, match="_run_impl"):
        await run(wf, said("go"))


class Pair(BaseModel):
    key: str
    value: int


async def test_join_input_schema_checks_each_predecessor_output() -> None:
    def left() -> dict[str, Any]:
        return {"key": "l", "value": 1}

    def nothing() -> None:
        return None

    seen = Seen(name="seen")
    join = JoinNode(name="join", input_schema=Pair)
    wf = Workflow(name="wf", edges=[(START, (left, nothing), join, seen)])
    await run(wf, said("go"))
    assert seen.inputs == [{"left": {"key": "l", "value": 1}, "nothing": None}]

    def wrong() -> dict[str, Any]:
        return {"other": 1}

    bad = Workflow(
        name="bad", edges=[(START, (left, wrong), JoinNode(name="j", input_schema=Pair))]
    )
    with pytest.raises(ValueError, match="from 'wrong'"):
        await run(bad, said("go"))
