"""ADK's live-streaming surface: the queue, the connection interface and ``run_live`` exist
at ADK's paths; an agent that implements ``_run_live_impl`` runs live, while an LlmAgent and
``Runner.run_live`` raise a typed error, since cairn has no Gemini Live mode."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest
from google.genai import types

from cairn import Agent, InMemoryRunner
from cairn.agents import LiveRequest, LiveRequestQueue
from cairn.agents.base_agent import BaseAgent
from cairn.agents.invocation_context import InvocationContext
from cairn.agents.sequential_agent import SequentialAgent
from cairn.errors import LiveStreamingNotSupportedError
from cairn.events.event import Event
from cairn.models.base_llm_connection import BaseLlmConnection
from cairn.sessions import InMemorySessionService
from cairn.testing import ScriptedLlm


class Live(BaseAgent):
    async def _run_live_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(
            content=types.Content(role="model", parts=[types.Part(text=f"live {self.name}")])
        )


async def context_for(agent: BaseAgent) -> InvocationContext:
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="ann")
    return InvocationContext(
        session_service=service, invocation_id="inv-1", agent=agent, session=session
    )


async def test_the_queue_hands_back_what_was_sent_in_order() -> None:
    queue = LiveRequestQueue()
    content = types.Content(role="user", parts=[types.Part(text="hi")])
    blob = types.Blob(data=b"\x00\x01", mime_type="audio/pcm")
    queue.send_content(content)
    queue.send_realtime(blob)
    queue.send_activity_start()
    queue.send_activity_end()
    queue.send(LiveRequest(content=content))
    queue.close()
    got = [await queue.get() for _ in range(6)]
    assert got[0].content == content and got[1].blob == blob
    assert got[2].activity_start is not None and got[3].activity_end is not None
    assert got[4].content == content and got[5].close is True


def test_a_connection_must_implement_adks_abstract_methods() -> None:
    with pytest.raises(TypeError):
        BaseLlmConnection()  # type: ignore[abstract]


async def test_an_agent_without_a_live_implementation_cannot_run_live() -> None:
    class AsyncOnly(BaseAgent):
        pass

    agent = AsyncOnly(name="plain")
    with pytest.raises(NotImplementedError, match="_run_live_impl"):
        [e async for e in agent.run_live(await context_for(agent))]


async def test_a_sequence_runs_its_sub_agents_live_in_order_with_defaults_filled() -> None:
    root = SequentialAgent(name="pipeline", sub_agents=[Live(name="a"), Live(name="b")])
    events = [e async for e in root.run_live(await context_for(root))]
    assert [
        (e.author, e.content.parts[0].text) for e in events if e.content and e.content.parts
    ] == [
        ("a", "live a"),
        ("b", "live b"),
    ]
    assert all(e.invocation_id == "inv-1" for e in events)


async def test_an_llm_agent_asked_to_run_live_says_cairn_has_no_live_mode() -> None:
    agent = Agent(name="talker", model=ScriptedLlm(script=["hi"]))
    with pytest.raises(LiveStreamingNotSupportedError, match="run_async"):
        [e async for e in agent.run_live(await context_for(agent))]


def test_runner_run_live_raises_a_typed_error_naming_the_alternative() -> None:
    runner = InMemoryRunner(
        agent=Agent(name="talker", model=ScriptedLlm(script=["hi"])), app_name="app"
    )
    with pytest.raises(LiveStreamingNotSupportedError, match="Gemini Live") as raised:
        runner.run_live(user_id="ann", session_id="s1", live_request_queue=LiveRequestQueue())
    assert isinstance(raised.value, NotImplementedError)
