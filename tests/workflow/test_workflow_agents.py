"""SequentialAgent, ParallelAgent and LoopAgent as cairn.workflow still exports them (they are
ADK's shell agents from cairn.agents; see tests/agents/test_shell_agents.py)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.genai import types

from cairn import BaseAgent, Event, InMemoryRunner, InvocationContext
from cairn.workflow import LoopAgent, ParallelAgent, SequentialAgent


class Step(BaseAgent):
    """Appends its name to the 'trail' state key; escalates when told to."""

    stop_after: int | None = None

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        trail = [*ctx.session.state.get("trail", []), self.name]
        stop = self.stop_after is not None and trail.count(self.name) >= self.stop_after
        event = Event(
            content=types.Content(role="model", parts=[types.Part(text=self.name)]),
            state={"trail": trail},
        )
        event.actions.escalate = stop or None
        yield event


async def run(agent: BaseAgent) -> tuple[list[Event], dict]:  # type: ignore[type-arg]
    runner = InMemoryRunner(agent=agent, app_name="a")
    await runner.session_service.create_session(app_name="a", user_id="u", session_id="s")
    message = types.Content(role="user", parts=[types.Part(text="go")])
    events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message=message)]
    session = await runner.session_service.get_session(app_name="a", user_id="u", session_id="s")
    assert session is not None
    return events, session.state


async def test_sequential_runs_each_sub_agent_in_order() -> None:
    _, state = await run(SequentialAgent(name="seq", sub_agents=[Step(name="a"), Step(name="b")]))
    assert state["trail"] == ["a", "b"]


def test_the_workflow_names_are_the_agents_ones() -> None:
    import cairn.agents

    assert SequentialAgent is cairn.agents.SequentialAgent
    assert ParallelAgent is cairn.agents.ParallelAgent
    assert LoopAgent is cairn.agents.LoopAgent
    assert not hasattr(SequentialAgent, "edges")  # an agent, not a workflow


async def test_loop_stops_at_max_iterations() -> None:
    loop = LoopAgent(name="loop", sub_agents=[Step(name="a"), Step(name="b")], max_iterations=3)
    events, state = await run(loop)
    assert state["trail"] == ["a", "b"] * 3
    assert [e.author for e in events] == ["a", "b"] * 3  # only the sub-agents' own events


async def test_loop_stops_when_a_sub_agent_escalates() -> None:
    loop = LoopAgent(name="loop", sub_agents=[Step(name="a"), Step(name="b", stop_after=2)])
    _, state = await run(loop)
    assert state["trail"] == ["a", "b", "a", "b"]


class Waiter(BaseAgent):
    """Waits until every Waiter of its group has started: finishes only if they run at once."""

    group: Any = None  # shared between instances (a list field would be copied)
    size: int = 2

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        import asyncio

        self.group.append(self.name)
        for _ in range(200):
            if len(self.group) >= self.size:
                break
            await asyncio.sleep(0.005)
        else:
            raise TimeoutError(f"{self.name} ran alone")
        yield Event(content=types.Content(role="model", parts=[types.Part(text=self.name)]))


async def test_parallel_runs_sub_agents_at_once_on_their_own_branches() -> None:
    group: list[str] = []
    parallel = ParallelAgent(
        name="par", sub_agents=[Waiter(name="x", group=group), Waiter(name="y", group=group)]
    )
    events, _ = await run(parallel)
    assert sorted(group) == ["x", "y"]
    branches = {e.author: e.branch for e in events}
    assert branches == {"x": "par.x", "y": "par.y"}  # ADK's branches; no event of par's own


async def test_max_concurrency_one_runs_one_node_at_a_time() -> None:
    from cairn.workflow import START, Workflow

    group: list[str] = []
    one_at_a_time = Workflow(
        name="w",
        max_concurrency=1,
        edges=[(START, (Waiter(name="x", group=group), Waiter(name="y", group=group)))],
    )
    with pytest.raises(TimeoutError, match="x ran alone"):  # x waited for y in vain
        await run(one_at_a_time)
