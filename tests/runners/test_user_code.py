"""User code never runs on the event loop: sync tools, callbacks, instruction providers, plugin
hooks and workflow functions run on threads (contextvars copied), so one slow function cannot
stall other invocations or the renewal of session leases."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from google.genai import types

from cairn import Agent, Event, InMemoryRunner, Runner
from cairn.agents.context import Context
from cairn.plugins.base_plugin import BasePlugin
from cairn.testing import Call, ScriptedLlm
from cairn.workflow import START, Workflow

APP, USER = "threads", "u"
marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")


class Seen:
    """Where each piece of user code ran: its thread, and the marker contextvar it saw."""

    def __init__(self) -> None:
        self.loop_thread = threading.get_ident()
        self.calls: dict[str, tuple[int, str]] = {}

    def note(self, what: str) -> None:
        self.calls[what] = (threading.get_ident(), marker.get())

    def off_loop(self, what: str) -> bool:
        thread, seen_marker = self.calls[what]
        return thread != self.loop_thread and seen_marker == "set by the caller"


async def drive(runner: Runner, text: str = "go") -> list[Event]:
    await runner.session_service.create_session(
        app_name=runner.app_name, user_id=USER, session_id="s"
    )
    marker.set("set by the caller")
    return [
        event
        async for event in runner.run_async(
            user_id=USER,
            session_id="s",
            new_message=types.Content(role="user", parts=[types.Part(text=text)]),
        )
    ]


def agent_runner(seen: Seen, **agent_fields: Any) -> InMemoryRunner:
    def lookup(city: str) -> dict[str, str]:
        seen.note("sync tool")
        return {"city": city}

    model = ScriptedLlm(script=[Call("lookup", city="Oslo"), "done"])
    agent = Agent(name="helper", model=model, tools=[lookup], **agent_fields)
    return InMemoryRunner(agent=agent, app_name=APP)


async def test_sync_tools_and_every_kind_of_sync_callback_run_off_the_event_loop() -> None:
    seen = Seen()

    def callback(name: str) -> Callable[..., None]:
        def record(*_args: Any, **_kwargs: Any) -> None:
            seen.note(name)

        return record

    def instruction(ctx: Context) -> str:
        seen.note("instruction provider")
        return "be brief"

    runner = agent_runner(
        seen,
        instruction=instruction,
        before_agent_callback=callback("before_agent_callback"),
        after_agent_callback=callback("after_agent_callback"),
        before_model_callback=callback("before_model_callback"),
        after_model_callback=callback("after_model_callback"),
        before_tool_callback=callback("before_tool_callback"),
        after_tool_callback=callback("after_tool_callback"),
    )

    class SyncHooks(BasePlugin):
        def before_run_callback(self, **_kwargs: Any) -> None:  # type: ignore[override]
            seen.note("plugin hook")

    runner.plugin_manager.register_plugin(SyncHooks("sync-hooks"))
    events = await drive(runner)
    assert events[-1].content is not None and events[-1].content.parts[0].text == "done"
    expected = {
        "sync tool",
        "instruction provider",
        "before_agent_callback",
        "after_agent_callback",
        "before_model_callback",
        "after_model_callback",
        "before_tool_callback",
        "after_tool_callback",
        "plugin hook",
    }
    assert set(seen.calls) == expected
    assert [what for what in sorted(expected) if not seen.off_loop(what)] == []


async def test_a_confirmation_rule_runs_off_the_event_loop() -> None:
    seen = Seen()

    def rule(amount: int, tool_context: Context) -> bool:
        seen.note("confirmation rule")
        return False

    def pay(amount: int) -> dict[str, int]:
        return {"paid": amount}

    from cairn.tools.function_tool import FunctionTool

    model = ScriptedLlm(script=[Call("pay", amount=3), "paid"])
    tool = FunctionTool(pay, require_confirmation=rule)
    runner = InMemoryRunner(agent=Agent(name="payer", model=model, tools=[tool]), app_name=APP)
    await drive(runner)
    assert seen.off_loop("confirmation rule")


async def test_workflow_functions_and_sync_generators_run_off_the_event_loop() -> None:
    seen = Seen()

    def first(node_input: str) -> str:
        seen.note("function node")
        return node_input.upper()

    def second(node_input: str) -> Iterator[Event]:
        seen.note("generator node (start)")
        yield Event(output=node_input + "!")
        seen.note("generator node (after a yield)")

    runner = InMemoryRunner(
        agent=Workflow(name="flow", edges=[(START, first, second)]), app_name=APP
    )
    events = await drive(runner, "hi")
    assert any(event.output == "HI!" for event in events)
    assert [what for what in seen.calls if not seen.off_loop(what)] == []
    assert len(seen.calls) == 3


async def test_parallel_runs_of_a_slow_sync_tool_run_at_once() -> None:
    """30 runs of a blocking tool in one process: all 30 calls are in flight together (a
    barrier only they can pass). On the loop, the first would block every other one."""
    runs = 30
    barrier = threading.Barrier(runs, timeout=60)
    outcomes: list[str] = []

    def slow(n: int) -> dict[str, int]:
        try:
            barrier.wait()  # stands in for 0.5 s of blocking work
            outcomes.append("together")
        except threading.BrokenBarrierError:
            outcomes.append("alone")
        return {"n": n}

    def runner_for(index: int) -> InMemoryRunner:
        model = ScriptedLlm(script=[Call("slow", n=index), "ok"])
        return InMemoryRunner(agent=Agent(name="worker", model=model, tools=[slow]), app_name=APP)

    async def one(index: int) -> list[Event]:
        return await drive(runner_for(index))

    results = await asyncio.gather(*(one(index) for index in range(runs)))
    assert outcomes == ["together"] * runs
    assert all(events[-1].content.parts[0].text == "ok" for events in results)  # type: ignore[union-attr]


@pytest.mark.parametrize("kind", ["partial", "callable object"])
async def test_async_callables_in_disguise_are_awaited_on_the_loop(kind: str) -> None:
    import functools

    loop_thread = threading.get_ident()
    where: list[int] = []

    async def fetch(city: str, unit: str) -> dict[str, str]:
        where.append(threading.get_ident())
        return {"city": city, "unit": unit}

    class Fetcher:
        async def __call__(self, city: str, unit: str) -> dict[str, str]:
            return await fetch(city, unit)

    from cairn.user_code import call_user_code

    func = functools.partial(fetch, unit="C") if kind == "partial" else Fetcher()
    result = await call_user_code(func, city="Oslo", **({} if kind == "partial" else {"unit": "C"}))
    assert result == {"city": "Oslo", "unit": "C"} and where == [loop_thread]
