"""Push notifications: a task's clients set URLs (with the send, or afterwards), and each
time the task stops (paused or ended) its state is POSTed there, with the token and the
credentials the config names, through the runs' webhook machinery (retries, URL rules)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from a2a.types import (
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from tests.a2a.server.conftest import Connect, root_agent, said
from tests.support.waiting import until
from tests.support.webhook_receiver import Reply, webhook_receiver

from cairn.a2a.utils.agent_to_a2a import to_a2a


async def test_the_task_is_pushed_when_it_pauses_and_when_it_ends(connect: Connect) -> None:
    with webhook_receiver(Reply(status=503)) as receiver:
        config = TaskPushNotificationConfig(
            id="mine",
            url=f"{receiver.url}/hook",
            token="tok-1",
            authentication=AuthenticationInfo(scheme="Bearer", credentials="abc"),
        )
        async with connect(to_a2a(root_agent("asker")), streaming=False) as client:
            request = said("paint")
            request.configuration.task_push_notification_config.CopyFrom(config)
            [asked] = [r async for r in client.send_message(request)]
            task = asked.task
            first, retried = await asyncio.to_thread(receiver.wait_for, 2)
            answer = said("plum", task_id=task.id)
            [done] = [r async for r in client.send_message(answer)]
            *_, ended = await asyncio.to_thread(receiver.wait_for, 3)
            stored = await client.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id=task.id, id="mine")
            )
    assert first.body == retried.body  # a 503 is retried
    assert retried.path == "/hook"
    assert retried.headers["X-A2A-Notification-Token"] == "tok-1"
    assert retried.headers["Authorization"] == "Bearer abc"
    paused = json.loads(retried.body)["task"]
    assert (paused["id"], paused["status"]["state"]) == (task.id, "TASK_STATE_INPUT_REQUIRED")
    finished = json.loads(ended.body)["task"]
    assert finished["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert (stored.url, stored.token) == (config.url, "tok-1")


async def test_configs_are_set_listed_and_deleted(connect: Connect) -> None:
    with webhook_receiver() as receiver:
        async with connect(to_a2a(root_agent("asker")), streaming=False) as client:
            [asked] = [r async for r in client.send_message(said("paint"))]
            task_id = asked.task.id
            for name in ("a", "b"):
                await client.create_task_push_notification_config(
                    TaskPushNotificationConfig(task_id=task_id, id=name, url=receiver.url)
                )
            listed = await client.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=task_id)
            )
            assert sorted(c.id for c in listed.configs) == ["a", "b"]
            await client.delete_task_push_notification_config(
                DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="a")
            )
            listed = await client.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=task_id)
            )
    assert [c.id for c in listed.configs] == ["b"]


async def test_a_url_outside_the_allowed_hosts_is_refused(
    connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_WEBHOOK_HOSTS", "hooks.example.com")
    async with connect(to_a2a(root_agent("asker")), streaming=False) as client:
        [asked] = [r async for r in client.send_message(said("paint"))]
        config = TaskPushNotificationConfig(
            task_id=asked.task.id, url="http://169.254.169.254/latest/meta-data"
        )
        with pytest.raises(Exception, match="not in CAIRN_WEBHOOK_HOSTS"):
            await client.create_task_push_notification_config(config)


async def test_a_cancelled_task_is_notified_once(connect: Connect, tmp_path: Path) -> None:
    """The task's watcher and the cancel both see the stop; the one that claims it sends."""
    with webhook_receiver() as receiver:
        async with connect(to_a2a(root_agent("gate")), streaming=False) as client:
            request = said(str(tmp_path / "never"))
            request.configuration.return_immediately = True
            request.configuration.task_push_notification_config.CopyFrom(
                TaskPushNotificationConfig(url=receiver.url)
            )
            [started] = [r async for r in client.send_message(request)]
            task_id = started.task.id

            async def working() -> bool:
                read = await client.get_task(GetTaskRequest(id=task_id))
                return bool(read.status.state == TaskState.TASK_STATE_WORKING)

            await until(working, "the gate's task working")
            cancelled = await client.cancel_task(CancelTaskRequest(id=task_id))
            await asyncio.to_thread(receiver.wait_for, 1)
        # the server has stopped (its watchers with it): nothing more can arrive
    states = [json.loads(r.body)["task"]["status"]["state"] for r in receiver.received]
    assert states == ["TASK_STATE_CANCELED"]
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
