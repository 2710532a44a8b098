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


def approve_call(call_id: str) -> Event:
    call = types.FunctionCall(name="approve", args={}, id=call_id)
    return Event(
        content=types.Content(role="model", parts=[types.Part(function_call=call)]),
        long_running_tool_ids={call_id},
    )


def approved(call_id: str, response: dict[str, Any]) -> types.Content:
    answer = types.FunctionResponse(name="approve", id=call_id, response=response)
    return types.Content(role="user", parts=[types.Part(function_response=answer)])


async def test_a_node_pausing_on_its_own_call_resumes_with_the_answer() -> None:
    runs: list[str] = []

    class Approve(BaseNode):
        rerun_on_resume: bool = True

        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            runs.append("approve")
            if "fc-1" in ctx.resume_inputs:
                yield f"approved {ctx.resume_inputs['fc-1']['value']} ({ctx.state['asked']})"
                return
            ctx.state["asked"] = "yes"  # kept with the pausing event
            yield approve_call("fc-1")

    seen = Seen(name="seen")
    wf = Workflow(name="wf", edges=[(START, Shout(name="shout"), Approve(name="approve"), seen)])
    first, second = await run(wf, said("go"), approved("fc-1", {"value": 42}))
    assert first[-1].long_running_tool_ids == {"fc-1"}
    assert first[-1].actions.state_delta == {"asked": "yes"}
    assert seen.inputs == ["approved 42 (yes)"]
    assert runs == ["approve", "approve"]
    assert not any(e.node_info.path == "wf@1/shout@1" for e in second)  # not run again


async def test_a_route_set_before_pausing_holds_after_the_answer() -> None:
    class Decide(BaseNode):  # rerun_on_resume False: the answer is its output
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            ctx.route = "go"
            yield approve_call("fc-2")

    went, stayed = Seen(name="went"), Seen(name="stayed")
    wf = Workflow(name="wf", edges=[(START, Decide(name="decide"), {"go": went, "no": stayed})])
    await run(wf, said("start"), approved("fc-2", {"ok": True}))
    assert went.inputs == [{"ok": True}] and stayed.inputs == []


async def test_returned_content_is_said_not_output() -> None:
    def greet() -> types.Content:
        return types.Content(role="model", parts=[types.Part(text="hello")])

    seen = Seen(name="seen")
    (events,) = await run(Workflow(name="wf", edges=[(START, greet, seen)]), said("go"))
    greeted = [e for e in events if e.node_info.path == "wf@1/greet@1"]
    assert len(greeted) == 1  # one event: what it said, recording the run
    assert greeted[0].content is not None and greeted[0].content.parts[0].text == "hello"
    assert greeted[0].output is None and greeted[0].node_info.output_for == ["wf@1/greet@1"]
    assert seen.inputs == [None]


