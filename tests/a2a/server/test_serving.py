"""An agent served with ``to_a2a``, called with a2a-sdk's own client."""

from __future__ import annotations

import uuid

from a2a.types import Message, Part, Role, SendMessageRequest, TaskState
from tests.a2a.server.conftest import Connect, greeter_app


def said(text: str, **ids: str) -> SendMessageRequest:
    message = Message(
        message_id=ids.pop("message_id", str(uuid.uuid4())), role=Role.ROLE_USER,
        parts=[Part(text=text)], **ids,
    )  # fmt: skip
    return SendMessageRequest(message=message)


async def test_a_blocking_send_returns_the_completed_task(connect: Connect) -> None:
    async with connect(greeter_app(), streaming=False) as client:
        [response] = [r async for r in client.send_message(said("ann"))]
    task = response.task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [p.text for p in task.status.message.parts] == ["hello, ann"]
    assert [[p.text for p in a.parts] for a in task.artifacts] == [["hello, ann"]]
    assert [(m.role, m.parts[0].text) for m in task.history] == [
        (Role.ROLE_USER, "ann"),
        (Role.ROLE_AGENT, "hello, ann"),
    ]
