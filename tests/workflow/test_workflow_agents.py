"""SequentialAgent and LoopAgent: compositions over the workflow engine."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from google.genai import types

from cairn import BaseAgent, Event, InMemoryRunner, InvocationContext
from cairn.workflow import LoopAgent, SequentialAgent


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


async def test_loop_stops_at_max_iterations_with_run_numbers_per_round() -> None:
    loop = LoopAgent(name="loop", sub_agents=[Step(name="a"), Step(name="b")], max_iterations=3)
    events, state = await run(loop)
    assert state["trail"] == ["a", "b"] * 3
    assert "loop@1/a@3" in [e.node_info.path for e in events]


async def test_loop_stops_when_a_sub_agent_escalates() -> None:
    loop = LoopAgent(name="loop", sub_agents=[Step(name="a"), Step(name="b", stop_after=2)])
    _, state = await run(loop)
    assert state["trail"] == ["a", "b", "a", "b"]
