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


def asker_app():  # type: ignore[no-untyped-def]
    from tests.a2a.server.conftest import root_agent

    from cairn.a2a.utils.agent_to_a2a import to_a2a

    return to_a2a(root_agent("asker"), host="agent", port=80)


async def test_streaming_gives_the_task_then_its_updates_then_its_end(connect: Connect) -> None:
    async with connect(greeter_app()) as client:
        responses = [r async for r in client.send_message(said("bo"))]
    kinds = [r.WhichOneof("payload") for r in responses]
    assert kinds[0] == "task" and kinds[-1] == "status_update"
    assert responses[0].task.status.state == TaskState.TASK_STATE_SUBMITTED
    assert "artifact_update" in kinds
    end = responses[-1].status_update
    assert end.status.state == TaskState.TASK_STATE_COMPLETED
    assert end.status.message.parts[0].text == "hello, bo"


async def test_get_reads_the_task_and_a_resent_message_starts_no_second_run(
    connect: Connect,
) -> None:
    from a2a.types import GetTaskRequest

    async with connect(greeter_app(), streaming=False) as client:
        [first] = [r async for r in client.send_message(said("cy", message_id="m-1"))]
        [again] = [r async for r in client.send_message(said("cy", message_id="m-1"))]
        read = await client.get_task(GetTaskRequest(id=first.task.id))
        [other] = [r async for r in client.send_message(said("cy", message_id="m-2"))]
    assert again.task.id == first.task.id == read.id
    assert read.status.state == TaskState.TASK_STATE_COMPLETED
    assert len(read.history) == 2  # one user message, one answer: the agent ran once
    assert other.task.id != first.task.id


async def test_a_pause_is_input_required_and_the_next_message_answers_it(
    connect: Connect,
) -> None:
    async with connect(asker_app(), streaming=False) as client:
        [asked] = [r async for r in client.send_message(said("paint"))]
        task = asked.task
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        [call] = task.status.message.parts
        assert call.metadata["adk_type"] == "function_call"
        assert call.metadata["adk_is_long_running"] is True
        assert call.data.struct_value["name"] == "adk_request_input"
        assert call.data.struct_value["args"]["message"] == "Which color?"
        answer = said("blue", task_id=task.id, context_id=task.context_id)
        [done] = [r async for r in client.send_message(answer)]
    assert done.task.id == task.id
    assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert done.task.status.message.parts[0].text == "you chose blue"


async def test_an_adk_style_function_response_answers_the_pause(connect: Connect) -> None:
    from google.protobuf import json_format

    async with connect(asker_app(), streaming=False) as client:
        [asked] = [r async for r in client.send_message(said("paint"))]
        task = asked.task
        call_id = task.status.message.parts[0].data.struct_value["id"]
        part = json_format.ParseDict(
            {
                "data": {
                    "id": call_id,
                    "name": "adk_request_input",
                    "response": {"result": "green"},
                },
                "metadata": {"adk_type": "function_response"},
            },
            Part(),
        )
        message = Message(
            message_id="answer-1", role=Role.ROLE_USER, parts=[part],
            task_id=task.id, context_id=task.context_id,
        )  # fmt: skip
        [done] = [r async for r in client.send_message(SendMessageRequest(message=message))]
        [again] = [r async for r in client.send_message(SendMessageRequest(message=message))]
    assert done.task.status.message.parts[0].text == "you chose green"
    assert again.task.status.state == TaskState.TASK_STATE_COMPLETED  # not answered twice


async def test_cancel_ends_a_paused_task_and_a_later_answer_is_refused(connect: Connect) -> None:
    import pytest
    from a2a.client import A2AClientError
    from a2a.types import CancelTaskRequest

    async with connect(asker_app(), streaming=False) as client:
        [asked] = [r async for r in client.send_message(said("paint"))]
        cancelled = await client.cancel_task(CancelTaskRequest(id=asked.task.id))
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        late = said("red", task_id=asked.task.id)
        with pytest.raises(Exception, match="canceled, not waiting for input") as raised:
            [r async for r in client.send_message(late)]
        assert isinstance(raised.value, A2AClientError | Exception)


async def test_an_unknown_task_is_task_not_found(connect: Connect) -> None:
    import pytest
    from a2a.types import GetTaskRequest

    async with connect(greeter_app(), streaming=False) as client:
        with pytest.raises(Exception, match="has no task 'nope'"):
            await client.get_task(GetTaskRequest(id="nope"))


async def test_the_card_is_made_from_the_agent(connect: Connect) -> None:
    async with connect(greeter_app()) as client:
        card = await client.get_extended_agent_card() if False else None
    del card
    from tests.a2a.server.conftest import served

    async with served(greeter_app()) as http:
        answer = await http.get("/.well-known/agent-card.json")
    body = answer.json()
    assert body["name"] == "greeter"
    assert body["description"] == "Greets whoever writes to it."
    assert body["capabilities"]["streaming"] is True
    assert body["capabilities"]["pushNotifications"] is True
    [extension] = body["capabilities"]["extensions"]
    assert extension["uri"].endswith("/a2a/idempotent-messages/v1")
    assert [(i["url"], i["protocolBinding"]) for i in body["supportedInterfaces"]] == [
        ("http://agent:80", "JSONRPC"),
        ("http://agent:80/rest", "HTTP+JSON"),
    ]
    assert body["skills"][0]["id"] == "greeter"


async def test_the_http_json_binding(connect: Connect) -> None:
    async with connect(greeter_app(), streaming=False, bindings=["HTTP+JSON"]) as client:
        [response] = [r async for r in client.send_message(said("dee"))]
    assert response.task.status.message.parts[0].text == "hello, dee"
