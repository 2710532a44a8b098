"""Push notifications survive a server restart, and each stop of a task is notified once:
a server that starts re-arms the watchers of tasks with push configs whose runs are active,
and of all the servers watching a task, the one that claims a stop in the store sends it.

The servers are ``cairn.server:app_from_env`` processes under uvicorn with ``CAIRN_A2A=1``
on one store; the first one is killed with SIGKILL (nothing runs at shutdown), then two
are started on the same store. The count of notifications is read after every server has
exited, so a late duplicate would be counted."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from a2a.types import GetTaskRequest, TaskPushNotificationConfig, TaskState
from tests.a2a.server.conftest import AGENTS, a2a_client, said
from tests.a2a.server.test_across_processes import store_url
from tests.server.harness import ROOT, free_port
from tests.support.waiting import BOUND_SECONDS, until, wait_until
from tests.support.webhook_receiver import Receiver, Reply, webhook_receiver

from cairn.a2a.tasks import TaskRecord, stop_of
from cairn.sessions.a2a_store import a2a_store_for
from cairn.sessions.factory import session_service_from_url
from cairn.sessions.run_store import run_store_for


@contextmanager
def server(store: str, log: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A cairn API server with A2A on ``store``; yields its URL and process (a test may
    kill it). Stopped with SIGTERM at the end of the block, and waited for."""
    port = free_port()
    command = [
        sys.executable, "-m", "uvicorn", "--factory", "cairn.server:app_from_env",
        "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    env = {**os.environ, "CAIRN_AGENTS_DIR": str(AGENTS), "CAIRN_STORE": store, "CAIRN_A2A": "1"}
    with log.open("ab") as output:
        process = subprocess.Popen(
            command, env=env, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"uvicorn exited with {process.returncode}:\n{log.read_text()}")
        try:
            return httpx.get(url + "/health", timeout=BOUND_SECONDS).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(answers, f"uvicorn on {url} answering GET /health")
        yield url, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=BOUND_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def pushed(receiver: Receiver) -> list[tuple[str, str]]:
    """What the receiver got: (task id, state) of each notification."""
    tasks = [json.loads(r.body)["task"] for r in receiver.received]
    return [(t["id"], t["status"]["state"]) for t in tasks]


async def sent(store: str, app_name: str, task_id: str) -> bool:
    """Whether the store records the notification of the task's current stop as sent. A
    server killed after its receiver got a notification but before recording it leaves
    the claim open, and the next server sends it again (at least once, in that window)."""
    sessions = session_service_from_url(store)
    try:
        a2a = a2a_store_for(sessions)
        row = await a2a.get_task(app_name, task_id)
        assert row is not None
        where = {"app_name": app_name, "user_id": row.user_id, "session_id": row.session_id}
        events = await sessions.list_invocation_events(**where, invocation_id=task_id)
        run = await run_store_for(sessions).get_run(*where.values(), task_id)
        stop = stop_of(TaskRecord(row, run, events))
        claim = None if stop is None else await a2a.push_claim(app_name, task_id, stop)
        return claim is not None and claim.done
    finally:
        await sessions.close()  # type: ignore[attr-defined]


def with_push(request, receiver: Receiver):  # type: ignore[no-untyped-def]
    request.configuration.task_push_notification_config.CopyFrom(
        TaskPushNotificationConfig(url=f"{receiver.url}/hook", token="tok")
    )
    return request


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_run_active_when_its_server_died_is_notified_once(
    kind: str, tmp_path: Path
) -> None:
    flag = tmp_path / "release"
    async with store_url(kind, tmp_path) as store:
        with webhook_receiver() as receiver:
            with server(store, tmp_path / "first.log") as (first, process):
                async with a2a_client(f"{first}/a2a/waiter") as client:
                    request = with_push(said(str(flag)), receiver)
                    request.configuration.return_immediately = True
                    [started] = [r async for r in client.send_message(request)]
                    task_id = started.task.id

                    async def waiting() -> bool:  # the tool runs: the run is mid-way
                        read = await client.get_task(GetTaskRequest(id=task_id))
                        return any(
                            p.data.struct_value.fields["name"].string_value == "wait_for_release"
                            for m in read.history
                            for p in m.parts
                            if p.HasField("data")
                        )

                    await until(waiting, "the waiter's tool call in the task's history")
                process.kill()
                process.wait()
            with (
                server(store, tmp_path / "second.log") as (second, _),
                server(store, tmp_path / "third.log") as (third, _),
            ):
                flag.write_text("go")
                [notification] = await asyncio.to_thread(receiver.wait_for, 1)
                for url in (second, third):
                    async with a2a_client(f"{url}/a2a/waiter") as client:
                        read = await client.get_task(GetTaskRequest(id=task_id))
                        assert read.status.state == TaskState.TASK_STATE_COMPLETED
            # every server has exited: nothing more can arrive
            assert pushed(receiver) == [(task_id, "TASK_STATE_COMPLETED")]
            assert notification.headers["X-A2A-Notification-Token"] == "tok"


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_pause_answered_after_a_restart_is_notified_once_per_stop(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as store:
        with webhook_receiver() as receiver:
            with server(store, tmp_path / "first.log") as (first, process):
                async with a2a_client(f"{first}/a2a/asker") as client:
                    [asked] = [
                        r async for r in client.send_message(with_push(said("paint"), receiver))
                    ]
                await asyncio.to_thread(receiver.wait_for, 1)  # the pause
                task = asked.task
                await until(lambda: sent(store, "asker", task.id), "the pause recorded as sent")
                process.kill()
                process.wait()
            with (
                server(store, tmp_path / "second.log") as (second, _),
                server(store, tmp_path / "third.log") as (third, _),
            ):
                async with a2a_client(f"{second}/a2a/asker") as client:
                    answer = said("teal", task_id=task.id, context_id=task.context_id)
                    [done] = [r async for r in client.send_message(answer)]
                assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
                await asyncio.to_thread(receiver.wait_for, 2)
                async with a2a_client(f"{third}/a2a/asker") as client:  # the other server
                    read = await client.get_task(GetTaskRequest(id=task.id))
                    assert read.status.state == TaskState.TASK_STATE_COMPLETED
        assert pushed(receiver) == [
            (task.id, "TASK_STATE_INPUT_REQUIRED"),
            (task.id, "TASK_STATE_COMPLETED"),
        ]


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_notification_its_server_died_sending_is_sent_by_the_next(
    kind: str, tmp_path: Path
) -> None:
    """The first server claims the pause's notification, its receiver answers 503, and it is
    killed while it waits to retry: the claim is open, its holder gone. The next server
    started on the same host sends it."""
    async with store_url(kind, tmp_path) as store:
        with webhook_receiver(*[Reply(status=503)] * 5) as receiver:
            with server(store, tmp_path / "first.log") as (first, process):
                async with a2a_client(f"{first}/a2a/asker") as client:
                    [asked] = [
                        r async for r in client.send_message(with_push(said("paint"), receiver))
                    ]
                await asyncio.to_thread(receiver.wait_for, 1)  # answered 503: retried later
                process.kill()
                process.wait()
            task = asked.task
            tried = len(receiver.received)
            receiver.replies.clear()  # from now on: 200
            assert not await sent(store, "asker", task.id)
            with server(store, tmp_path / "second.log"):
                await asyncio.to_thread(receiver.wait_for, tried + 1)
                await until(lambda: sent(store, "asker", task.id), "the pause recorded as sent")
        assert pushed(receiver)[tried:] == [(task.id, "TASK_STATE_INPUT_REQUIRED")]
