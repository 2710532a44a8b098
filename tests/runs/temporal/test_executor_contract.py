"""One runs suite for both executors: each test runs with the in-process executor and
with Temporal's (a real dev server, a worker in this process), on PostgreSQL: a session's
runs in arrival order, the strategies (reject, interrupt, rollback), cancel, webhooks,
streams rejoined after an event id, schedules firing once per due time."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import pytest_asyncio
from google.genai import types
from tests.runs.temporal.harness import (
    APP,
    USER,
    Harness,
    asyncpg_dsn,
    invocation_order,
    texts,
)
from tests.support.waiting import until

from cairn.errors import SessionBusyError
from cairn.runs.schedules import Scheduler, create_schedule, schedule_submitter
from cairn.runs.service import Runs
from cairn.runs.stream import run_events
from cairn.sessions.run_store import CancelRequest, RunStatus

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", params=["in-process", "in-process-sqlite", "temporal"])
async def harness(  # the conftest's, parametrized with the executor
    request: pytest.FixtureRequest, temporal: object, database: str, tmp_path: Path
) -> AsyncIterator[Harness]:
    """The harness with the executor the test is parametrized with, its sessions on
    PostgreSQL (or SQLite, in-process); the Temporal dev server is started once per module."""
    from cairn.sessions.database_session_service import DatabaseSessionService
    from cairn.sessions.sqlite_session_service import SqliteSessionService

    kind = str(request.param).removesuffix("-sqlite")
    store: Any = (
        SqliteSessionService(str(tmp_path / "sessions.db"))
        if request.param.endswith("-sqlite")
        else DatabaseSessionService(database)
    )
    gates = await asyncpg.connect(asyncpg_dsn(database))
    try:
        yield Harness(
            store=store,
            client=temporal.client,  # type: ignore[attr-defined]
            task_queue=f"q-{uuid.uuid4().hex[:8]}",
            gates=gates,
            kind=kind,
        )
    finally:
        await gates.close()
        await store.close()


async def test_runs_of_a_session_run_one_after_another_in_arrival_order(
    harness: Harness, session_id: str
) -> None:
    other = session_id + "-other"
    async with harness.worker():
        await harness.hold("model", session_id)  # the first run waits inside its model call
        first = await harness.submit(session_id, note=session_id)
        queued = [await harness.submit(session_id) for _ in range(6)]
        beside = [await harness.submit(other) for _ in range(3)]
        await harness.wait_step("model", session_id)
        if harness.kind == "temporal":  # its session's workflow holds the queue
            view = await harness.temporal.queue("recorder", "u", session_id)
            assert view.running == first.run_id
            assert view.queued == [run.run_id for run in queued]
        for run in beside:  # another session's runs do not wait for this one's
            assert (await harness.settled(run)).status is RunStatus.DONE
        await harness.release("model", session_id)
        for run in [first, *queued]:
            assert (await harness.settled(run)).status is RunStatus.DONE
    events = await harness.events(session_id)
    assert invocation_order(events) == [run.run_id for run in [first, *queued]]
    for run, note in [(first, session_id), *[(run, run.run_id) for run in queued]]:
        assert len(await harness.steps("tool", note)) == 1
        assert texts(events, run.run_id)[-1] == f"recorded {note}"
    assert invocation_order(await harness.events(other)) == [run.run_id for run in beside]


async def test_a_paused_run_answered_continues_as_the_same_run(
    harness: Harness, session_id: str
) -> None:
    note = f"ask {session_id}"  # the tool asks for a confirmation before it records
    runs = Runs(harness.runs, harness.store, harness.executor, harness.runner_for)
    async with harness.worker():
        run = await harness.submit(session_id, note=note)
        assert (await harness.settled(run)).status is RunStatus.PAUSED
        [asked] = await harness.runner.list_pending_interrupts(user_id=USER, session_id=session_id)
        assert asked.invocation_id == run.run_id and await harness.steps("tool", note) == []
        answer = types.UserContent(
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=asked.id, name=asked.name, response={"confirmed": True}
                    )
                )
            ]
        )
        again = await runs.create(APP, USER, session_id, new_message=answer)
        assert again.run_id == run.run_id  # the answer continues the paused run
        done = await harness.settled(again)
    assert done.status is RunStatus.DONE and done.attempts == 2
    assert [r.run_id for r in await harness.runs.list_runs(APP, USER, session_id)] == [run.run_id]
    events = await harness.events(session_id)
    assert invocation_order(events) == [run.run_id]
    assert texts(events, run.run_id)[-1] == f"recorded {note}"
    assert len(await harness.steps("tool", note)) == 1  # run once, after the confirmation


async def test_reject_refuses_a_run_while_the_session_is_busy(
    harness: Harness, session_id: str
) -> None:
    async with harness.worker():
        await harness.hold("tool", session_id)
        busy = await harness.submit(session_id, note=session_id)
        await harness.wait_step("tool", session_id)
        with pytest.raises(SessionBusyError) as refused:
            await harness.submit(session_id, strategy="reject")
        assert busy.run_id in str(refused.value)
        [rejected] = [
            run
            for run in await harness.runs.list_runs("recorder", "u", session_id)
            if run.strategy == "reject"
        ]
        assert rejected.status is RunStatus.CANCELLED
        await harness.release("tool", session_id)
        assert (await harness.settled(busy)).status is RunStatus.DONE
        accepted = await harness.submit(session_id, strategy="reject")  # free again
        assert (await harness.settled(accepted)).status is RunStatus.DONE
    assert invocation_order(await harness.events(session_id)) == [
        busy.run_id,
        accepted.run_id,
    ]


async def test_interrupt_stops_the_running_run_and_runs_before_the_queued_ones(
    harness: Harness, session_id: str
) -> None:
    async with harness.worker():
        await harness.hold("model", session_id)
        stopped = await harness.submit(session_id, note=session_id)
        await harness.wait_step("model", session_id)
        waiting = await harness.submit(session_id)
        urgent = await harness.submit(session_id, strategy="interrupt")
        ended = await harness.settled(stopped)
        assert ended.status is RunStatus.CANCELLED and ended.cancel is CancelRequest.INTERRUPT
        assert (await harness.settled(urgent)).status is RunStatus.DONE
        assert (await harness.settled(waiting)).status is RunStatus.DONE
        await harness.release("model", session_id)
    events = await harness.events(session_id)
    # What the stopped run committed (its message) stays; the interrupting run came next.
    assert invocation_order(events) == [stopped.run_id, urgent.run_id, waiting.run_id]
    assert texts(events, stopped.run_id) == [session_id]
    assert await harness.steps("tool", session_id) == []


async def test_rollback_rewinds_the_stopped_run_away_before_running(
    harness: Harness, session_id: str
) -> None:
    async with harness.worker():
        await harness.hold("model", session_id)
        stopped = await harness.submit(session_id, note=session_id)
        await harness.wait_step("model", session_id)
        instead = await harness.submit(session_id, strategy="rollback")
        ended = await harness.settled(stopped)
        assert ended.status is RunStatus.CANCELLED and ended.cancel is CancelRequest.ROLLBACK
        assert (await harness.settled(instead)).status is RunStatus.DONE
        await harness.release("model", session_id)
        assert (await harness.row(instead)).request["rewindBefore"] == stopped.run_id
    events = await harness.events(session_id)
    [rewind] = [e for e in events if e.actions.rewind_before_invocation_id]
    assert rewind.actions.rewind_before_invocation_id == stopped.run_id
    assert await harness.runner.list_pending_interrupts(user_id="u", session_id=session_id) == []
    assert texts(events, instead.run_id)[-1] == f"recorded {instead.run_id}"


async def test_cancel_stops_a_running_run_and_drops_a_queued_one(
    harness: Harness, session_id: str
) -> None:
    async with harness.worker():
        await harness.hold("model", session_id)
        running = await harness.submit(session_id, note=session_id)
        await harness.wait_step("model", session_id)
        queued = await harness.submit(session_id)
        after = await harness.submit(session_id)
        await harness.executor.cancel(queued, CancelRequest.CANCEL)
        await harness.executor.cancel(running, CancelRequest.CANCEL)
        ended = await harness.settled(running)
        assert ended.status is RunStatus.CANCELLED and ended.cancel is CancelRequest.CANCEL
        assert (await harness.settled(after)).status is RunStatus.DONE
        dropped = await harness.row(queued)
        assert dropped.status is RunStatus.CANCELLED and dropped.attempts == 0
        await harness.release("model", session_id)
    assert invocation_order(await harness.events(session_id)) == [
        running.run_id,
        after.run_id,
    ]


class Receiver(BaseHTTPRequestHandler):
    received: list[tuple[dict[str, str], dict[str, object]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Receiver.received.append((dict(self.headers), json.loads(body)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    finally:
        server.shutdown()
        server.server_close()


async def test_a_runs_webhook_is_delivered_after_it_ends(
    harness: Harness, session_id: str, receiver: str
) -> None:
    async with harness.worker():
        run = await harness.submit(session_id, webhook=receiver)
        assert (await harness.settled(run)).status is RunStatus.DONE

        async def delivered() -> bool:
            return (await harness.row(run)).webhook_done

        await until(delivered, "the webhook is delivered")
    [(headers, body)] = [item for item in Receiver.received if run.run_id in json.dumps(item[1])]
    assert headers["Cairn-Event"] == "run.done"
    assert json.dumps(body).count(run.run_id) >= 1


async def test_a_stream_rejoined_after_an_event_id_gives_the_rest_once(
    harness: Harness, session_id: str
) -> None:
    async with harness.worker():
        await harness.hold("model", session_id)
        run = await harness.submit(session_id, note=session_id)
        reader = run_events(harness.store, harness.runs, harness.executor, run)
        first = await anext(reader)  # its message, committed before the model is called
        await reader.aclose()  # the connection is lost
        await harness.wait_step("model", session_id)
        rejoined = run_events(harness.store, harness.runs, harness.executor, run, after=first.id)
        await harness.release("model", session_id)
        rest = [event async for event in rejoined]
        assert (await harness.settled(run)).status is RunStatus.DONE
    logged = [e.id for e in await harness.events(session_id) if e.invocation_id == run.run_id]
    assert [first.id, *[e.id for e in rest if not e.partial]] == logged
    assert texts(await harness.events(session_id), run.run_id)[-1] == f"recorded {session_id}"


async def test_a_schedule_fires_one_run_per_due_time(harness: Harness, session_id: str) -> None:
    await harness.store.create_session(app_name=APP, user_id=USER, session_id=session_id)
    stored = await harness.runs.create_schedule(
        create_schedule(
            APP,
            USER,
            cron="0 3 1 1 *",
            request={"newMessage": {"role": "user", "parts": [{"text": session_id}]}},
            session_id=session_id,
            schedule_id=session_id,
        )
    )
    async with harness.worker():
        if harness.kind == "temporal":  # a Temporal Schedule, fired by the Temporal server
            await harness.temporal.schedules.create(stored)
            await harness.temporal.schedules.trigger(APP, USER, session_id)
        else:  # the server's Scheduler, at the schedule's due time (asked twice)
            submit = schedule_submitter(harness.store, harness.executor)
            scheduler = Scheduler(harness.runs, submit, clock=lambda: stored.next_run_at)
            assert len(await scheduler.fire_due()) == 1
            assert await scheduler.fire_due() == []

        async def done() -> bool:
            runs = await harness.runs.list_runs(APP, USER, session_id)
            return bool(runs) and all(run.status is RunStatus.DONE for run in runs)

        await until(done, "the schedule's run is done")
        if harness.kind == "temporal":
            await harness.temporal.schedules.delete(APP, USER, session_id)
    [run] = await harness.runs.list_runs(APP, USER, session_id)
    assert run.metadata["scheduleId"] == session_id
    assert texts(await harness.events(session_id), run.run_id)[-1] == f"recorded {session_id}"
