"""ctx.run_node: dynamic nodes get run ids from their parent's path, so a resumed parent gets
each finished child's recorded output back instead of running it again."""

from __future__ import annotations

import asyncio
import collections
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.workflow_runners import SESSION, STORES, USER, answer, run, runner_on, said

from cairn import Event, InMemoryRunner, Runner
from cairn.workflow import (
    START,
    DynamicNodeFailError,
    Node,
    NodeTimeoutError,
    RequestInput,
    RetryConfig,
    Workflow,
    node,
)

WORKER = Path(__file__).resolve().parent / "dynamic_worker.py"
ROOT = Path(__file__).resolve().parents[2]
APP = "dyn"
ran: collections.Counter[str] = collections.Counter()


@pytest.fixture(params=STORES)
def make_runner(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    async def make(workflow: Workflow) -> Runner:
        ran.clear()
        return await runner_on(request.param, workflow, APP, tmp_path)

    return make


def double(node_input: int) -> int:
    ran[f"double {node_input}"] += 1
    return node_input * 2


def ask(node_input: Any):  # type: ignore[no-untyped-def]
    ran["ask"] += 1
    yield RequestInput(interrupt_id="more", message="how much more?")


@node(rerun_on_resume=True)
async def orchestrate(ctx: Any, node_input: Any) -> dict[str, Any]:
    ran["orchestrate"] += 1
    total = 0
    for number in (1, 2, 3):
        total += await ctx.run_node(double, node_input=number)
    more = await ctx.run_node(ask)
    total += await ctx.run_node(double, node_input=int(more))
    return {"total": total}


def paths(events: list[Event]) -> list[str]:
    return [e.node_info.path for e in events if e.output is not None]


async def test_children_get_counted_run_ids_under_the_parent_path(make_runner: Any) -> None:
    @node(rerun_on_resume=True)
    async def plan(ctx: Any, node_input: Any) -> str:
        first = await ctx.run_node(double, node_input=1)
        second = await ctx.run_node(double, node_input=first)
        return await ctx.run_node(lambda_free_describe, node_input=second, run_id="summary")

    runner = await make_runner(Workflow(name="wf", edges=[(START, plan)]))
    events = await run(runner, said("go"))
    assert paths(events) == [
        "wf@1/plan@1/double@1",
        "wf@1/plan@1/double@2",
        "wf@1/plan@1/lambda_free_describe@summary",
        "wf@1/plan@1",
    ]
    assert events[-1].output == "total 4"
    child = events[0]
    assert child.author == "wf" and child.node_info.output_for == ["wf@1/plan@1/double@1"]


def lambda_free_describe(node_input: int) -> str:
    return f"total {node_input}"


async def test_a_resumed_parent_reuses_finished_children(make_runner: Any) -> None:
    runner = await make_runner(Workflow(name="wf", edges=[(START, orchestrate)]))
    paused = await run(runner, said("go"))
    assert [e.long_running_tool_ids for e in paused if e.long_running_tool_ids] == [{"more"}]
    assert paused[-1].node_info.path == "wf@1/orchestrate@1/ask@1"
    done = await run(runner, answer("more", "10"))
    assert done[-1].output == {"total": 32}
    # The parent ran again; its finished children did not, and the new child got @4.
    assert ran == {
        "orchestrate": 2,
        "double 1": 1,
        "double 2": 1,
        "double 3": 1,
        "ask": 1,
        "double 10": 1,
    }
    assert "wf@1/orchestrate@1/double@4" in paths(done)
    assert "wf@1/orchestrate@1/double@1" not in paths(done)  # replayed: nothing new written


async def test_concurrent_children_keep_their_call_order(make_runner: Any) -> None:
    @node(rerun_on_resume=True)
    async def fan(ctx: Any, node_input: Any) -> list[int]:
        return list(await asyncio.gather(*(ctx.run_node(double, node_input=n) for n in (5, 6))))

    runner = await make_runner(Workflow(name="wf", edges=[(START, fan)]))
    events = await run(runner, said("go"))
    outputs = {e.node_info.path: e.output for e in events if e.output is not None}
    assert outputs["wf@1/fan@1/double@1"] == 10 and outputs["wf@1/fan@1/double@2"] == 12
    assert events[-1].output == [10, 12]


async def test_use_as_output_makes_the_child_output_the_parents(make_runner: Any) -> None:
    @node(rerun_on_resume=True)
    async def delegate(ctx: Any, node_input: Any) -> None:
        await ctx.run_node(double, node_input=21, use_as_output=True)

    def after(node_input: int) -> str:
        return f"got {node_input}"

    runner = await make_runner(Workflow(name="wf", edges=[(START, delegate, after)]))
    events = await run(runner, said("go"))
    child = next(e for e in events if e.node_info.path == "wf@1/delegate@1/double@1")
    assert child.node_info.output_for == ["wf@1/delegate@1/double@1", "wf@1/delegate@1"]
    assert not any(e.node_info.path == "wf@1/delegate@1" for e in events)  # no second record
    assert events[-1].output == "got 42"


async def test_a_delegating_parent_is_not_run_again_on_resume(make_runner: Any) -> None:
    @node(rerun_on_resume=True)
    async def delegate(ctx: Any, node_input: Any) -> None:
        ran["delegate"] += 1
        await ctx.run_node(double, node_input=4, use_as_output=True)

    def gate(node_input: int):  # type: ignore[no-untyped-def]
        yield RequestInput(interrupt_id="gate", message=f"ok with {node_input}?")

    runner = await make_runner(Workflow(name="wf", edges=[(START, delegate, gate)]))
    await run(runner, said("go"))
    done = await run(runner, answer("gate", "fine"))
    assert done[-1].output == "fine"
    assert ran["delegate"] == 1 and ran["double 4"] == 1


async def test_nested_dynamic_children_get_nested_paths(make_runner: Any) -> None:
    @node(rerun_on_resume=True)
    async def inner(ctx: Any, node_input: int) -> int:
        return int(await ctx.run_node(double, node_input=node_input))

    @node(rerun_on_resume=True)
    async def outer(ctx: Any, node_input: Any) -> int:
        return int(await ctx.run_node(inner, node_input=5)) + int(
            await ctx.run_node(inner, node_input=6)
        )

    runner = await make_runner(Workflow(name="wf", edges=[(START, outer)]))
    events = await run(runner, said("go"))
    assert paths(events) == [
        "wf@1/outer@1/inner@1/double@1",
        "wf@1/outer@1/inner@1",
        "wf@1/outer@1/inner@2/double@1",
        "wf@1/outer@1/inner@2",
        "wf@1/outer@1",
    ]
    assert events[-1].output == 22


async def test_a_workflow_and_a_class_node_run_dynamically(make_runner: Any) -> None:
    class Shout(Node):
        async def run_node_impl(self, *, ctx: Any, node_input: Any) -> Any:
            yield str(node_input).upper()

    sub = Workflow(name="sub", edges=[(START, double)])

    @node(rerun_on_resume=True)
    async def plan(ctx: Any, node_input: Any) -> str:
        number = await ctx.run_node(sub, node_input=4)
        return str(await ctx.run_node(Shout(name="shout"), node_input=f"n{number}"))

    runner = await make_runner(Workflow(name="wf", edges=[(START, plan)]))
    events = await run(runner, said("go"))
    assert events[-1].output == "N8"
    inner = next(e for e in events if e.node_info.path == "wf@1/plan@1/sub@1/double@1")
    assert inner.author == "sub" and inner.output == 8


async def test_a_failing_child_raises_in_the_parent_which_may_catch_it(make_runner: Any) -> None:
    def boom(node_input: Any) -> None:
        raise ValueError(f"bad {node_input}")

    @node(rerun_on_resume=True)
    async def careful(ctx: Any, node_input: Any) -> str:
        try:
            await ctx.run_node(boom, node_input=1)
        except DynamicNodeFailError as failed:
            return f"{type(failed.error).__name__} at {failed.error_node_path}"
        return "not reached"

    @node(rerun_on_resume=True)
    async def careless(ctx: Any, node_input: Any) -> None:
        await ctx.run_node(boom, node_input=2)

    runner = await make_runner(Workflow(name="wf", edges=[(START, careful)]))
    events = await run(runner, said("go"))
    assert events[-1].output == "ValueError at wf@1/careful@1/boom@1"
    assert [e.error_code for e in events if e.error_code] == ["ValueError"]

    runner = await make_runner(Workflow(name="wf2", edges=[(START, careless)]))
    seen: list[Event] = []
    with pytest.raises(ValueError, match="bad 2"):  # the child's own error, as in ADK
        async for event in runner.run_async(
            user_id=USER, session_id=SESSION, new_message=said("x")
        ):
            seen.append(event)
    assert [(e.node_info.path, e.error_code) for e in seen] == [
        ("wf2@1/careless@1/boom@1", "ValueError")
    ]


async def test_a_retried_parent_replays_the_children_its_failed_attempt_finished(
    make_runner: Any,
) -> None:
    @node(rerun_on_resume=True, retry_config=RetryConfig(max_attempts=2, initial_delay=0))
    async def flaky(ctx: Any, node_input: Any) -> int:
        ran["flaky"] += 1
        first = int(await ctx.run_node(double, node_input=7))
        if ran["flaky"] == 1:
            raise RuntimeError("first attempt fails after its child")
        return first

    runner = await make_runner(Workflow(name="wf", edges=[(START, flaky)]))
    events = await run(runner, said("go"))
    assert events[-1].output == 14
    assert ran["flaky"] == 2 and ran["double 7"] == 1


async def test_a_slow_node_fails_with_node_timeout_error(make_runner: Any) -> None:
    started = asyncio.Event()

    async def slow(node_input: Any) -> None:
        started.set()
        await asyncio.Event().wait()  # never set: only the timeout ends it

    runner = await make_runner(Workflow(name="wf", edges=[(START, node(slow, timeout=0.05))]))
    seen: list[Event] = []
    with pytest.raises(NodeTimeoutError) as raised:
        async for event in runner.run_async(
            user_id=USER, session_id=SESSION, new_message=said("x")
        ):
            seen.append(event)
    assert started.is_set()
    assert raised.value.node_name == "slow" and raised.value.timeout == 0.05
    assert isinstance(raised.value, TimeoutError)
    assert seen[-1].error_code == "NodeTimeoutError" and "slow" in (seen[-1].error_message or "")


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        ({"run_id": "7"}, "must contain a non-digit"),
        ({"run_id": "a/b"}, "no '/'"),
    ],
)
async def test_bad_run_ids_are_refused_by_name(
    make_runner: Any, call: dict[str, Any], problem: str
) -> None:
    @node(rerun_on_resume=True)
    async def plan(ctx: Any, node_input: Any) -> Any:
        return await ctx.run_node(double, node_input=1, **call)

    runner = await make_runner(Workflow(name="wf", edges=[(START, plan)]))
    with pytest.raises(ValueError, match=problem):
        await run(runner, said("go"))


