"""Tasks live in the store, not in a server: a pause is answered after the server that asked
restarted, and a task is followed (resubscribed) from another server process, on SQLite and
PostgreSQL. The servers are ``cairn.server:app_from_env`` processes under uvicorn with
``CAIRN_A2A=1``, called with a2a-sdk's client over loopback HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from a2a.types import (
    GetTaskRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from tests.a2a.server.conftest import AGENTS, a2a_client, said
from tests.server.harness import uvicorn_server
from tests.support.databases import postgres_database
from tests.support.waiting import until


@asynccontextmanager
async def store_url(kind: str, tmp: Path) -> AsyncIterator[str]:
    if kind == "sqlite":
        yield str(tmp / "sessions.db")
    else:
        async with postgres_database() as url:  # type: ignore[attr-defined]
            yield url


def env(store: str) -> dict[str, str]:
    return {"CAIRN_AGENTS_DIR": str(AGENTS), "CAIRN_STORE": store, "CAIRN_A2A": "1"}


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_pause_is_answered_after_the_server_restarts(kind: str, tmp_path: Path) -> None:
    async with store_url(kind, tmp_path) as store:
        with uvicorn_server(env(store), log=tmp_path / "first.log") as first:
            async with a2a_client(f"{first}/a2a/asker") as client:
                [asked] = [r async for r in client.send_message(said("paint"))]
        task = asked.task
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        with uvicorn_server(env(store), log=tmp_path / "second.log") as second:
            async with a2a_client(f"{second}/a2a/asker") as client:
                read = await client.get_task(GetTaskRequest(id=task.id))
                assert read.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
                answer = said("teal", task_id=task.id, context_id=task.context_id)
                [done] = [r async for r in client.send_message(answer)]
                [again] = [r async for r in client.send_message(answer)]  # resent: not re-run
        assert done.task.id == task.id
        assert done.task.status.message.parts[0].text == "you chose teal"
        assert again.task.status.state == TaskState.TASK_STATE_COMPLETED
        assert len(again.task.history) == len(done.task.history)  # nothing more was said


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_a_task_is_followed_from_another_server(kind: str, tmp_path: Path) -> None:
    flag = tmp_path / "release"
    async with store_url(kind, tmp_path) as store:
        with (
            uvicorn_server(env(store), log=tmp_path / "runner.log") as runner,
            uvicorn_server(env(store), log=tmp_path / "reader.log") as reader,
        ):
            async with a2a_client(f"{runner}/a2a/gate") as client:
                request = said(str(flag))
                request.configuration.return_immediately = True
                [started] = [r async for r in client.send_message(request)]
            task_id = started.task.id

            async with a2a_client(f"{reader}/a2a/gate", streaming=True) as client:

                async def working() -> bool:
                    read = await client.get_task(GetTaskRequest(id=task_id))
                    return bool(read.status.state == TaskState.TASK_STATE_WORKING)

                await until(working, "the gate's task working, seen from the other server")
                updates = []
                async for response in client.subscribe(SubscribeToTaskRequest(id=task_id)):
                    updates.append(response)
                    if len(updates) == 1:
                        assert response.task.status.state == TaskState.TASK_STATE_WORKING
                        flag.write_text("go")
        end = updates[-1].status_update
        assert end.status.state == TaskState.TASK_STATE_COMPLETED
        assert not end.status.message.parts  # the answer is the artifact, sent once
        [artifact] = [u.artifact_update.artifact for u in updates if u.HasField("artifact_update")]
        assert artifact.parts[0].text == "released"
