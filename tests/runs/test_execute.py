"""``execute_run``: one run claimed, run (or resumed, never twice) and settled in its row."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from tests.runs.agents import ASK_ID, Asker, Broken, Echo, Holding, text

from cairn import BaseAgent, Event, Runner
from cairn.runs.execute import execute_run
from cairn.runs.request import RunRequest
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.run_store import CancelRequest, RunStatus, RunStore, StoredRun, run_store_for
from cairn.sessions.sqlite_session_service import SqliteSessionService

APP, USER, SESSION = "demo", "u", "s"
OWNER = "runs@test"


@pytest.fixture(params=["memory", "sqlite"])
async def service(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        store: BaseSessionService = InMemorySessionService()
    else:
        store = SqliteSessionService(str(tmp_path / "runs.db"))
        if getattr(store, "runs", None) is None:
            pytest.skip("the SQL run store is not on this branch yet")
    await store.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    yield store
    await store.close()


def runner_of(agent: BaseAgent, service: BaseSessionService) -> Runner:
    return Runner(agent=agent, app_name=APP, session_service=service)


async def new_run(store: RunStore, run_id: str, request: RunRequest) -> StoredRun:
    return await store.create_run(
        StoredRun(
            app_name=APP,
            user_id=USER,
            session_id=SESSION,
            run_id=run_id,
            seq=0,
            status=RunStatus.PENDING,
            strategy="enqueue",
            request=request.to_json(),
            created_at=time.time(),
        )
    )


async def invocation(service: BaseSessionService, run_id: str) -> list[Event]:
    return await service.list_invocation_events(
        app_name=APP, user_id=USER, session_id=SESSION, invocation_id=run_id
    )


def texts(events: list[Event]) -> list[str]:
    return [p.text or "" for e in events if e.content and e.content.parts for p in e.content.parts]


def test_request_json_round_trip() -> None:
    request = RunRequest(
        new_message=text("hi"),
        state_delta={"k": 1},
        streaming=True,
        custom_metadata={"m": "x"},
        rewind_before="e-1",
    )
    data = request.to_json()
    assert data["newMessage"] == {"parts": [{"text": "hi"}], "role": "user"}
    assert data["stateDelta"] == {"k": 1} and data["rewindBefore"] == "e-1"
    assert RunRequest.from_json(data) == request
    assert RunRequest.from_json({}) == RunRequest()
    with pytest.raises(ValueError, match="stateDelta"):
        RunRequest.from_json({"stateDelta": [1]})


async def test_a_run_starts_and_ends_done(service: BaseSessionService) -> None:
    store = run_store_for(service)
    run = await new_run(store, "r1", RunRequest(new_message=text("hi"), state_delta={"x": 1}))
    seen: list[Event] = []
    done = await execute_run(
        runner_of(Echo(name="echo"), service), store, run, owner=OWNER, on_event=seen.append
    )
    assert done.status is RunStatus.DONE and done.owner == OWNER and done.attempts == 1
    assert done.started_at is not None and done.ended_at is not None and done.error is None
    events = await invocation(service, "r1")
    assert texts(events) == ["hi", "echo: hi"]
    assert [e.id for e in seen] == [e.id for e in events]  # the user's message too
    session = await service.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    assert session is not None and session.state == {"x": 1, "turns": 1}


async def test_a_claimed_run_is_not_run_by_another(service: BaseSessionService) -> None:
    store = run_store_for(service)
    run = await new_run(store, "r1", RunRequest(new_message=text("hi")))
    runner = runner_of(Echo(name="echo"), service)
    await execute_run(runner, store, run, owner=OWNER)
    again = await execute_run(runner, store, run, owner="other")
    assert again.status is RunStatus.DONE and again.owner == OWNER and again.attempts == 1
    assert texts(await invocation(service, "r1")) == ["hi", "echo: hi"]


async def test_resume_after_the_owner_died_does_not_send_the_message_again(
    service: BaseSessionService,
) -> None:
    store = run_store_for(service)
    run = await new_run(store, "r1", RunRequest(new_message=text("hi")))
    # The owner claimed it and committed the message, then died.
    session = await service.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    assert session is not None
    await service.append_event(
        session, Event(author="user", invocation_id="r1", content=text("hi"))
    )
    run = (
        await store.update_run(
            APP, USER, SESSION, "r1", status=RunStatus.RUNNING, owner="dead", attempts=1
        )
        or run
    )
    done = await execute_run(
        runner_of(Echo(name="echo"), service), store, run, owner=OWNER, take_over=True
    )
    assert done.status is RunStatus.DONE and done.owner == OWNER and done.attempts == 2
    assert texts(await invocation(service, "r1")) == ["hi", "echo: hi"]


async def test_a_finished_invocation_is_not_run_again(service: BaseSessionService) -> None:
    store = run_store_for(service)
    run = await new_run(store, "r1", RunRequest(new_message=text("hi")))
    runner = runner_of(Echo(name="echo"), service)
    await execute_run(runner, store, run, owner="dead")
    # It finished, but its owner died before the row said so.
    run = await store.update_run(APP, USER, SESSION, "r1", status=RunStatus.RUNNING) or run
    done = await execute_run(runner, store, run, owner=OWNER, take_over=True)
    assert done.status is RunStatus.DONE and done.owner == OWNER
    assert texts(await invocation(service, "r1")) == ["hi", "echo: hi"]
    session = await service.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    assert session is not None and session.state == {"turns": 1}


def answer(value: str) -> types.Content:
    response = types.FunctionResponse(id=ASK_ID, name="ask", response={"result": value})
    return types.Content(role="user", parts=[types.Part(function_response=response)])


async def test_a_paused_run_is_answered_once(service: BaseSessionService) -> None:
    store = run_store_for(service)
    runner = runner_of(Asker(name="asker"), service)
    run = await new_run(store, "r1", RunRequest(new_message=text("go")))
    paused = await execute_run(runner, store, run, owner=OWNER)
    assert paused.status is RunStatus.PAUSED
    # Answered: the same row goes back to pending with the answer as its request.
    answered = await store.update_run(
        APP,
        USER,
        SESSION,
        "r1",
        expect_status={RunStatus.PAUSED},
        status=RunStatus.PENDING,
        request=RunRequest(new_message=answer("yes"), continuing=True).to_json(),
    )
    assert answered is not None
    done = await execute_run(runner, store, answered, owner=OWNER)
    assert done.status is RunStatus.DONE and done.attempts == 2
    events = await invocation(service, "r1")
    assert texts(events)[-1] == "answered: {'result': 'yes'}"
    # Its owner died after the answer was committed: resuming does not send it again.
    again = await store.update_run(APP, USER, SESSION, "r1", status=RunStatus.RUNNING) or done
    await execute_run(runner, store, again, owner=OWNER, take_over=True)
    assert await invocation(service, "r1") == events


async def test_resume_of_an_answer_whose_owner_died_before_committing_it(
    service: BaseSessionService,
) -> None:
    store = run_store_for(service)
    runner = runner_of(Asker(name="asker"), service)
    run = await new_run(store, "r1", RunRequest(new_message=text("go")))
    await execute_run(runner, store, run, owner=OWNER)
    # Claimed with the answer by an owner that died before storing it.
    claimed = await store.update_run(
        APP,
        USER,
        SESSION,
        "r1",
        status=RunStatus.RUNNING,
        owner="dead",
        request=RunRequest(new_message=answer("no"), continuing=True).to_json(),
    )
    assert claimed is not None
    done = await execute_run(runner, store, claimed, owner=OWNER, take_over=True)
    assert done.status is RunStatus.DONE
    assert texts(await invocation(service, "r1"))[-1] == "answered: {'result': 'no'}"


async def test_a_failure_is_settled_without_internals(service: BaseSessionService) -> None:
    store = run_store_for(service)
    run = await new_run(store, "r1", RunRequest(new_message=text("hi")))
    failed = await execute_run(runner_of(Broken(name="broken"), service), store, run, owner=OWNER)
    assert failed.status is RunStatus.FAILED and failed.error is not None
    assert failed.error["type"] == "RuntimeError" and "errorId" in failed.error
    assert "secret" not in failed.error["message"]


async def test_a_cairn_error_keeps_its_message(service: BaseSessionService) -> None:
    store = run_store_for(service)
    run = await new_run(store, "r1", RunRequest(new_message=answer("x"), continuing=True))
    failed = await execute_run(runner_of(Echo(name="echo"), service), store, run, owner=OWNER)
    assert failed.status is RunStatus.FAILED and failed.error is not None
    assert failed.error["type"] == "InterruptNotPendingError"
    assert ASK_ID in failed.error["message"] and "errorId" not in failed.error


async def test_a_cancelled_run_keeps_what_it_committed(service: BaseSessionService) -> None:
    store = run_store_for(service)
    agent = Holding(name="holding", release=asyncio.Event(), started=asyncio.Event())
    run = await new_run(store, "r1", RunRequest(new_message=text("hi")))
    task = asyncio.create_task(execute_run(runner_of(agent, service), store, run, owner=OWNER))
    await agent.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    row = await store.get_run(APP, USER, SESSION, "r1")
    assert row is not None and row.status is RunStatus.CANCELLED and row.ended_at is not None
    assert texts(await invocation(service, "r1")) == ["hi", "started"]


async def test_a_cancel_from_another_process_stops_at_the_next_event(
    service: BaseSessionService,
) -> None:
    store = run_store_for(service)
    agent = Holding(name="holding", release=asyncio.Event(), started=asyncio.Event())
    run = await new_run(store, "r1", RunRequest(new_message=text("hi")))
    task = asyncio.create_task(execute_run(runner_of(agent, service), store, run, owner=OWNER))
    await agent.started.wait()
    # Another process: the row asks for the cancel, and the lease is taken over.
    await store.update_run(APP, USER, SESSION, "r1", cancel=CancelRequest.CANCEL)
    key = {"app_name": APP, "user_id": USER, "session_id": SESSION}
    holder = await service.acquire_session_lease(**key, holder="canceller", ttl=30)
    assert isinstance(holder, str) and holder
    taken = await service.acquire_session_lease(**key, holder="canceller", ttl=30, replacing=holder)
    assert not isinstance(taken, str)
    await service.release_session_lease(**key, holder="canceller")
    agent.release.set()
    row = await task
    assert row.status is RunStatus.CANCELLED and row.cancel is CancelRequest.CANCEL
    assert texts(await invocation(service, "r1")) == ["hi", "started"]


async def test_a_cancelled_pending_run_never_starts(service: BaseSessionService) -> None:
    store = run_store_for(service)
    run = await new_run(store, "r1", RunRequest(new_message=text("hi")))
    await store.update_run(
        APP, USER, SESSION, "r1", expect_status={RunStatus.PENDING}, status=RunStatus.CANCELLED
    )
    row = await execute_run(runner_of(Echo(name="echo"), service), store, run, owner=OWNER)
    assert row.status is RunStatus.CANCELLED and row.attempts == 0
    assert await invocation(service, "r1") == []


async def test_rollback_rewinds_the_stopped_run_first(service: BaseSessionService) -> None:
    store = run_store_for(service)
    runner = runner_of(Echo(name="echo"), service)
    first = await new_run(store, "r1", RunRequest(new_message=text("one")))
    await execute_run(runner, store, first, owner=OWNER)
    second = await new_run(store, "r2", RunRequest(new_message=text("two"), rewind_before="r1"))
    done = await execute_run(runner, store, second, owner=OWNER)
    assert done.status is RunStatus.DONE
    session = await service.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    assert session is not None and session.state == {"turns": 1}  # r1's turn was rewound
    assert any(e.actions.rewind_before_invocation_id == "r1" for e in session.events)
    # Executed again (its owner died after the rewind): the rewind is not an error.
    again = dataclasses.replace(
        await store.update_run(APP, USER, SESSION, "r2", status=RunStatus.RUNNING) or done
    )
    assert (await execute_run(runner, store, again, owner=OWNER, take_over=True)).status is (
        RunStatus.DONE
    )