async def test_a_parent_without_rerun_on_resume_is_told_to_set_it(make_runner: Any) -> None:
    async def plan(ctx: Any, node_input: Any) -> Any:
        return await ctx.run_node(double, node_input=1)

    runner = await make_runner(Workflow(name="wf", edges=[(START, plan)]))
    with pytest.raises(ValueError, match="rerun_on_resume=True"):
        await run(runner, said("go"))
    assert ran["double 1"] == 0


async def test_run_node_outside_a_workflow_names_the_problem() -> None:
    from cairn.agents.context import Context

    runner = InMemoryRunner(agent=Workflow(name="wf"), app_name=APP)
    session = await runner.session_service.create_session(app_name=APP, user_id=USER)
    from cairn.agents.invocation_context import InvocationContext

    ctx = Context(
        InvocationContext(
            session_service=runner.session_service,
            invocation_id="e-1",
            agent=Workflow(name="wf"),
            session=session,
        )
    )
    with pytest.raises(RuntimeError, match="inside a workflow node"):
        await ctx.run_node(double, node_input=1)


# -- across processes, on SQLite -----------------------------------------------------------


def worker(
    store: Path, log: Path, mode: str, crash_at: str | None = None, app: str = "workflow"
) -> str:
    env = {**os.environ, "DYNAMIC_LOG": str(log), "DYNAMIC_APP": app}
    env.pop("CRASH_AT", None)
    if crash_at is not None:
        env["CRASH_AT"] = crash_at
    done = subprocess.run(
        [sys.executable, str(WORKER), str(store), mode],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
        check=False,
    )
    if crash_at is not None:
        assert done.returncode == 17, done.stderr
    else:
        assert done.returncode == 0, done.stderr
    return done.stdout


