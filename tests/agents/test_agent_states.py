"""ADK's in-memory view of the resumability markers: ``InvocationContext.agent_states`` and
``end_of_agents``. Shell agents resume from them when the log shows nothing of their run
(a caller set them, as ADK's own code does); markers they write are recorded there too."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from google.genai import types

from cairn.agents.base_agent import BaseAgent, BaseAgentState
from cairn.agents.invocation_context import InvocationContext
from cairn.agents.loop_agent import LoopAgent, LoopAgentState
from cairn.agents.parallel_agent import ParallelAgent
from cairn.agents.sequential_agent import SequentialAgent, SequentialAgentState
from cairn.apps import ResumabilityConfig
from cairn.events.event import Event
from cairn.events.event_actions import EventActions
from cairn.sessions import InMemorySessionService


class Says(BaseAgent):
    """Says its name once; marks itself done in the context when the App is resumable."""

    escalate: bool = False

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(
            author=self.name,
            branch=ctx.branch,
            content=types.Content(role="model", parts=[types.Part(text=self.name)]),
            actions=EventActions(escalate=self.escalate or None),
        )
        if ctx.is_resumable:
            ctx.set_agent_state(self.name, end_of_agent=True)


async def context_for(agent: BaseAgent, *, resumable: bool = True) -> InvocationContext:
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="ann")
    return InvocationContext(
        session_service=service,
        invocation_id="inv-1",
        agent=agent,
        session=session,
        resumability_config=ResumabilityConfig(is_resumable=resumable),
    )


def shape(events: list[Event]) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for event in events:
        if event.content and event.content.parts:
            out.append((event.author, event.content.parts[0].text))
        elif event.actions.end_of_agent:
            out.append((event.author, "END"))
        else:
            out.append((event.author, event.actions.agent_state))
    return out


async def test_a_sequence_resumes_from_the_sub_agent_its_saved_state_names() -> None:
    root = SequentialAgent(name="pipeline", sub_agents=[Says(name="a"), Says(name="b")])
    ctx = await context_for(root)
    ctx.agent_states["pipeline"] = SequentialAgentState(current_sub_agent="b").model_dump()
    events = [e async for e in root.run_async(ctx)]
    assert shape(events) == [("b", "b"), ("pipeline", "END")]
    assert ctx.end_of_agents["pipeline"] is True and "pipeline" not in ctx.agent_states


async def test_an_empty_saved_state_is_a_placeholder_and_the_sequence_starts_over() -> None:
    root = SequentialAgent(name="pipeline", sub_agents=[Says(name="a"), Says(name="b")])
    ctx = await context_for(root)
    ctx.agent_states["pipeline"] = BaseAgentState().model_dump()
    events = [e async for e in root.run_async(ctx)]
    assert shape(events) == [
        ("pipeline", {"current_sub_agent": "a"}),
        ("a", "a"),
        ("pipeline", {"current_sub_agent": "b"}),
        ("b", "b"),
        ("pipeline", "END"),
    ]


async def test_a_loop_resumes_in_the_round_and_at_the_sub_agent_saved() -> None:
    root = LoopAgent(name="refine", max_iterations=2, sub_agents=[Says(name="a"), Says(name="b")])
    ctx = await context_for(root)
    ctx.agent_states["refine"] = LoopAgentState(current_sub_agent="b", times_looped=1).model_dump()
    events = [e async for e in root.run_async(ctx)]
    assert shape(events) == [("b", "b"), ("refine", "END")]


async def test_a_loop_stops_at_an_escalation_it_yields_even_outside_a_runner() -> None:
    root = LoopAgent(name="refine", sub_agents=[Says(name="a", escalate=True), Says(name="b")])
    ctx = await context_for(root, resumable=False)
    events = [e async for e in root.run_async(ctx)]  # no Runner: nothing is in the log
    assert shape(events) == [("a", "a")]


async def test_a_parallel_agent_resumed_from_state_skips_the_sub_agents_marked_done() -> None:
    root = ParallelAgent(name="fan", sub_agents=[Says(name="left"), Says(name="right")])
    ctx = await context_for(root)
    ctx.agent_states["fan"] = {}
    ctx.set_agent_state("left", end_of_agent=True)
    events = [e async for e in root.run_async(ctx)]
    assert shape(events) == [("right", "right"), ("fan", "END")]


async def test_set_agent_state_keeps_the_state_drops_it_when_done_or_forgets_both() -> None:
    ctx = await context_for(SequentialAgent(name="pipeline"))
    ctx.set_agent_state("pipeline", agent_state=SequentialAgentState(current_sub_agent="x"))
    assert ctx.agent_states["pipeline"] == {"current_sub_agent": "x"}
    assert ctx.end_of_agents["pipeline"] is False
    ctx.set_agent_state("pipeline", end_of_agent=True)
    assert "pipeline" not in ctx.agent_states and ctx.end_of_agents["pipeline"] is True
    ctx.set_agent_state("pipeline")
    assert "pipeline" not in ctx.agent_states and "pipeline" not in ctx.end_of_agents


async def test_the_views_of_one_invocation_share_agent_states() -> None:
    child = Says(name="a")
    root = SequentialAgent(name="pipeline", sub_agents=[child])
    ctx = await context_for(root)
    ctx.for_agent(child).set_agent_state("a", end_of_agent=True)
    assert ctx.end_of_agents == {"a": True}


async def test_populating_from_the_log_gives_the_latest_marker_of_each_agent() -> None:
    ctx = await context_for(SequentialAgent(name="pipeline"))
    ctx.session.events.extend(
        [
            Event(invocation_id="inv-1", author="pipeline", actions=EventActions(agent_state={})),
            Event(invocation_id="inv-1", author="a", actions=EventActions(end_of_agent=True)),
            Event(
                invocation_id="inv-1",
                author="pipeline",
                actions=EventActions(agent_state={"current_sub_agent": "b"}),
            ),
            Event(invocation_id="other", author="b", actions=EventActions(end_of_agent=True)),
            Event(
                invocation_id="inv-1",
                author="c",
                content=types.Content(role="model", parts=[types.Part(text="hi")]),
            ),
            Event(
                invocation_id="inv-1",
                author="user",
                content=types.Content(role="user", parts=[types.Part(text="hi")]),
            ),
        ]
    )
    ctx.populate_invocation_agent_states()
    assert ctx.agent_states == {"pipeline": {"current_sub_agent": "b"}, "c": {}}  # c started
    assert ctx.end_of_agents == {"pipeline": False, "a": True, "c": False}


async def test_without_resumability_there_is_nothing_to_populate() -> None:
    ctx = await context_for(SequentialAgent(name="pipeline"), resumable=False)
    ctx.session.events.append(
        Event(invocation_id="inv-1", author="a", actions=EventActions(end_of_agent=True))
    )
    ctx.populate_invocation_agent_states()
    assert ctx.agent_states == {} and ctx.end_of_agents == {}
