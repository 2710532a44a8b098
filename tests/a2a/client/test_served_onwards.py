"""A cairn agent that calls a remote A2A agent, itself served over A2A (``to_a2a``): its
callers get the remote's answer, never the records of the call (they are in the log), in
the task's stream and in its history — as a google-adk agent in its place would give."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from a2a.client import Client, ClientConfig, create_client
from a2a.types import GetTaskRequest, TaskState
from google.protobuf import json_format
from starlette.applications import Starlette
from tests.a2a.server.conftest import said, served
from tests.support.a2a_scripted_server import ScriptedA2aServer

from cairn import InMemoryRunner
from cairn.a2a.utils.agent_to_a2a import to_a2a
from cairn.agents.remote_a2a_agent import RemoteA2aAgent
from cairn.events.interrupts import is_record_event


@asynccontextmanager
async def a2a_client_of(app: Starlette, *, streaming: bool) -> AsyncIterator[Client]:
    async with served(app) as http:
        config = ClientConfig(streaming=streaming, httpx_client=http)
        client = await create_client("http://agent", client_config=config)
        try:
            yield client
        finally:
            await client.close()


async def test_a_served_agent_s_task_shows_the_remote_s_answer_and_no_record(
    server: ScriptedA2aServer,
) -> None:
    server.script({"answer": "echo: {input}"}, {"answer": "echo: {input}"})
    helper = RemoteA2aAgent(name="helper", agent_card=server.card_url)
    runner = InMemoryRunner(agent=helper, app_name="front")
    app = to_a2a(helper, host="agent", port=80, runner=runner)
    async with a2a_client_of(app, streaming=True) as client:
        streamed = [r async for r in client.send_message(said("hello"))]
        task_id = streamed[0].task.id
        read = await client.get_task(GetTaskRequest(id=task_id))
    async with a2a_client_of(app, streaming=False) as client:
        [blocking] = [r async for r in client.send_message(said("again"))]

    assert streamed[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    assert read.status.state == blocking.task.status.state == TaskState.TASK_STATE_COMPLETED
    shown = json.dumps(
        [json_format.MessageToDict(r) for r in [*streamed, read, blocking]], sort_keys=True
    )
    assert "echo: hello" in shown and "echo: again" in shown
    assert "cairn_a2a_" not in shown  # no record, in the stream or in either task
    assert [[p.text for p in m.parts] for m in read.history] == [["hello"], ["echo: hello"]]

    session = await runner.session_service.get_session(
        app_name="front", user_id=f"A2A_USER_{read.context_id}", session_id=read.context_id
    )
    assert session is not None and any(is_record_event(e) for e in session.events)