def bodies(log: Path) -> collections.Counter[str]:
    return collections.Counter(log.read_text().splitlines())


def test_paused_in_one_process_resumed_in_another(tmp_path: Path) -> None:
    store, log = tmp_path / "s.db", tmp_path / "ran.log"
    assert "PAUSED" in worker(store, log, "start")
    assert "OUTPUT yes:150" in worker(store, log, "answer")
    assert bodies(log) == {
        "plan": 2,
        "step 1": 1,
        "step 2": 1,
        "step 3": 1,
        "ask": 1,
        "step 4": 1,
        "step 5": 1,
    }


def test_killed_then_continued_in_a_new_process(tmp_path: Path) -> None:
    store, log = tmp_path / "s.db", tmp_path / "ran.log"
    worker(store, log, "start", crash_at="3")  # killed inside the third child
    assert bodies(log) == {"plan": 1, "step 1": 1, "step 2": 1}
    assert "PAUSED" in worker(store, log, "continue")
    assert "OUTPUT yes:150" in worker(store, log, "answer")
    assert bodies(log) == {
        "plan": 3,
        "step 1": 1,
        "step 2": 1,
        "step 3": 1,
        "ask": 1,
        "step 4": 1,
        "step 5": 1,
    }


def test_a_workflow_called_as_a_tool_pauses_and_resumes_in_a_new_process(tmp_path: Path) -> None:
    store, log = tmp_path / "s.db", tmp_path / "ran.log"
    assert "PAUSED" in worker(store, log, "start", app="tool")
    assert "SAID planned {'result': 'yes:150'}" in worker(store, log, "answer", app="tool")
    assert bodies(log) == {
        "plan": 2,
        "step 1": 1,
        "step 2": 1,
        "step 3": 1,
        "ask": 1,
        "step 4": 1,
        "step 5": 1,
    }


async def test_an_agent_runs_dynamically_and_answers_once(make_runner: Any) -> None:
    from cairn import LlmAgent
    from cairn.testing import ScriptedLlm

    model = ScriptedLlm(script=["bonjour"])
    translator = LlmAgent(name="translator", model=model, instruction="Translate to French.")

    @node(rerun_on_resume=True)
    async def plan(ctx: Any, node_input: Any) -> str:
        french = await ctx.run_node(translator, node_input="hello")
        more = await ctx.run_node(ask)
        return f"{french} {more}"

    runner = await make_runner(Workflow(name="wf", edges=[(START, plan)]))
    await run(runner, said("go"))
    done = await run(runner, answer("more", "monde"))
    assert done[-1].output == "bonjour monde"
    assert len(model.requests) == 1  # the agent's answer was reused on resume
    assert model.requests[0].contents[-1].parts[0].text == "hello"
