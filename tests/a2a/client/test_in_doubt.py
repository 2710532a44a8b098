"""A process killed (SIGKILL) between sending a remote agent its message and recording the
answer: on resume the in-doubt rule applies, and a message is never silently sent twice.

The remote holds its task until the test releases it, so the kill always lands mid-call:
after the send's record is committed and the remote has the message. Then, continuing the
invocation in a new process: a streamed task's id was recorded, so the task is read
(``tasks/get``); a remote that says it ignores a repeated messageId gets the same message
again; otherwise the user is asked (``in_doubt``), and only ``{"rerun": true}`` sends it
again. A message answering a waiting task, lost the same way, is found in the task's history.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tests.a2a.client.steps import answer, texts, turn
from tests.hitl.driver import SESSION, USER, read_outcome
from tests.hitl.driver import Outcome as HitlOutcome
from tests.support.a2a_scripted_server import ScriptedA2aServer, a2a_scripted_server
from tests.support.databases import postgres_database
from tests.support.waiting import BOUND_SECONDS, until

from cairn import Event, InMemoryRunner
from cairn.agents.remote_a2a_agent import RemoteA2aAgent
from cairn.sessions import BaseSessionService
from cairn.sessions.factory import session_service_from_url

WORKER = Path(__file__).resolve().parent / "worker.py"
ROOT = Path(__file__).resolve().parents[3]
CRASH = {"CAIRN_A2A_TTL": "1", "CAIRN_A2A_WAIT": "30"}


class Outcome(HitlOutcome):
    def texts(self) -> list[str]:
        return [
            p.text
            for e in self.events
            if e.author == "helper" and e.content
            for p in e.content.parts or []
            if p.text and not p.thought
        ]


def parse(output: str) -> Outcome:
    return read_outcome(output, Outcome())


class Client:
    """Steps of one local app (a RemoteA2aAgent) on one store, each in a new process."""

    def __init__(self, store_url: str, card_url: str) -> None:
        self.store_url, self.card_url = store_url, card_url

    def start(self, step: dict[str, Any]) -> subprocess.Popen[str]:
        command = [sys.executable, str(WORKER), self.store_url, self.card_url, json.dumps(step)]
        return subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, **CRASH},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def step(self, step: dict[str, Any]) -> Outcome:
        process = self.start(step)
        out, err = process.communicate(timeout=BOUND_SECONDS)
        assert process.returncode == 0, err
        return parse(out)

    async def killed_in_the_call(
        self, step: dict[str, Any], server: ScriptedA2aServer, record: str, calls: int = 1
    ) -> None:
        """Run ``step``, SIGKILL it once the remote has the message and the store holds the
        ``record`` (``call``: the send; ``accepted``: the streamed task's id), then let the
        remote finish its task."""
        process = self.start(step)
        store = session_service_from_url(self.store_url)

        async def in_the_call() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"the step ended before the kill: {process.communicate()}")
            kinds = [
                (e.custom_metadata or {}).get("a2a:record") for e in await session_events(store)
            ]
            return len(server.received()) >= calls and kinds.count(record) >= calls

        try:
            await until(in_the_call, f"the remote has the message and the store a {record!r}")
        finally:
            process.kill()
            process.communicate(timeout=BOUND_SECONDS)
            await store.close()
        assert process.returncode == -9
        server.release()


async def session_events(store: BaseSessionService) -> list[Event]:
    session = await store.get_session(app_name="app", user_id=USER, session_id=SESSION)
    return [] if session is None else session.events


@pytest.fixture(params=["sqlite", "postgres"])
async def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "sessions.db")
    else:
        async with postgres_database() as url:  # type: ignore[attr-defined]
            yield url


async def test_a_streamed_task_is_read_again_not_sent_again(store_url: str) -> None:
    with a2a_scripted_server() as server:
        server.script({"answer": "charged 30", "hold": True})
        client = Client(store_url, server.card_url)
        await client.killed_in_the_call({"say": "charge 30"}, server, "accepted")
        [stopped] = client.step({"pending_only": True}).pending
        assert stopped.kind == "interrupted" and stopped.name == "cairn_a2a_await_task"
        refused = client.step({"say": "hello?"})
        assert refused.error is not None and refused.error[0] == "InvocationInterruptedError"
        done = client.step({"continue": stopped.invocation_id})
        assert done.texts() == ["charged 30"] and done.pending == []
        assert len(server.received()) == 1 and len(server.executed()) == 1


async def test_a_remote_that_ignores_repeats_gets_the_same_message_again(store_url: str) -> None:
    with a2a_scripted_server("--no-streaming", "--dedup") as server:
        server.script({"answer": "charged 30", "hold": True}, {"answer": "charged twice!"})
        client = Client(store_url, server.card_url)
        await client.killed_in_the_call({"say": "charge 30"}, server, "call")
        [stopped] = client.step({"pending_only": True}).pending
        assert stopped.name == "cairn_a2a_send_message"
        done = client.step({"continue": stopped.invocation_id})
        assert done.texts() == ["charged 30"] and done.pending == []
        first, again = server.received()
        assert first["messageId"] == again["messageId"] == stopped.args["messageId"]
        assert server.executed() == [first["messageId"]]  # the remote ran it once


async def test_otherwise_the_user_is_asked_and_may_give_the_answer(store_url: str) -> None:
    with a2a_scripted_server("--no-streaming") as server:
        server.script({"answer": "charged 30", "hold": True}, {"answer": "charged twice!"})
        client = Client(store_url, server.card_url)
        await client.killed_in_the_call({"say": "charge 30"}, server, "call")
        [stopped] = client.step({"pending_only": True}).pending
        asked = client.step({"continue": stopped.invocation_id})
        [doubt] = asked.pending
        assert doubt.kind == "in_doubt" and doubt.author == "helper"
        assert doubt.function_call is not None and doubt.function_call.id == stopped.id
        assert doubt.message is not None and "may or may not have received it" in doubt.message
        assert len(server.received()) == 1  # asked, not sent again
        done = client.step({"answer": [[doubt.id, doubt.name, {"result": "charged 30"}]]})
        assert done.texts() == ["charged 30"] and done.pending == []
        assert len(server.received()) == 1 and len(server.executed()) == 1


async def test_a_rerun_the_user_approves_sends_the_same_message_again_once(
    tmp_path: Path,
) -> None:
    with a2a_scripted_server("--no-streaming") as server:
        server.script({"answer": "charged 30", "hold": True}, {"answer": "again", "hold": True})
        client = Client(str(tmp_path / "sessions.db"), server.card_url)
        await client.killed_in_the_call({"say": "charge 30"}, server, "call")
        [stopped] = client.step({"pending_only": True}).pending
        [doubt] = client.step({"continue": stopped.invocation_id}).pending
        rerun = {"answer": [[doubt.id, doubt.name, {"rerun": True}]]}
        await client.killed_in_the_call(rerun, server, "call", calls=2)  # dies in the rerun too
        first, again = server.received()
        assert first["messageId"] == again["messageId"]  # the same idempotency key
        [stopped] = client.step({"pending_only": True}).pending
        [doubt] = client.step({"continue": stopped.invocation_id}).pending
        assert doubt.kind == "in_doubt" and len(server.received()) == 2  # asked again
        done = client.step({"answer": [[doubt.id, doubt.name, {"rerun": True}]]})
        assert done.texts() == ["no script"] and len(server.received()) == 3


async def test_an_answer_lost_on_its_way_to_a_waiting_task_is_found_in_its_history(
    tmp_path: Path,
) -> None:
    with a2a_scripted_server("--no-streaming") as server:
        server.script({"ask": "Which card?"}, {"answer": "charged {input}", "hold": True})
        client = Client(str(tmp_path / "sessions.db"), server.card_url)
        client.step({"say": "charge 30"})
        [waiting] = client.step({"pending_only": True}).pending
        answer = {"answer": [[waiting.id, waiting.name, {"result": "VISA"}]]}
        await client.killed_in_the_call(answer, server, "call", calls=2)
        [stopped] = client.step({"pending_only": True}).pending
        assert stopped.args["taskId"] != ""
        done = client.step({"continue": stopped.invocation_id})
        assert done.texts() == ["charged VISA"] and done.pending == []
        assert len(server.received()) == 2 and len(server.executed()) == 2


SILENCE = 1.0
"""Seconds the agent waits for an answer that the held remote never sends before it is
released: the read always times out, however fast or slow the machine."""


async def test_a_connection_lost_after_the_send_is_in_doubt_too() -> None:
    with a2a_scripted_server("--no-streaming") as server:
        server.script({"answer": "charged 30", "hold": True})
        agent = RemoteA2aAgent(name="helper", agent_card=server.card_url, timeout=SILENCE)
        runner = InMemoryRunner(agent=agent, app_name="app")
        await runner.session_service.create_session(
            app_name="app", user_id=USER, session_id=SESSION
        )
        await turn(runner, "charge 30")
        [doubt] = await runner.list_pending_interrupts(user_id=USER, session_id=SESSION)
        assert doubt.kind == "in_doubt" and doubt.message is not None
        assert "the connection broke" in doubt.message and len(server.received()) == 1
        server.release()
        done = await turn(runner, answer(doubt.id, doubt.name, {"result": "charged 30"}))
        assert texts(done) == ["charged 30"] and len(server.executed()) == 1
        await runner.close()