async def test_a_state_only_record_is_not_a_final_response() -> None:
    wf = Workflow(name="wf", edges=[(START, Shout(name="shout"), Quiet(name="quiet"))])
    (events,) = await run(wf, said("x"))
    assert events[-1].is_final_response()  # has an output

    class Silent(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            ctx.state["k"] = 1
            return
            yield

    (events,) = await run(Workflow(name="wf", edges=[(START, Silent(name="silent"))]), said("x"))
    assert events[-1].actions.state_delta == {"k": 1}
    assert not events[-1].is_final_response()


async def test_a_wait_for_output_gate_opens_on_a_later_trigger() -> None:
    class Gate(BaseNode):
        wait_for_output: bool = True

        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            count = (ctx.state.get("gate_count") or 0) + 1
            if count < 2:
                yield Event(state={"gate_count": count})
            else:
                yield Event(output="open", state={"gate_count": None})

    def left() -> str:
        return "L"

    def right() -> str:
        return "R"

    after = Seen(name="after")
    gate = Gate(name="gate")
    wf = Workflow(name="wf", edges=[(START, left, gate, after), (START, right, gate)])
    await run(wf, said("go"))
    assert after.inputs == ["open"]  # the first run (no output) triggered nothing


def test_request_input_takes_prompt_as_its_message() -> None:
    assert RequestInput(prompt="Enter a number").message == "Enter a number"


async def test_retry_delays_follow_adks_jitter(monkeypatch: pytest.MonkeyPatch) -> None:
    """jitter is a fraction of the delay, either way; a patched asyncio.sleep sees each delay
    (and does not stall the run)."""
    import asyncio
    import random

    from cairn.workflow import RetryConfig

    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", no_wait)
    monkeypatch.setattr(random, "uniform", lambda low, high: low)  # the shortest wait
    failures = {"left": 2}

    class Flaky(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            if failures["left"]:
                failures["left"] -= 1
                raise ConnectionError("down")
            yield "up"

    config = RetryConfig(initial_delay=4.0, backoff_factor=2.0, jitter=0.5, max_attempts=3)
    wf = Workflow(name="wf", edges=[(START, Flaky(name="flaky", retry_config=config))])
    (events,) = await run(wf, said("go"))
    assert events[-1].output == "up"
    assert waits == [2.0, 4.0]  # 4 - 50%, then 8 - 50%
    errors = [e for e in events if e.error_code]
    assert [e.node_name for e in errors] == ["flaky", "flaky"]


def test_retry_config_names_what_it_takes() -> None:
    from cairn.workflow import RetryConfig

    with pytest.raises(ValueError, match="exception class names"):
        RetryConfig(exceptions=[42])


async def test_a_workflow_built_from_a_graph_of_edges() -> None:
    from cairn.workflow import Edge, Graph

    shout, seen = Shout(name="shout"), Seen(name="seen")
    wf = Workflow(name="wf", graph=Graph(edges=[Edge(START, shout), Edge(shout, seen)]))
    await run(wf, said("hey"))
    assert seen.inputs == ["HEY!"]
    with pytest.raises(ValueError, match="not both"):
        Workflow(name="wf2", edges=[(START, shout)], graph=Graph(edges=[Edge(START, shout)]))


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"city": "Oslo"}, {"city": "Oslo"}),
        (None, {}),
        ("  ", {}),
        ('{"city": "Rome"}', {"city": "Rome"}),
    ],
)
async def test_a_tool_node_reads_its_arguments_from_its_input(given: Any, expected: Any) -> None:
    from cairn.tools import FunctionTool

    def echo(city: str = "nowhere") -> dict[str, str]:
        return {"city": city}

    def give() -> Event:
        return Event(output=given)

    wf = Workflow(name="wf", edges=[(START, give, FunctionTool(func=echo))])
    (events,) = await run(wf, said("go"))
    assert events[-1].output == {"city": expected.get("city", "nowhere")}


async def test_a_tool_node_refuses_text_that_is_not_a_dict() -> None:
    from cairn.tools import FunctionTool

    def echo(city: str) -> str:
        return city

    def give() -> str:
        return "[1, 2]"

    with pytest.raises(TypeError, match="must be a dictionary"):
        await run(Workflow(name="wf", edges=[(START, give, FunctionTool(func=echo))]), said("x"))


async def test_a_tool_node_takes_missing_required_arguments_from_state() -> None:
    from cairn.tools import FunctionTool

    def weather(city: str, units: str = "celsius") -> dict[str, str]:
        return {"city": city, "units": units}

    def prepare(ctx: Context) -> None:
        ctx.state["city"] = "Paris"
        ctx.state["units"] = "kelvin"  # optional: not taken from state

    wf = Workflow(name="wf", edges=[(START, prepare, FunctionTool(func=weather))])
    (events,) = await run(wf, said("go"))
    assert events[-1].output == {"city": "Paris", "units": "celsius"}


async def test_a_second_output_is_refused() -> None:
    class Twice(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            yield Event(output="first")
            yield Event(output="second")

    with pytest.raises(ValueError, match="at most one"):
        await run(Workflow(name="wf", edges=[(START, Twice(name="twice"))]), said("go"))
