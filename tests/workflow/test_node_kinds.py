"""ADK 2.x node kinds and options: nodes and workflows as an LlmAgent's tools, parallel
workers, Node subclasses, node() on anything node-like, parameter binding, request_input,
a workflow's state_schema."""

from __future__ import annotations

import asyncio
import collections
import json
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from pydantic import BaseModel
from tests.support.workflow_runners import SESSION, STORES, USER, answer, run, runner_on, said

from cairn import Event, LlmAgent, Runner
from cairn.sessions import StateSchemaError
from cairn.testing import Call, ScriptedLlm
from cairn.tools import FunctionTool, request_input
from cairn.workflow import (
    START,
    AgentNode,
    FunctionNode,
    Node,
    ParallelNode,
    RequestInput,
    ToolNode,
    Workflow,
    node,
)
from cairn.workflow.node_tool import NodeTool

APP = "kinds"
ran: collections.Counter[str] = collections.Counter()


@pytest.fixture(params=STORES)
def make_runner(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    async def make(agent: Any) -> Runner:
        ran.clear()
        return await runner_on(request.param, agent, APP, tmp_path)

    return make


def responses(events: list[Event]) -> dict[str, Any]:
    return {r.name or "": r.response for e in events for r in e.get_function_responses()}


# -- nodes and workflows as tools -----------------------------------------------------------


class Order(BaseModel):
    item: str
    quantity: int


def price(item: str, quantity: int) -> dict[str, Any]:
    """Prices an order."""
    ran["price"] += 1
    return {"item": item, "total": quantity * 3}


def check_stock(node_input: Order) -> dict[str, Any]:
    ran["check_stock"] += 1
    return {"item": node_input.item, "in_stock": node_input.quantity <= 5}


def label(node_input: dict[str, Any]) -> str:
    return f"{node_input['item']}: {'ok' if node_input['in_stock'] else 'backorder'}"


def stock_workflow() -> Workflow:
    return Workflow(
        name="stock", description="Checks the stock.", edges=[(START, check_stock, label)]
    )


async def test_a_node_and_a_workflow_are_called_as_tools(make_runner: Any) -> None:
    model = ScriptedLlm(
        script=[
            Call("price", id="c1", item="apple", quantity=3),
            Call("stock", id="c2", item="apple", quantity=3),
            "9, in stock",
        ]
    )
    clerk = LlmAgent(name="clerk", model=model, tools=[FunctionNode(func=price), stock_workflow()])
    runner = await make_runner(clerk)
    events = await run(runner, said("three apples"))
    assert responses(events) == {
        "price": {"item": "apple", "total": 9},
        "stock": {"result": "apple: ok"},
    }
    assert events[-1].content is not None and events[-1].content.parts[0].text == "9, in stock"
    declared = {
        d.name: d.parameters_json_schema
        for tool in model.requests[0].config.tools or []
        for d in tool.function_declarations or []
    }
    assert declared["price"]["required"] == ["item", "quantity"]
    assert declared["stock"]["properties"].keys() == {"item", "quantity"}  # from Order
    runs = {e.node_info.path: (e.author, e.branch) for e in events if e.output is not None}
    assert runs["clerk@1/price@c1"] == ("price", "price@c1")
    assert runs["clerk@1/stock@c2/check_stock@1"] == ("stock", "stock@c2")
    assert ran == {"price": 1, "check_stock": 1}


async def test_bad_tool_arguments_come_back_to_the_model(make_runner: Any) -> None:
    model = ScriptedLlm(script=[Call("price", item="apple", quantity="many"), "sorry"])
    runner = await make_runner(LlmAgent(name="clerk", model=model, tools=[node(price)]))
    events = await run(runner, said("apples"))
    error = responses(events)["price"]["error"]
    assert "quantity" in error and "Call it again" in error
    assert ran["price"] == 0


async def test_a_node_tool_that_waits_leaves_the_call_open_until_answered(
    make_runner: Any,
) -> None:
    def approve(request: str):  # type: ignore[no-untyped-def]
        ran["approve"] += 1
        yield RequestInput(interrupt_id="boss", message=f"approve {request}?")

    model = ScriptedLlm(script=[Call("approve", id="c1", request="a raise"), "approved"])
    runner = await make_runner(LlmAgent(name="clerk", model=model, tools=[node(approve)]))
    paused = await run(runner, said("ask the boss"))
    assert [e.long_running_tool_ids for e in paused if e.long_running_tool_ids] == [{"boss"}]
    assert "approve" not in responses(paused)  # the call is still open
    done = await run(runner, answer("boss", "yes"))
    assert responses(done)["approve"] == {"result": "yes"}
    assert done[-1].content is not None and done[-1].content.parts[0].text == "approved"
    assert ran["approve"] == 1
    last_request = model.requests[-1].contents[-1]
    assert last_request.parts[0].function_response.response == {"result": "yes"}


def test_a_node_whose_input_is_not_declared_cannot_be_a_tool() -> None:
    class Opaque(Node):
        async def run_node_impl(self, *, ctx: Any, node_input: Any) -> Any:
            yield node_input

    with pytest.raises(ValueError, match="input_schema"):
        NodeTool(Opaque(name="opaque"))
    typed = NodeTool(Opaque(name="typed", input_schema=Order))
    schema = typed.declaration().parameters_json_schema
    assert schema is not None and set(schema["properties"]) == {"item", "quantity"}


def test_a_primitive_input_is_the_request_argument() -> None:
    def shout(node_input: str) -> str:
        return node_input.upper()

    declared = NodeTool(node(shout)).declaration().parameters_json_schema
    assert declared is not None and declared["required"] == ["request"]


# -- parallel workers ------------------------------------------------------------------------


def split(node_input: Any) -> list[int]:
    return [1, 2, 3]


async def test_a_parallel_worker_runs_once_per_item_on_branches(make_runner: Any) -> None:
    started: set[int] = set()
    everyone = asyncio.Event()

    async def square(node_input: int) -> int:
        started.add(node_input)
        if len(started) == 3:
            everyone.set()
        await everyone.wait()  # only ends if all three run at once
        return node_input * node_input

    worker = node(square, parallel_worker=True)
    assert isinstance(worker, ParallelNode) and worker.name == "square"
    runner = await make_runner(Workflow(name="wf", edges=[(START, split, worker)]))
    events = await run(runner, said("go"))
    assert events[-1].output == [1, 4, 9]
    items = {e.node_info.path: e.branch for e in events if e.node_info.path.count("/") == 2}
    assert items == {
        "wf@1/square@1/square@1": "square@1",
        "wf@1/square@1/square@2": "square@2",
        "wf@1/square@1/square@3": "square@3",
    }


async def test_max_parallel_workers_bounds_the_items_running_at_once(make_runner: Any) -> None:
    running = peak = 0

    async def slow_square(node_input: int) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        for _ in range(5):
            await asyncio.sleep(0)  # let the others start, if they may
        running -= 1
        return node_input * node_input

    worker = node(slow_square, parallel_worker=True, max_parallel_workers=2)
    runner = await make_runner(Workflow(name="wf", edges=[(START, split, worker)]))
    events = await run(runner, said("go"))
    assert events[-1].output == [1, 4, 9]
    assert peak == 2


async def test_a_node_subclass_can_be_a_parallel_worker(make_runner: Any) -> None:
    class Tag(Node):
        prefix: str

        async def run_node_impl(self, *, ctx: Any, node_input: Any) -> Any:
            ran[f"tag {node_input}"] += 1
            if node_input == 2 and not ctx.resume_inputs:
                yield RequestInput(interrupt_id="two", message="tag for 2?")
                return
            yield f"{self.prefix}{ctx.resume_inputs.get('two', node_input)}"

    tag = Tag(name="tag", prefix="#", parallel_worker=True, rerun_on_resume=True)
    runner = await make_runner(Workflow(name="wf", edges=[(START, split, tag)]))
    paused = await run(runner, said("go"))
    assert [e.long_running_tool_ids for e in paused if e.long_running_tool_ids] == [{"two"}]
    done = await run(runner, answer("two", "TWO"))
    assert done[-1].output == ["#1", "#TWO", "#3"]
    assert ran == {"tag 1": 1, "tag 2": 2, "tag 3": 1}  # only the waiting item ran again


def test_max_parallel_workers_needs_parallel_worker() -> None:
    with pytest.raises(ValueError, match="parallel_worker=True"):
        node(split, max_parallel_workers=2)
    with pytest.raises(ValueError, match="parallel_worker=True"):
        Node(name="n", max_parallel_workers=2)
    with pytest.raises(ValueError, match="1 or more"):
        node(split, parallel_worker=True, max_parallel_workers=0)


# -- node() on anything node-like, parameter binding ---------------------------------------


def test_node_wraps_nodes_agents_and_tools() -> None:
    base = node(split)
    renamed = node(base, name="halves", timeout=5)
    assert (renamed.name, renamed.timeout, base.name, base.timeout) == ("halves", 5, "split", None)
    agent = LlmAgent(name="helper", model=ScriptedLlm(script=[]))
    assert isinstance(node(agent), AgentNode) and node(agent).name == "helper"
    wrapped = node(FunctionTool(price), name="pricing")
    assert isinstance(wrapped, ToolNode) and wrapped.name == "pricing"
    with pytest.raises(TypeError, match="function, a node, an agent or a tool"):
        node(42)


async def test_parameters_bound_from_a_dict_input(make_runner: Any) -> None:
    def order() -> dict[str, Any]:
        return {"item": "pear", "quantity": 2}

    priced = node(price, parameter_binding="node_input")
    runner = await make_runner(Workflow(name="wf", edges=[(START, order, priced)]))
    events = await run(runner, said("go"))
    assert events[-1].output == {"item": "pear", "total": 6}


# -- request_input, a tool the model calls --------------------------------------------------


async def test_the_model_asks_the_user_with_request_input(make_runner: Any) -> None:
    model = ScriptedLlm(
        script=[Call("adk_request_input", id="q1", message="which size?"), "large it is"]
    )
    runner = await make_runner(LlmAgent(name="shop", model=model, tools=[request_input]))
    paused = await run(runner, said("a coffee"))
    assert [e.long_running_tool_ids for e in paused if e.long_running_tool_ids] == [{"q1"}]
    done = await run(runner, answer("q1", "large"))
    assert done[-1].content is not None and done[-1].content.parts[0].text == "large it is"
    seen = model.requests[-1].contents[-1].parts[0].function_response
    assert seen is not None and seen.response == {"result": "large"}


# -- a workflow's state_schema ---------------------------------------------------------------


class Cart(BaseModel):
    items: int = 0


def test_a_state_parameter_the_schema_lacks_is_refused_when_built() -> None:
    def total(items: int, discount: float) -> float:
        return items * (1 - discount)

    with pytest.raises(StateSchemaError, match="'discount'") as raised:
        Workflow(name="shop", state_schema=Cart, edges=[(START, total)])
    assert isinstance(raised.value, TypeError)  # as ADK's


async def test_a_write_the_workflow_schema_lacks_fails_the_node(make_runner: Any) -> None:
    def add(ctx: Any) -> str:
        ctx.state["items"] = 1
        ctx.state["coupon"] = "FREE"
        return "added"

    runner = await make_runner(Workflow(name="shop", state_schema=Cart, edges=[(START, add)]))
    seen: list[Event] = []
    with pytest.raises(StateSchemaError, match="'coupon'"):
        async for event in runner.run_async(
            user_id=USER, session_id=SESSION, new_message=said("x")
        ):
            seen.append(event)
    assert seen[-1].error_code == "StateSchemaError"
    session = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    assert session is not None and "items" not in session.state  # nothing of it stored
    assert json.dumps(session.state) == "{}"


# -- require_confirmation ----------------------------------------------------------------------


def approval(confirmed: bool, run: str = "wf@1/remove@1") -> types.Content:
    response = types.FunctionResponse(
        id=f"wf_tool_confirmation:{run}",
        name="adk_request_input",
        response={"confirmed": confirmed},
    )
    return types.Content(role="user", parts=[types.Part(function_response=response)])


@node(require_confirmation=True)
def remove(node_input: str) -> str:
    ran["remove"] += 1
    return f"removed {node_input}"


@pytest.mark.parametrize(("confirmed", "output"), [(True, "removed a.txt"), (False, None)])
async def test_a_node_that_requires_confirmation_runs_only_once_approved(
    make_runner: Any, confirmed: bool, output: str | None
) -> None:
    assert remove.rerun_on_resume  # node() sets it
    runner = await make_runner(Workflow(name="wf", edges=[(START, remove)]))
    paused = await run(runner, said("a.txt"))
    call = paused[-1].get_function_calls()[0]
    assert call.id == "wf_tool_confirmation:wf@1/remove@1"
    assert (call.args or {})["payload"] == {"tool_name": "remove", "args": {"node_input": "a.txt"}}
    assert ran["remove"] == 0
    done = await run(runner, approval(confirmed))
    expected = output if confirmed else {"error": "This tool call is rejected."}
    assert done[-1].output == expected
    assert ran["remove"] == (1 if confirmed else 0)


async def test_a_confirmation_predicate_decides_per_run(make_runner: Any) -> None:
    def big(amount: int) -> bool:
        return amount > 100

    @node(require_confirmation=big, parameter_binding="node_input")
    def pay(amount: int) -> str:
        ran["pay"] += 1
        return f"paid {amount}"

    def small() -> dict[str, int]:
        return {"amount": 5}

    runner = await make_runner(Workflow(name="wf", edges=[(START, small, pay)]))
    events = await run(runner, said("go"))
    assert events[-1].output == "paid 5" and ran["pay"] == 1  # no question asked


def test_require_confirmation_needs_rerun_on_resume() -> None:
    with pytest.raises(ValueError, match="rerun_on_resume=True"):
        FunctionNode(func=split, require_confirmation=True)


async def test_a_node_tool_of_an_agent_node_runs_under_the_agents_path(make_runner: Any) -> None:
    model = ScriptedLlm(script=[Call("price", id="c9", item="fig", quantity=1), "3"])
    clerk = LlmAgent(name="clerk", model=model, tools=[node(price)])
    runner = await make_runner(Workflow(name="shop", edges=[(START, clerk)]))
    events = await run(runner, said("one fig"))
    priced = next(e for e in events if e.output == {"item": "fig", "total": 3})
    assert priced.node_info.path == "shop@1/clerk@1/price@c9"
    assert events[-1].output == "3"
