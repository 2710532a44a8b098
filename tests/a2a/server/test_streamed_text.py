"""A server whose RunConfig streams (``streaming_mode`` SSE) forwards the model's partial text
to a streaming client as chunks of the task's ``response`` artifact (google-adk's wire shape:
``append`` after the first chunk, ``lastChunk`` false), and the final answer replaces them
when the task completes. Partial events are never stored: the task read afterwards, and
the task a client folds from the stream, hold the answer once."""

from __future__ import annotations

import pytest
from a2a.types import GetTaskRequest, StreamResponse, TaskState
from tests.a2a.server.conftest import Connect, said

from cairn import Agent
from cairn.a2a.agent.task_progress import TaskProgress
from cairn.a2a.utils.agent_to_a2a import to_a2a
from cairn.agents.run_config import RunConfig, StreamingMode
from cairn.testing import ScriptedLlm
from cairn.testing.scripted_llm import Call, Stream

STREAMING = RunConfig(streaming_mode=StreamingMode.SSE)


def lookup() -> str:
    """Looks it up."""
    return "found"


def chunks(responses: list[StreamResponse]) -> list[tuple[str, bool, bool]]:
    """The artifact updates: (text, append, last chunk)."""
    return [
        ("".join(p.text for p in u.artifact.parts), u.append, u.last_chunk)
        for u in (r.artifact_update for r in responses if r.HasField("artifact_update"))
    ]


def folded(responses: list[StreamResponse]) -> dict[str, str]:
    """The task as a client folds it from the stream: its artifacts' text by name."""
    progress = TaskProgress()
    for response in responses:
        progress.add(response)
    assert progress.task is not None
    return {a.name: "".join(p.text for p in a.parts) for a in progress.task.artifacts}


async def test_partial_text_is_streamed_as_chunks_of_the_response(connect: Connect) -> None:
    model = ScriptedLlm(script=[Stream(["Sun", "ny in ", "Lisbon."])])
    app = to_a2a(Agent(name="weather", model=model), host="agent", port=80, run_config=STREAMING)
    async with connect(app) as client:
        responses = [r async for r in client.send_message(said("Lisbon?"))]
        read = await client.get_task(GetTaskRequest(id=responses[0].task.id))
    assert chunks(responses) == [
        ("Sun", False, False),
        ("ny in ", True, False),
        ("Lisbon.", True, False),
        ("Sunny in Lisbon.", False, True),  # the final answer replaces the chunks
    ]
    updates = [r.artifact_update for r in responses if r.HasField("artifact_update")]
    assert {u.artifact.artifact_id for u in updates} == {f"{read.id}-response"}
    assert responses[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    assert folded(responses) == {"response": "Sunny in Lisbon."}
    # partial events are not part of the task: its history and artifacts are the whole answer
    assert [m.parts[0].text for m in read.history] == ["Lisbon?", "Sunny in Lisbon."]
    assert [[p.text for p in a.parts] for a in read.artifacts] == [["Sunny in Lisbon."]]


async def test_each_streamed_segment_starts_over(connect: Connect) -> None:
    model = ScriptedLlm(
        script=[Stream(["Let me ", "look."], calls=[Call("lookup")]), Stream(["Found ", "it."])]
    )
    agent = Agent(name="finder", model=model, tools=[lookup])
    async with connect(to_a2a(agent, host="agent", port=80, run_config=STREAMING)) as client:
        responses = [r async for r in client.send_message(said("find it"))]
    assert chunks(responses) == [
        ("Let me ", False, False),
        ("look.", True, False),
        ("Found ", False, False),  # a new segment after the whole event: starts over
        ("it.", True, False),
        ("Found it.", False, True),
    ]
    assert folded(responses) == {"response": "Found it."}


async def test_a_server_that_does_not_stream_sends_the_answer_once(connect: Connect) -> None:
    model = ScriptedLlm(script=[Stream(["Sun", "ny."])])
    async with connect(to_a2a(Agent(name="weather", model=model), host="agent", port=80)) as client:
        responses = [r async for r in client.send_message(said("Lisbon?"))]
    assert chunks(responses) == [("Sunny.", False, True)]


def test_a_run_config_with_other_settings_is_refused() -> None:
    agent = Agent(name="weather", model=ScriptedLlm(script=[]))
    config = RunConfig(streaming_mode=StreamingMode.SSE, max_llm_calls=3)
    with pytest.raises(ValueError, match="sets max_llm_calls; only streaming_mode is used"):
        to_a2a(agent, run_config=config)


def ask_for_color(question: str) -> None:
    """Asks the user for a color (the answer comes later)."""


async def test_the_answer_to_a_pause_streams_its_reply(connect: Connect) -> None:
    from cairn.tools import LongRunningFunctionTool

    model = ScriptedLlm(
        script=[Call("ask_for_color", question="which?"), Stream(["you chose ", "teal"])]
    )
    agent = Agent(name="painter", model=model, tools=[LongRunningFunctionTool(ask_for_color)])
    async with connect(to_a2a(agent, host="agent", port=80, run_config=STREAMING)) as client:
        asked = [r async for r in client.send_message(said("paint"))]
        task = asked[-1].status_update
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        answer = said("teal", task_id=task.task_id, context_id=task.context_id)
        responses = [r async for r in client.send_message(answer)]
    assert chunks(responses) == [
        ("you chose ", False, False),
        ("teal", True, False),
        ("you chose teal", False, True),
    ]
    assert responses[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
