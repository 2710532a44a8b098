"""Running workflows: outputs, routes, state, joins, nesting, retries, input requests, resume."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from pydantic import BaseModel

from cairn import Event, InMemoryRunner, Runner, SqliteSessionService
from cairn.errors import InvalidAnswerError
from cairn.workflow import DEFAULT_ROUTE, START, JoinNode, RequestInput, RetryConfig, Workflow, node

APP, USER, SESSION = "wf", "u1", "s1"
ran: collections.Counter[str] = collections.Counter()


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def answer(interrupt_id: str, value: Any) -> types.Content:
    response = types.FunctionResponse(
        id=interrupt_id, name="adk_request_input", response={"result": value}
    )
    return types.Content(role="user", parts=[types.Part(function_response=response)])


async def run(runner: Runner, message: types.Content) -> list[Event]:
    return [
        e async for e in runner.run_async(user_id=USER, session_id=SESSION, new_message=message)
    ]


async def start(workflow: Workflow) -> InMemoryRunner:
    ran.clear()
    runner = InMemoryRunner(agent=workflow, app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    return runner


def upper(node_input: str) -> str:
    ran["upper"] += 1
    return node_input.upper()


def exclaim(node_input: str, ctx) -> str:  # type: ignore[no-untyped-def]
    ran["exclaim"] += 1
    ctx.state["last"] = node_input
    return node_input + "!"


async def run_failing(runner: Runner, message: types.Content) -> tuple[list[Event], Exception]:
    """The events a failing run yielded before the node's exception reached the caller."""
    events: list[Event] = []
    with pytest.raises(Exception) as raised:
        async for event in runner.run_async(user_id=USER, session_id=SESSION, new_message=message):
            events.append(event)
    return events, raised.value


async def test_outputs_flow_along_edges_and_state_is_committed() -> None:
    runner = await start(Workflow(name="pipe", edges=[(START, upper, exclaim)]))
    events = await run(runner, said("hi"))
    # One output event per node, as ADK writes them; the last one is also the workflow's.
    assert [(e.node_info.path, e.output) for e in events] == [
        ("pipe@1/upper@1", "HI"),
        ("pipe@1/exclaim@1", "HI!"),
    ]
    assert events[0].node_info.output_for == ["pipe@1/upper@1"]
    assert events[1].node_info.output_for == ["pipe@1/exclaim@1", "pipe@1"]
    assert {e.author for e in events} == {"pipe"}
    assert events[1].actions.state_delta == {"last": "HI"}  # ctx.state writes ride along
    assert not any(e.actions.end_of_agent for e in events)  # only resumable apps get markers
    session = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    assert session is not None and session.state == {"last": "HI"}


def classify(node_input: str):  # type: ignore[no-untyped-def]
    yield Event(route="long" if len(node_input) > 3 else "short", output=node_input)


def short(node_input: str) -> str:
    return f"short:{node_input}"


def long(node_input: str) -> str:
    return f"long:{node_input}"


def fallback(node_input: str) -> str:
    return f"other:{node_input}"


async def test_routes_pick_edges_and_default_fires_only_when_nothing_matched() -> None:
    workflow = Workflow(
        name="router",
        edges=[(START, classify, {"short": short, "long": long, DEFAULT_ROUTE: fallback})],
    )
    runner = await start(workflow)
    assert (await run(runner, said("abc")))[-1].output == "short:abc"
    assert (await run(runner, said("abcdef")))[-1].output == "long:abcdef"


def left(node_input: str) -> str:
    return "L"


def right(node_input: str) -> str:
    return "R"


async def test_fan_out_and_join() -> None:
    join = JoinNode(name="both")
    workflow = Workflow(name="fan", edges=[(START, (left, right), join)])
    runner = await start(workflow)
    assert (await run(runner, said("x")))[-1].output == {"left": "L", "right": "R"}


async def test_workflows_nest() -> None:
    inner = Workflow(name="inner", edges=[(START, upper)])
    outer = Workflow(name="outer", edges=[(START, inner, exclaim)])
    runner = await start(outer)
    events = await run(runner, said("hi"))
    assert events[-1].output == "HI!"
    assert "outer@1/inner@1/upper@1" in [e.node_info.path for e in events]


flaky_calls = collections.Counter[str]()


@node(retry_config=RetryConfig(max_attempts=3, initial_delay=0, jitter=0))
def flaky(node_input: str) -> str:
    flaky_calls["flaky"] += 1
    if flaky_calls["flaky"] < 3:
        raise ConnectionError("try again")
    return "ok"


