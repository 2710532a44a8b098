"""A model call that fails ends the run cleanly (the agent records the error as an event),
but the task is ``failed``: its status message is the error, with its code under
``adk_error_code``, as google-adk's executor reports it; there is no ``response`` artifact.
The same state reaches every reader: a blocking send, tasks/get, a stream's last update, a
push notification, and a cairn ``RemoteA2aAgent`` calling the task."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator

import httpx
from a2a.types import GetTaskRequest, TaskPushNotificationConfig, TaskState
from google.genai import types
from tests.a2a.server.conftest import TIMEOUT, Connect, said
from tests.support.webhook_receiver import webhook_receiver

from cairn import Agent, InMemoryRunner
from cairn.a2a.converters.utils import struct_to_dict
from cairn.a2a.utils.agent_to_a2a import to_a2a
from cairn.agents.remote_a2a_agent import RemoteA2aAgent
from cairn.models.base_llm import BaseLlm
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse


class UnreachableModel(BaseLlm):
    """A provider that cannot be reached: every call raises."""

    model: str = "unreachable"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        raise ConnectionError("the provider at models.example.com refused the connection")
        yield LlmResponse()  # pragma: no cover (makes this an async generator)


class RefusingModel(BaseLlm):
    """A provider that answers with an error (a refusal) instead of content."""

    model: str = "refusing"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        yield LlmResponse(error_code="SAFETY", error_message="the reply was blocked for safety")


def error_code_of(status_message) -> str | None:  # type: ignore[no-untyped-def]
    return struct_to_dict(status_message.metadata).get("adk_error_code")


async def test_a_model_that_raises_fails_the_task(connect: Connect) -> None:
    agent = Agent(name="teller", model=UnreachableModel())
    async with connect(to_a2a(agent, host="agent", port=80), streaming=False) as client:
        [sent] = [r async for r in client.send_message(said("hi"))]
        read = await client.get_task(GetTaskRequest(id=sent.task.id))
    for task in (sent.task, read):
        assert task.status.state == TaskState.TASK_STATE_FAILED
        [part] = task.status.message.parts
        assert "refused the connection" in part.text
        assert error_code_of(task.status.message) == "ConnectionError"
        assert not [a for a in task.artifacts if a.name == "response"]


async def test_a_model_error_response_fails_the_task_in_a_stream(connect: Connect) -> None:
    agent = Agent(name="teller", model=RefusingModel())
    async with connect(to_a2a(agent, host="agent", port=80)) as client:
        responses = [r async for r in client.send_message(said("hi"))]
        task_id = responses[0].task.id
        read = await client.get_task(GetTaskRequest(id=task_id))
    end = responses[-1].status_update
    assert end.status.state == TaskState.TASK_STATE_FAILED
    assert [p.text for p in end.status.message.parts] == ["the reply was blocked for safety"]
    assert error_code_of(end.status.message) == "SAFETY"
    assert not [r for r in responses if r.HasField("artifact_update")]
    assert read.status.state == TaskState.TASK_STATE_FAILED
    assert read.status.message.parts[0].text == "the reply was blocked for safety"


async def test_the_push_notification_says_failed(connect: Connect) -> None:
    agent = Agent(name="teller", model=UnreachableModel())
    with webhook_receiver() as receiver:
        async with connect(to_a2a(agent, host="agent", port=80), streaming=False) as client:
            request = said("hi")
            request.configuration.task_push_notification_config.CopyFrom(
                TaskPushNotificationConfig(url=f"{receiver.url}/hook")
            )
            [sent] = [r async for r in client.send_message(request)]
            [pushed] = await asyncio.to_thread(receiver.wait_for, 1)
    task = json.loads(pushed.body)["task"]
    assert (task["id"], task["status"]["state"]) == (sent.task.id, "TASK_STATE_FAILED")
    assert "refused the connection" in task["status"]["message"]["parts"][0]["text"]
    assert task["status"]["message"]["metadata"]["adk_error_code"] == "ConnectionError"


async def test_a_remote_agent_calling_the_task_surfaces_the_error() -> None:
    served = to_a2a(Agent(name="teller", model=RefusingModel()), host="localhost", port=80)
    async with (
        served.router.lifespan_context(served),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=served), timeout=TIMEOUT) as web,
    ):
        teller = RemoteA2aAgent(
            name="teller",
            agent_card="http://localhost/.well-known/agent-card.json",
            httpx_client=web,
        )
        runner = InMemoryRunner(agent=teller, app_name="caller")
        await runner.session_service.create_session(app_name="caller", user_id="u", session_id="s")
        events = [
            e
            async for e in runner.run_async(
                user_id="u", session_id="s", new_message=types.UserContent("hi")
            )
        ]
        await runner.close()
    [failed] = [e for e in events if e.error_code]
    assert failed.error_code == "SAFETY"
    assert failed.error_message is not None
    assert "TASK_STATE_FAILED" in failed.error_message
    assert "the reply was blocked for safety" in failed.error_message
