"""A blocking send's answer is the task as the log holds it, whether the server builds it
from the events its Runner just appended (when ``cairn.events.read_back`` vouches for them)
or reads them back: a send and a later tasks/get give the same task."""

from __future__ import annotations

import datetime
from collections.abc import AsyncGenerator
from typing import Any

from a2a.types import GetTaskRequest, TaskState
from google.genai import types
from tests.a2a.server.conftest import Connect, said

from cairn import Agent
from cairn.a2a.converters.utils import struct_to_dict
from cairn.a2a.utils.agent_to_a2a import to_a2a
from cairn.models.base_llm import BaseLlm
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse

WHEN = datetime.datetime(2026, 12, 7, 12, 0, tzinfo=datetime.UTC)


class OneReply(BaseLlm):
    """Answers every call with ``reply``."""

    model: str = "one-reply"
    reply: LlmResponse

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        yield self.reply.model_copy()


def replying(text: str, metadata: dict[str, Any]) -> OneReply:
    content = types.Content(role="model", parts=[types.Part(text=text)])
    return OneReply(
        reply=LlmResponse(content=content, custom_metadata=metadata, turn_complete=True)
    )


async def test_a_value_json_changes_is_answered_as_stored(connect: Connect) -> None:
    # A datetime in the custom metadata: stored as its JSON text.
    agent = Agent(name="stamper", model=replying("stamped", {"when": WHEN, "plain": [1, "two"]}))
    async with connect(to_a2a(agent, host="agent", port=80), streaming=False) as client:
        [sent] = [r async for r in client.send_message(said("stamp it"))]
        read = await client.get_task(GetTaskRequest(id=sent.task.id))
    assert sent.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert sent.task == read
    stamped = struct_to_dict(read.history[-1].metadata)["adk_custom_metadata"]
    assert stamped == {"when": "2026-12-07T12:00:00Z", "plain": [1, "two"]}


async def test_a_plain_answer_is_the_task_tasks_get_reads(connect: Connect) -> None:
    agent = Agent(name="plain", model=replying("plain", {"kind": "plain"}))
    async with connect(to_a2a(agent, host="agent", port=80), streaming=False) as client:
        [sent] = [r async for r in client.send_message(said("hello"))]
        read = await client.get_task(GetTaskRequest(id=sent.task.id))
    assert sent.task == read
    assert [p.text for p in read.artifacts[0].parts] == ["plain"]