async def test_a_failing_node_is_retried_then_the_workflow_goes_on() -> None:
    flaky_calls.clear()
    runner = await start(Workflow(name="retry", edges=[(START, flaky)]))
    events = await run(runner, said("x"))
    assert [e.error_code for e in events if e.error_code] == ["ConnectionError"] * 2
    assert events[-1].output == "ok"


@node(retry_config=RetryConfig(max_attempts=2, initial_delay=0, jitter=0))
def broken(node_input: str) -> str:
    raise ValueError("always")


async def test_exhausted_retries_stop_the_workflow_and_raise_to_the_caller() -> None:
    runner = await start(Workflow(name="stop", edges=[(START, broken, upper)]))
    events, error = await run_failing(runner, said("x"))
    assert isinstance(error, ValueError) and str(error) == "always"
    # One error event per attempt, at the node's path, as ADK writes them; each committed.
    assert [(e.node_info.path, e.error_code, e.error_message) for e in events] == [
        ("stop@1/broken@1", "ValueError", "always")
    ] * 2
    session = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    assert session is not None and [e.error_code for e in session.events[1:]] == ["ValueError"] * 2
    assert ran["upper"] == 0


@node(retry_config=RetryConfig(max_attempts=3, initial_delay=0, jitter=0, exceptions=["KeyError"]))
def picky(node_input: str) -> str:
    flaky_calls["picky"] += 1
    raise ConnectionError("not retried")


async def test_retry_exceptions_are_named_as_strings_and_others_fail_at_once() -> None:
    assert RetryConfig(exceptions=[ValueError, "KeyError"]).exceptions == ["ValueError", "KeyError"]
    assert RetryConfig(exceptions=["LookupError"]).retries(KeyError("x"))  # subclasses count
    flaky_calls.clear()
    runner = await start(Workflow(name="picky", edges=[(START, picky)]))
    _, error = await run_failing(runner, said("x"))
    assert isinstance(error, ConnectionError) and flaky_calls["picky"] == 1


def draft(node_input: str) -> str:
    ran["draft"] += 1
    return f"Dear team, {node_input}"


def review(node_input: str):  # type: ignore[no-untyped-def]
    ran["review"] += 1
    yield RequestInput(interrupt_id="review-1", message=f"Approve? {node_input}")


def decide(node_input: str) -> str:
    ran["decide"] += 1
    return f"decision: {node_input}"


async def test_an_input_request_pauses_and_the_answer_resumes_without_rerunning() -> None:
    runner = await start(Workflow(name="mail", edges=[(START, draft, review, decide)]))
    paused = await run(runner, said("hello"))
    request = paused[-1]
    assert request.long_running_tool_ids == {"review-1"}
    assert request.get_function_calls()[0].args["message"] == "Approve? Dear team, hello"
    resumed = await run(runner, answer("review-1", "approved"))
    assert resumed[-1].output == "decision: approved"
    assert resumed[-1].invocation_id == paused[-1].invocation_id
    assert ran == {"draft": 1, "review": 1, "decide": 1}  # nothing completed ran twice


async def test_resume_works_from_a_fresh_store_object(tmp_path: Path) -> None:
    ran.clear()
    path = tmp_path / "sessions.db"
    workflow = Workflow(name="mail", edges=[(START, draft, review, decide)])
    first = Runner(
        app_name=APP,
        agent=workflow,
        session_service=SqliteSessionService(path),
        auto_create_session=True,
    )
    await run(first, said("hello"))
    await first.session_service.close()
    second = Runner(app_name=APP, agent=workflow, session_service=SqliteSessionService(path))
    resumed = await run(second, answer("review-1", "approved"))
    assert resumed[-1].output == "decision: approved"
    assert ran == {"draft": 1, "review": 1, "decide": 1}
    await second.session_service.close()


def ask_amount(node_input: str):  # type: ignore[no-untyped-def]
    yield RequestInput(
        interrupt_id="amount-1",
        message="How much?",
        response_schema={"type": "integer", "minimum": 1},
    )


def double(node_input: int) -> int:
    ran["double"] += 1
    return node_input * 2


async def test_an_answer_that_breaks_the_response_schema_keeps_the_node_waiting() -> None:
    runner = await start(Workflow(name="pay", edges=[(START, ask_amount, double)]))
    await run(runner, said("pay"))
    before = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    with pytest.raises(InvalidAnswerError, match=r"'amount-1'.*integer|integer.*'amount-1'"):
        await run(runner, answer("amount-1", "lots"))
    after = await runner.session_service.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    assert after.revision == before.revision  # the refused answer was not stored
    assert ran["double"] == 0
    accepted = await run(runner, answer("amount-1", 5))
    assert accepted[-1].output == 10 and ran["double"] == 1


