"""The in-process executor through the ``Runs`` service (in memory and on SQLite): listing,
what reject and rollback leave in the rows and the state, cancels from another executor,
live streams and rejoins, take-over. What every executor does (order, strategies, cancel)
is in tests/runs/temporal/test_executor_contract.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tests.runs.agents import Gate, text
from tests.support.waiting import until

from cairn import Event, Runner, SessionBusyError
from cairn.errors import InvalidRunRequestError, RunNotFoundError, SessionNotFoundError
from cairn.runs.in_process import InProcessExecutor
from cairn.runs.service import Runs
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.run_store import CancelRequest, RunStatus, StoredRun, run_store_for
from cairn.sessions.sqlite_session_service import SqliteSessionService

APP, USER, SESSION = "demo", "u", "s"


class World:
    """One store, one Gate agent, and the executors (as processes would have) over them."""

    def __init__(self, service: BaseSessionService) -> None:
        self.service = service
        self.agent = Gate(name="gate", release=asyncio.Event(), holding=asyncio.Event())
        self.runner = Runner(agent=self.agent, app_name=APP, session_service=service)
        self.executors: list[InProcessExecutor] = []

    async def runner_for(self, app_name: str) -> Runner:
        assert app_name == APP
        return self.runner

    def runs(self, *, cancel_poll: float = 0.05, max_runs: int | None = None) -> Runs:
        executor = InProcessExecutor(
            run_store_for(self.service),
            self.service,
            self.runner_for,
            cancel_poll=cancel_poll,
            max_runs=max_runs,
        )
        self.executors.append(executor)
        return Runs(run_store_for(self.service), self.service, executor, self.runner_for)

    async def texts(self) -> list[str]:
        session = await self.service.get_session(app_name=APP, user_id=USER, session_id=SESSION)
        assert session is not None
        return [
            p.text or ""
            for e in session.events
            if e.content and e.content.parts
            for p in e.content.parts
        ]


@pytest.fixture(params=["memory", "sqlite"])
async def world(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[World]:
    service: BaseSessionService = (
        InMemorySessionService()
        if request.param == "memory"
        else SqliteSessionService(str(tmp_path / "runs.db"))
    )
    await service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    made = World(service)
    yield made
    made.agent.release.set()
    for executor in made.executors:
        await executor.close()
    await service.close()


async def start(runs: Runs, message: str, **options: Any) -> StoredRun:
    return await runs.create(APP, USER, SESSION, new_message=text(message), **options)


async def test_runs_of_a_session_execute_in_arrival_order(world: World) -> None:
    runs = world.runs()
    first = await start(runs, "hold")
    queued = [await start(runs, f"m{i}") for i in range(5)]
    assert all(run.status is RunStatus.PENDING for run in queued)
    await world.agent.holding.wait()
    world.agent.release.set()
    ended = [await runs.wait(run) for run in [first, *queued]]
    assert [run.status for run in ended] == [RunStatus.DONE] * 6
    said = [t for t in await world.texts() if not t.startswith("echo")]
    assert said == ["hold", "holding", "released", "m0", "m1", "m2", "m3", "m4"]
    page = await runs.list(APP, USER, SESSION, limit=4)
    assert [r.run_id for r in page.runs] == [r.run_id for r in reversed(queued)][:4]
    rest = await runs.list(APP, USER, SESSION, limit=4, cursor=page.next_cursor)
    assert [r.run_id for r in rest.runs] == [queued[0].run_id, first.run_id]
    assert rest.next_cursor is None


async def test_max_runs_keeps_other_sessions_runs_pending_until_a_place_frees(
    world: World,
) -> None:
    await world.service.create_session(app_name=APP, user_id=USER, session_id="other")
    runs = world.runs(max_runs=1)
    (executor,) = world.executors
    first = await start(runs, "hold")
    await world.agent.holding.wait()
    elsewhere = await runs.create(APP, USER, "other", new_message=text("m0"))

    async def waits_for_a_place() -> bool:
        return executor.waiting_for_place == 1

    await until(waits_for_a_place, "the other session's run waiting for the one place")
    got = await runs.get(APP, USER, "other", elsewhere.run_id)
    assert got.status is RunStatus.PENDING  # its turn came, but the one place is taken
    world.agent.release.set()
    assert (await runs.wait(first)).status is RunStatus.DONE
    assert (await runs.wait(elsewhere)).status is RunStatus.DONE
    with pytest.raises(ValueError, match="max_runs"):
        InProcessExecutor(run_store_for(world.service), world.service, world.runner_for, max_runs=0)


async def test_reject_refuses_a_busy_session(world: World) -> None:
    runs = world.runs()
    await start(runs, "hold")
    with pytest.raises(SessionBusyError) as busy:
        await start(runs, "no", strategy="reject")
    [rejected, _] = (await runs.list(APP, USER, SESSION)).runs
    assert rejected.status is RunStatus.CANCELLED and rejected.error is not None
    assert (
        rejected.error["type"] == "SessionBusyError"
        and str(busy.value) in rejected.error["message"]
    )
    world.agent.release.set()


async def test_rollback_also_rewinds_the_stopped_run_away(world: World) -> None:
    runs = world.runs()
    held = await start(runs, "hold")
    await world.agent.holding.wait()
    again = await runs.wait(await start(runs, "instead", strategy="rollback"))
    assert again.status is RunStatus.DONE
    assert again.request["rewindBefore"] == held.run_id
    session = await world.service.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    assert session is not None and session.state == {"turns": 1}  # the held turn is undone
    stopped = await runs.get(APP, USER, SESSION, held.run_id)
    assert stopped.cancel is CancelRequest.ROLLBACK


async def test_a_cancel_from_another_executor_stops_the_run(world: World) -> None:
    here, there = world.runs(), world.runs()
    held = await start(here, "hold")
    await world.agent.holding.wait()
    stopped = await there.cancel(APP, USER, SESSION, held.run_id, wait=True)
    assert stopped.status is RunStatus.CANCELLED and stopped.owner == here.executor.owner  # type: ignore[attr-defined]
    assert await world.texts() == ["hold", "holding"]


async def test_stream_from_the_start_and_rejoined(world: World) -> None:
    runs = world.runs()
    started = await runs.start(APP, USER, SESSION, new_message=text("hold"))
    assert started.events is not None
    seen: list[Event] = []
    async for event in started.events:
        seen.append(event)
        if event.content and event.content.parts and event.content.parts[0].text == "holding":
            break
    # Rejoined after the first event (another reader, as after a lost connection).
    rejoined = runs.stream(started.run, last_event_id=seen[0].id)
    world.agent.release.set()
    rest = [event async for event in rejoined]
    replies = [e.content.parts[0].text for e in rest if e.content and e.content.parts]
    assert replies == ["holding", "released"]
    everything = [event async for event in runs.stream(started.run)]
    assert [e.id for e in everything] == [seen[0].id, *[e.id for e in rest]]


async def test_a_listener_for_the_end_only_hears_no_event(world: World) -> None:
    runs = world.runs()
    held = await start(runs, "hold")
    ends = runs.executor.live(held, events=False)
    everything = runs.executor.live(held)
    assert ends is not None and everything is not None
    await world.agent.holding.wait()
    world.agent.release.set()
    assert [event async for event in ends] == []  # it stops once the run has ended
    heard = [event async for event in everything]
    assert (await runs.wait(held)).status is RunStatus.DONE
    assert len(heard) >= 3  # the message, "holding", "released"


async def test_a_closed_executor_gives_its_runs_back_to_the_next_one(world: World) -> None:
    first = world.runs()
    held = await start(first, "hold")
    queued = await start(first, "queued")
    await world.agent.holding.wait()
    await first.executor.close()
    for run in (held, queued):
        row = await first.get(APP, USER, SESSION, run.run_id)
        assert row.status is RunStatus.PENDING and row.owner == ""
    world.agent.release.set()
    second = world.runs()
    taken = await second.executor.take_over_abandoned()  # type: ignore[attr-defined]
    assert [run.run_id for run in taken] == [held.run_id, queued.run_id]
    assert (await second.wait(held)).status is RunStatus.DONE
    assert (await second.wait(queued)).status is RunStatus.DONE
    texts = await world.texts()
    assert texts.count("hold") == 1 and texts.count("queued") == 1  # never sent again
    assert texts[-2:] == ["queued", "echo: queued"]


async def test_what_create_refuses(world: World) -> None:
    runs = world.runs()
    with pytest.raises(SessionNotFoundError):
        await runs.create(APP, USER, "missing", new_message=text("x"))
    with pytest.raises(InvalidRunRequestError, match="new_message"):
        await runs.create(APP, USER, SESSION)
    with pytest.raises(InvalidRunRequestError, match="strategy"):
        await runs.create(APP, USER, SESSION, new_message=text("x"), strategy="shout")
    with pytest.raises(RunNotFoundError, match="'nope'"):
        await runs.get(APP, USER, SESSION, "nope")


async def test_waiting_for_a_run_in_another_executor(world: World) -> None:
    here, there = world.runs(), world.runs()
    held = await start(here, "hold")
    await world.agent.holding.wait()
    # Queued in another executor: it waits for the earlier run, wherever that runs.
    behind = await start(there, "behind")
    world.agent.release.set()
    assert (await there.wait(behind)).status is RunStatus.DONE
    assert (await here.get(APP, USER, SESSION, held.run_id)).ended_at is not None
    await until(lambda: _async_true(world), "the log having both runs", bound=60)
    texts = await world.texts()
    assert texts.index("released") < texts.index("behind")


async def _async_true(world: World) -> bool:
    return "echo: behind" in await world.texts()
