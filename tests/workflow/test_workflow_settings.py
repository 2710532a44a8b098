"""A Workflow's own input_schema, output_schema, timeout and retry_config (ADK 2.x): the
whole workflow is checked, bounded and retried, at the root and nested in another."""

from __future__ import annotations

import asyncio
import collections
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from tests.support.workflow_runners import SESSION, STORES, USER, runner_on, said

from cairn import Event, LlmAgent, Runner
from cairn.testing import Call, ScriptedLlm
from cairn.workflow import START, NodeTimeoutError, RetryConfig, Workflow

WORKER = Path(__file__).resolve().parent / "settings_worker.py"
ROOT = Path(__file__).resolve().parents[2]
APP = "settings"
ran: collections.Counter[str] = collections.Counter()
NO_WAIT = {"initial_delay": 0, "jitter": 0}


class Order(BaseModel):
    item: str
    quantity: int


@pytest.fixture(params=STORES)
def make_runner(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    async def make(workflow: Workflow) -> Runner:
        ran.clear()
        return await runner_on(request.param, workflow, APP, tmp_path)

    return make


async def run(runner: Runner, text: str = "go") -> list[Event]:
    events: list[Event] = []
    async for event in runner.run_async(user_id=USER, session_id=SESSION, new_message=said(text)):
        events.append(event)
    return events


async def stored(runner: Runner) -> list[Event]:
    session = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    assert session is not None
    return session.events


def errors(events: list[Event]) -> list[tuple[str, str | None]]:
    return [(e.node_info.path, e.error_code) for e in events if e.error_code]


def prepare(node_input: Any) -> str:
    ran["prepare"] += 1
    return "prepared"


def flaky_until(successes_after: int) -> Any:
    def flaky(node_input: str) -> str:
        ran["flaky"] += 1
        if ran["flaky"] <= successes_after:
            raise ValueError(f"flaky failed ({ran['flaky']})")
        return f"{node_input} then done"

    return flaky


async def hang_first_time(node_input: Any) -> str:
    ran["hang"] += 1
    if ran["hang"] == 1:
        await asyncio.Event().wait()  # never set: only the workflow's timeout ends it
    return "in time"


# -- retry_config --------------------------------------------------------------------------


async def test_a_failed_workflow_runs_again_replaying_the_nodes_that_finished(
    make_runner: Any,
) -> None:
    workflow = Workflow(
        name="wf",
        edges=[(START, prepare, flaky_until(2))],
        retry_config=RetryConfig(max_attempts=3, **NO_WAIT),
    )
    runner = await make_runner(workflow)
    events = await run(runner)
    assert ran == {"prepare": 1, "flaky": 3}
    outputs = [e.output for e in events if "wf@1/flaky@1" in (e.node_info.output_for or [])]
    assert outputs == ["prepared then done"]
    # each failed attempt is in the log: the node's error and the workflow's
    assert (
        errors(await stored(runner))
        == [
            ("wf@1/flaky@1", "ValueError"),
            ("wf@1", "ValueError"),
        ]
        * 2
    )


async def test_a_workflow_out_of_attempts_raises_its_nodes_error(make_runner: Any) -> None:
    workflow = Workflow(
        name="wf",
        edges=[(START, prepare, flaky_until(5))],
        retry_config=RetryConfig(max_attempts=2, **NO_WAIT),
    )
    runner = await make_runner(workflow)
    with pytest.raises(ValueError, match=r"flaky failed \(2\)"):
        await run(runner)
    assert ran == {"prepare": 1, "flaky": 2}


async def test_only_the_listed_exceptions_retry_the_workflow(make_runner: Any) -> None:
    workflow = Workflow(
        name="wf",
        edges=[(START, flaky_until(5))],
        retry_config=RetryConfig(max_attempts=3, exceptions=[KeyError], **NO_WAIT),
    )
    runner = await make_runner(workflow)
    with pytest.raises(ValueError):
        await run(runner)
    assert ran == {"flaky": 1}


async def test_a_nested_workflow_is_retried_by_the_enclosing_one(make_runner: Any) -> None:
    inner = Workflow(
        name="inner",
        edges=[(START, prepare, flaky_until(1))],
        retry_config=RetryConfig(max_attempts=2, **NO_WAIT),
    )

    def after(node_input: str) -> str:
        return f"after {node_input}"

    runner = await make_runner(Workflow(name="outer", edges=[(START, inner, after)]))
    events = await run(runner)
    assert ran == {"prepare": 1, "flaky": 2}
    assert [e.output for e in events if e.node_info.path == "outer@1/after@1"] == [
        "after prepared then done"
    ]


# -- timeout -------------------------------------------------------------------------------


async def test_a_workflow_that_runs_too_long_fails_with_node_timeout_error(
    make_runner: Any,
) -> None:
    runner = await make_runner(Workflow(name="wf", edges=[(START, hang_first_time)], timeout=0.2))
    with pytest.raises(NodeTimeoutError) as raised:
        await run(runner)
    assert (raised.value.node_name, raised.value.timeout) == ("wf", 0.2)
    assert errors(await stored(runner)) == [("wf@1", "NodeTimeoutError")]


async def test_a_timed_out_workflow_is_retried(make_runner: Any) -> None:
    workflow = Workflow(
        name="wf",
        edges=[(START, hang_first_time)],
        timeout=0.2,
        retry_config=RetryConfig(max_attempts=2, **NO_WAIT),
    )
    runner = await make_runner(workflow)
    events = await run(runner)
    assert ran == {"hang": 2}
    assert "in time" in [e.output for e in events]


async def test_a_nested_workflow_times_out_as_a_node(make_runner: Any) -> None:
    inner = Workflow(name="inner", edges=[(START, hang_first_time)], timeout=0.2)
    runner = await make_runner(Workflow(name="outer", edges=[(START, inner)]))
    with pytest.raises(NodeTimeoutError, match="'inner'"):
        await run(runner)
    assert errors(await stored(runner)) == [("outer@1/inner@1", "NodeTimeoutError")]


# -- input_schema and output_schema --------------------------------------------------------


def describe(node_input: dict[str, Any]) -> str:
    ran["describe"] += 1
    return f"{node_input['quantity']} x {node_input['item']}"


async def test_the_user_message_is_checked_against_the_input_schema(make_runner: Any) -> None:
    workflow = Workflow(name="wf", edges=[(START, describe)], input_schema=Order)
    runner = await make_runner(workflow)
    events = await run(runner, '{"item": "tea", "quantity": "2"}')
    assert "2 x tea" in [e.output for e in events]


async def test_a_message_that_does_not_fit_the_input_schema_runs_nothing(
    make_runner: Any,
) -> None:
    runner = await make_runner(Workflow(name="wf", edges=[(START, describe)], input_schema=Order))
    with pytest.raises(ValueError, match=r"input of workflow 'wf' does not match Order"):
        await run(runner, "two teas please")
    assert ran == {}
    assert errors(await stored(runner)) == [("wf@1", "ValueError")]


async def test_a_nested_workflow_checks_its_input_from_the_node_before(make_runner: Any) -> None:
    def order(node_input: Any) -> dict[str, Any]:
        return {"item": "tea", "quantity": "3"}

    inner = Workflow(name="inner", edges=[(START, describe)], input_schema=Order)
    runner = await make_runner(Workflow(name="outer", edges=[(START, order, inner)]))
    events = await run(runner)
    assert "3 x tea" in [e.output for e in events]

    def bad(node_input: Any) -> dict[str, Any]:
        return {"item": "tea"}

    runner = await make_runner(Workflow(name="outer2", edges=[(START, bad, inner)]))
    with pytest.raises(ValueError, match="quantity"):
        await run(runner)
    assert ran == {}


async def test_the_workflow_output_is_checked_and_stored_as_json(make_runner: Any) -> None:
    def make_order(node_input: Any) -> dict[str, Any]:
        return {"item": "tea", "quantity": "4"}

    inner = Workflow(name="inner", edges=[(START, make_order)], output_schema=Order)

    def after(node_input: dict[str, Any]) -> int:
        return node_input["quantity"] + 1

    runner = await make_runner(Workflow(name="outer", edges=[(START, inner, after)]))
    events = await run(runner)
    assert [e.output for e in events if e.node_info.path == "outer@1/after@1"] == [5]
    recorded = [e for e in await stored(runner) if e.node_info.path == "outer@1/inner@1"]
    assert [e.output for e in recorded if e.output is not None] == [{"item": "tea", "quantity": 4}]

    def wrong(node_input: Any) -> dict[str, Any]:
        return {"item": "tea", "quantity": "many"}

    root = Workflow(name="wf", edges=[(START, wrong)], output_schema=Order)
    runner = await make_runner(root)
    with pytest.raises(ValueError, match=r"output of workflow 'wf' does not match Order"):
        await run(runner)


async def test_a_workflow_tool_takes_its_input_schema_as_its_arguments(
    make_runner: Any,
) -> None:
    orders = Workflow(
        name="orders",
        description="Describes an order.",
        edges=[(START, describe)],
        input_schema=Order,
        timeout=30,
    )
    model = ScriptedLlm(script=[Call("orders", id="c1", item="tea", quantity=2), "2 teas"])
    runner = await make_runner(LlmAgent(name="clerk", model=model, tools=[orders]))
    events = await run(runner, "two teas")
    answers = [r.response for e in events for r in e.get_function_responses()]
    assert answers == [{"result": "2 x tea"}]
    declared = [
        d.parameters_json_schema
        for tool in model.requests[0].config.tools or []
        for d in tool.function_declarations or []
    ]
    assert declared[0]["properties"].keys() == {"item", "quantity"}


# -- across processes, on SQLite -----------------------------------------------------------


def worker(store: Path, log: Path, mode: str, plan: str, attempts: int = 3) -> str:
    env = {**os.environ, "SETTINGS_LOG": str(log), "FLAKY": plan}
    done = subprocess.run(
        [sys.executable, str(WORKER), str(store), mode, str(attempts)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
        check=False,
    )
    if "crash" in mode:
        assert done.returncode == 17, done.stderr
    else:
        assert done.returncode == 0, done.stderr
    return done.stdout


def bodies(log: Path) -> collections.Counter[str]:
    return collections.Counter(log.read_text().splitlines())


def test_a_paused_workflow_with_settings_resumes_in_a_new_process(tmp_path: Path) -> None:
    store, log = tmp_path / "s.db", tmp_path / "ran.log"
    assert "PAUSED" in worker(store, log, "start", "fail,ask")
    assert "OUTPUT 2 x tea: yes" in worker(store, log, "answer", "fail,ask")
    assert bodies(log) == {"first": 1, "flaky": 2}


def test_a_retry_cut_short_by_a_crash_goes_on_counting_attempts(tmp_path: Path) -> None:
    store, log = tmp_path / "s.db", tmp_path / "ran.log"
    # attempt 1 fails, attempt 2 is killed; the new process goes on with attempt 2
    worker(store, log, "start-crash", "fail,crash,ok", attempts=3)
    assert "OUTPUT 2 x tea: ok" in worker(store, log, "continue", "fail,crash,ok", attempts=3)
    assert bodies(log) == {"first": 1, "flaky": 3}


def test_a_crashed_retry_does_not_get_extra_attempts(tmp_path: Path) -> None:
    store, log = tmp_path / "s.db", tmp_path / "ran.log"
    worker(store, log, "start-crash", "fail,crash,fail,ok", attempts=2)
    # the killed attempt was the second (and last): its rerun failing ends the workflow
    assert "FAILED flaky failed" in worker(store, log, "continue", "fail,crash,fail,ok", attempts=2)
    assert bodies(log) == {"first": 1, "flaky": 3}