@node(rerun_on_resume=True)
def confirm(node_input: str, ctx):  # type: ignore[no-untyped-def]
    ran["confirm"] += 1
    if "ok-1" in ctx.resume_inputs:
        yield f"confirmed {ctx.resume_inputs['ok-1']} for {node_input}"
        return
    yield RequestInput(interrupt_id="ok-1", message="Sure?")


async def test_rerun_on_resume_runs_the_node_again_with_the_answer() -> None:
    runner = await start(Workflow(name="c", edges=[(START, upper, confirm)]))
    await run(runner, said("order"))
    done = await run(runner, answer("ok-1", "yes"))
    assert done[-1].output == "confirmed yes for ORDER"
    assert ran == {"upper": 1, "confirm": 2}  # upper finished before: not run again


def split(node_input: str) -> list[str]:
    return node_input.split(",")


async def shout(node_input: str) -> str:
    import asyncio

    ran[f"shout:{node_input}"] += 1
    await asyncio.sleep(0.01 if node_input == "a" else 0)  # finishes last, stays first
    if node_input == "ask":
        return None  # type: ignore[return-value]
    return node_input.upper()


def shout_or_ask(node_input: str):  # type: ignore[no-untyped-def]
    ran[f"item:{node_input}"] += 1
    if node_input == "ask":
        yield RequestInput(interrupt_id="item-ask", message="value?")
        return
    yield node_input.upper()


async def test_a_parallel_node_runs_each_item_and_keeps_input_order() -> None:
    from cairn.workflow import ParallelNode

    each = ParallelNode(name="each", node=shout)
    runner = await start(Workflow(name="p", edges=[(START, split, each)]))
    events = await run(runner, said("a,b,c"))
    assert events[-1].output == ["A", "B", "C"]
    paths = {e.node_info.path for e in events}
    assert {"p@1/each@1/shout@1", "p@1/each@1/shout@2", "p@1/each@1/shout@3"} <= paths


async def test_a_waiting_item_resumes_without_rerunning_the_others() -> None:
    from cairn.workflow import ParallelNode

    each = ParallelNode(name="each", node=shout_or_ask)
    runner = await start(Workflow(name="p", edges=[(START, split, each)]))
    paused = await run(runner, said("x,ask,y"))
    assert [e.long_running_tool_ids for e in paused if e.long_running_tool_ids] == [{"item-ask"}]
    assert all("p@1" not in (e.node_info.output_for or []) for e in paused)  # not finished
    done = await run(runner, answer("item-ask", "Z"))
    assert done[-1].output == ["X", "Z", "Y"]
    assert ran["item:x"] == ran["item:y"] == ran["item:ask"] == 1


class Order(BaseModel):
    item: str
    quantity: int


class Receipt(BaseModel):
    total: float


class OrderState(BaseModel):
    last_item: str


@node(input_schema=Order, output_schema=Receipt, state_schema=OrderState)
def price(node_input: Order, ctx) -> dict:  # type: ignore[no-untyped-def]
    ctx.state["last_item"] = node_input.item
    return {"total": node_input.quantity * 2.5}


def parse(node_input: str) -> dict:  # type: ignore[type-arg]
    item, quantity = node_input.split(":")
    return {"item": item, "quantity": quantity}


async def test_node_schemas_parse_input_check_output_and_state() -> None:
    runner = await start(Workflow(name="shop", edges=[(START, parse, price)]))
    assert (await run(runner, said("tea:4")))[-1].output == {"total": 10.0}
    failed, error = await run_failing(runner, said("tea:many"))
    assert "input of node 'price' does not match Order: quantity" in str(error)
    assert failed[-1].error_code == "ValueError" and failed[-1].node_info.path == "shop@1/price@1"


@node(state_schema=OrderState)
def sloppy(node_input: str, ctx) -> str:  # type: ignore[no-untyped-def]
    ctx.state["surprise"] = 1
    return "x"


async def test_undeclared_state_keys_are_refused() -> None:
    runner = await start(Workflow(name="s", edges=[(START, sloppy)]))
    events, _ = await run_failing(runner, said("x"))
    assert "wrote state key 'surprise'" in events[-1].error_message
    session = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    assert session is not None and "surprise" not in session.state
