"""Cron schedules: next times in a time zone (daylight saving included), checks at
creation, and schedulers that fire each due time exactly once, with an injected clock."""

from __future__ import annotations

import asyncio
import collections
import itertools
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from tests.conformance.test_run_store import another_process
from tests.support.waiting import BOUND_SECONDS

from cairn.errors import InvalidIdError, StoreUnavailableError
from cairn.events.event import Event
from cairn.runs.executor import RunExecutor
from cairn.runs.schedules import (
    InvalidScheduleError,
    Scheduler,
    create_schedule,
    next_fire_time,
    schedule_submitter,
)
from cairn.sessions import BaseSessionService, InMemorySessionService
from cairn.sessions.run_store import (
    CancelRequest,
    RunStatus,
    RunStore,
    StoredRun,
    StoredSchedule,
    run_store_for,
)

REQUEST = {"newMessage": {"role": "user", "parts": [{"text": "send the daily report"}]}}


def at(text: str) -> float:
    """An ISO time with its offset, as seconds since the epoch."""
    return datetime.fromisoformat(text).timestamp()


def utc(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M")


class Clock:
    """The time the schedulers see; the test moves it."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Submitted:
    """A ``submit`` that records each firing (schedule id, the due time fired)."""

    def __init__(self, name: str = "s") -> None:
        self.name = name
        self.firings: list[tuple[str, float, str]] = []
        self.arrived = asyncio.Event()

    async def __call__(self, schedule: StoredSchedule) -> str:
        await asyncio.sleep(0)  # let another scheduler interleave here
        run_id = f"run-{self.name}-{len(self.firings)}"
        self.firings.append((schedule.schedule_id, schedule.next_run_at, self.name))
        self.arrived.set()
        return run_id


# -- next times -------------------------------------------------------------------------------


def test_local_times_follow_daylight_saving() -> None:
    # New York springs forward on 2026-03-08: 09:00 local is 14:00 UTC, then 13:00 UTC.
    first = next_fire_time("0 9 * * *", "America/New_York", at("2026-03-07T00:00:00+00:00"))
    second = next_fire_time("0 9 * * *", "America/New_York", first)
    assert (utc(first), utc(second)) == ("2026-03-07 14:00", "2026-03-08 13:00")
    # Berlin: 02:30 does not exist on 2026-03-29 -> right after the jump (03:00 CEST).
    skipped = next_fire_time("30 2 * * *", "Europe/Berlin", at("2026-03-28T12:00:00+01:00"))
    assert skipped == at("2026-03-29T03:00:00+02:00")
    assert next_fire_time("30 2 * * *", "Europe/Berlin", skipped) == at("2026-03-30T02:30:00+02:00")
    # 02:30 happens twice on 2026-10-25: a fixed-hour schedule fires once, the first time.
    twice = next_fire_time("30 2 * * *", "Europe/Berlin", at("2026-10-24T12:00:00+02:00"))
    assert twice == at("2026-10-25T02:30:00+02:00")
    assert next_fire_time("30 2 * * *", "Europe/Berlin", twice) == at("2026-10-26T02:30:00+01:00")


def test_every_real_half_hour_fires_through_the_repeated_hour() -> None:
    times = [at("2026-10-25T01:45:00+02:00")]
    for _ in range(5):
        times.append(next_fire_time("*/30 * * * *", "Europe/Berlin", times[-1]))
    gaps = [b - a for a, b in itertools.pairwise(times[1:])]
    assert gaps == [1800.0] * 4  # 02:00, 02:30 CEST, 02:00, 02:30 CET, 03:00 CET


def test_the_next_time_is_strictly_after() -> None:
    noon = at("2026-01-01T12:00:00+00:00")
    assert next_fire_time("0 * * * *", "UTC", noon) == noon + 3600
    assert next_fire_time("0 * * * *", "UTC", noon - 0.5) == noon


# -- checks at creation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "field", "says"),
    [
        ({"cron": "61 * * * *"}, "cron", "bad minute"),
        ({"cron": "0 9 * *"}, "cron", "has 4 fields, not 5"),
        ({"cron": "0 0 9 * * *"}, "cron", "has 6 fields, not 5"),
        ({"cron": "@daily"}, "cron", "has 1 fields"),
        ({"cron": "0 0 30 2 *"}, "cron", "bad day-of-month"),
        ({"timezone": "Mars/Olympus"}, "timezone", "no time zone 'Mars/Olympus'"),
        ({"timezone": ""}, "timezone", "not a zone name"),
        ({"strategy": "queue"}, "strategy", "'queue' is not a multitask strategy"),
        ({"webhook": "ftp://hooks.example.com/x"}, "webhook", "http:// or https://"),
        ({"request": {}}, "request.newMessage", "missing"),
        ({"request": {"newMessage": {"parts": "hi"}}}, "request.newMessage", "parts"),
        ({"request": {**REQUEST, "continuing": True}}, "request.continuing", "new invocations"),
        ({"request": {**REQUEST, "newMesage": 1}}, "request", "unknown keys"),
        ({"request": {**REQUEST, "stateDelta": [1]}}, "request.stateDelta", "not an object"),
        ({"request": "run it"}, "request", "it is str"),
    ],
)
def test_a_bad_schedule_is_refused_naming_its_field(
    changes: dict[str, Any], field: str, says: str
) -> None:
    given: dict[str, Any] = {"cron": "0 9 * * 1-5", "request": REQUEST, **changes}
    with pytest.raises(InvalidScheduleError) as refused:
        create_schedule("app", "u1", **given)
    assert refused.value.field == field
    message = str(refused.value)
    assert f"schedule's {field} is invalid" in message and says.lower() in message.lower()
    assert "e.g." in message or "Give" in message or "Use" in message or "Fix" in message


def test_bad_ids_are_refused() -> None:
    with pytest.raises(InvalidIdError, match="session id"):
        create_schedule("app", "u1", cron="* * * * *", request=REQUEST, session_id="")
    with pytest.raises(InvalidIdError, match="schedule id"):
        create_schedule("app", "u1", cron="* * * * *", request=REQUEST, schedule_id="a\x00")


def test_a_checked_schedule_is_due_at_its_first_time() -> None:
    now = at("2026-06-01T10:17:00+02:00")
    schedule = create_schedule(
        "app",
        "u1",
        cron="  0   9 * * 1-5 ",
        timezone="Europe/Berlin",
        request={**REQUEST, "stateDelta": {"k": 1}},
        now=now,
        metadata={"team": "ops"},
    )
    assert schedule.next_run_at == at("2026-06-02T09:00:00+02:00")  # Monday's 09:00 passed
    assert schedule.cron == "0 9 * * 1-5" and schedule.created_at == now
    assert schedule.schedule_id.startswith("sch-") and schedule.session_id is None
    assert schedule.request == {**REQUEST, "stateDelta": {"k": 1}}
    assert schedule.strategy == "enqueue" and schedule.metadata == {"team": "ops"}


# -- firing -----------------------------------------------------------------------------------


@pytest.fixture
def store(sessions: BaseSessionService) -> RunStore:
    return run_store_for(sessions)


class Rendezvous:
    """A store whose ``due_schedules`` answers only once both schedulers have read: both see
    the same due schedules, as two processes polling at the same moment do."""

    def __init__(self, store: RunStore, both_read: asyncio.Barrier) -> None:
        self._store = store
        self._both_read = both_read

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def due_schedules(self, now: float, *, limit: int = 100) -> list[StoredSchedule]:
        due = await self._store.due_schedules(now, limit=limit)
        await self._both_read.wait()
        return due


async def test_two_schedulers_fire_each_due_time_exactly_once(
    sessions: BaseSessionService, store: RunStore
) -> None:
    start = at("2026-03-07T22:00:00+00:00")
    clock = Clock(start)
    every_quarter = create_schedule("app", "u1", cron="*/15 * * * *", request=REQUEST, now=start)
    new_york_nine = create_schedule(
        "app", "u2", cron="0 9 * * *", timezone="America/New_York", request=REQUEST, now=start
    )
    for schedule in (every_quarter, new_york_nine):
        await store.create_schedule(schedule)
    a, b = Submitted("a"), Submitted("b")
    both_read = asyncio.Barrier(2)
    async with another_process(sessions) as other:
        first = Scheduler(Rendezvous(store, both_read), a, clock=clock)  # type: ignore[arg-type]
        second = Scheduler(Rendezvous(other, both_read), b, clock=clock)  # type: ignore[arg-type]
        while clock.now < start + 2 * 86_400:  # two days, five minutes at a time
            clock.now += 300
            await asyncio.gather(first.fire_due(), second.fire_due())
    fired = a.firings + b.firings
    counts = collections.Counter((schedule, due) for schedule, due, _ in fired)
    assert set(counts.values()) == {1}
    quarters = sorted(due for s, due, _ in fired if s == every_quarter.schedule_id)
    assert quarters == [start + 900 * k for k in range(1, 2 * 96 + 1)]
    nines = sorted(due for s, due, _ in fired if s == new_york_nine.schedule_id)
    assert [utc(t) for t in nines] == ["2026-03-08 13:00", "2026-03-09 13:00"]  # EDT
    assert a.firings and b.firings  # both took part
    final = await store.get_schedule("app", "u1", every_quarter.schedule_id)
    assert final is not None and final.last_run_id is not None
    last = max(fired, key=lambda f: (f[0] == every_quarter.schedule_id, f[1]))
    assert final.last_run_id.startswith(f"run-{last[2]}-")


async def test_missed_firings_fire_once_then_continue_from_now(store: RunStore) -> None:
    start = at("2026-05-01T08:00:00+00:00")
    schedule = create_schedule("app", "u1", cron="0 * * * *", request=REQUEST, now=start)
    await store.create_schedule(schedule)
    clock = Clock(start + 5 * 3600 + 600)  # no scheduler ran for five hours
    submitted = Submitted()
    [firing] = await Scheduler(store, submitted, clock=clock).fire_due()
    assert firing.run_id == "run-s-0" and firing.schedule.next_run_at == start + 3600
    assert firing.next_run_at == start + 6 * 3600
    assert await Scheduler(store, submitted, clock=clock).fire_due() == []
    stored = await store.get_schedule("app", "u1", schedule.schedule_id)
    assert stored is not None
    assert stored.next_run_at == start + 6 * 3600 and stored.last_run_id == "run-s-0"


async def test_a_failed_submit_is_reported_and_the_due_time_is_not_fired_again(
    store: RunStore,
) -> None:
    start = at("2026-05-01T08:00:00+00:00")
    await store.create_schedule(
        create_schedule("app", "u1", cron="0 * * * *", request=REQUEST, now=start)
    )

    async def refuse(schedule: StoredSchedule) -> str:
        raise RuntimeError("the executor is closed")

    clock = Clock(start + 3600)
    [firing] = await Scheduler(store, refuse, clock=clock).fire_due()
    assert firing.run_id is None and firing.error == "RuntimeError: the executor is closed"
    assert await Scheduler(store, refuse, clock=clock).fire_due() == []


async def test_disabled_schedules_do_not_fire(store: RunStore) -> None:
    start = at("2026-05-01T08:00:00+00:00")
    await store.create_schedule(
        create_schedule("app", "u1", cron="* * * * *", request=REQUEST, now=start, enabled=False)
    )
    assert await Scheduler(store, Submitted(), clock=Clock(start + 3600)).fire_due() == []


@pytest.fixture
async def running(store: RunStore) -> AsyncIterator[tuple[Scheduler, Clock, Submitted]]:
    clock = Clock(at("2026-05-01T08:00:00+00:00"))
    submitted = Submitted()
    # It would sleep far longer than the test waits: only a wake-up makes it fire in time.
    async with Scheduler(store, submitted, clock=clock, max_sleep=10 * BOUND_SECONDS) as loop:
        yield loop, clock, submitted


async def test_the_loop_wakes_when_a_schedule_is_added(
    running: tuple[Scheduler, Clock, Submitted],
) -> None:
    scheduler, clock, submitted = running
    schedule = create_schedule("app", "u1", cron="*/5 * * * *", request=REQUEST, now=clock.now)
    clock.now = schedule.next_run_at
    await scheduler.add(schedule)
    await asyncio.wait_for(submitted.arrived.wait(), BOUND_SECONDS)
    assert submitted.firings == [(schedule.schedule_id, schedule.next_run_at, "s")]
    # Time moves on; told so, it fires the next due time.
    submitted.arrived.clear()
    clock.now += 300
    scheduler.wake()
    await asyncio.wait_for(submitted.arrived.wait(), BOUND_SECONDS)
    assert [due for _, due, _ in submitted.firings] == [
        schedule.next_run_at,
        schedule.next_run_at + 300,
    ]
    assert await scheduler.remove("app", "u1", schedule.schedule_id)
    assert not await scheduler.remove("app", "u1", schedule.schedule_id)


# -- submitting runs --------------------------------------------------------------------------


class Accepting(RunExecutor):
    """An executor that accepts runs and executes none (what is tested is what reaches it)."""

    name = "accepting"

    def __init__(self) -> None:
        self.runs: list[StoredRun] = []

    async def submit(self, run: StoredRun) -> StoredRun:
        self.runs.append(run)
        return run

    async def cancel(self, run: StoredRun, how: CancelRequest) -> None:
        raise AssertionError("nothing is cancelled here")

    def live(self, run: StoredRun) -> AsyncIterator[Event] | None:
        return None


async def test_each_firing_without_a_session_gets_a_new_session(
    sessions: BaseSessionService, store: RunStore
) -> None:
    executor = Accepting()
    start = at("2026-05-01T08:00:00+00:00")
    schedule = create_schedule(
        "app", "u1", cron="0 * * * *", request=REQUEST, now=start, metadata={"team": "ops"}
    )
    await store.create_schedule(schedule)
    clock = Clock(start)
    scheduler = Scheduler(store, schedule_submitter(sessions, executor), clock=clock)
    for hour in (1, 2):
        clock.now = start + hour * 3600
        [firing] = await scheduler.fire_due()
        assert firing.run_id == executor.runs[-1].run_id
    assert len({run.session_id for run in executor.runs}) == 2
    for run in executor.runs:
        stored = await store.get_run("app", "u1", run.session_id, run.run_id)
        assert stored is not None and stored.status is RunStatus.PENDING
        assert stored.request == {"continuing": False, **REQUEST}
        assert stored.metadata == {"team": "ops", "scheduleId": schedule.schedule_id}
        assert stored.run_id.startswith("e-")
        assert await sessions.get_session(app_name="app", user_id="u1", session_id=run.session_id)


async def test_a_schedule_with_a_session_runs_in_it() -> None:
    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name="app", user_id="u1")
    executor = Accepting()
    start = at("2026-05-01T08:00:00+00:00")
    await sessions.runs.create_schedule(
        create_schedule(
            "app",
            "u1",
            cron="0 * * * *",
            request=REQUEST,
            now=start,
            session_id=session.id,
            strategy="reject",
        )
    )
    submit = schedule_submitter(sessions, executor)
    await Scheduler(sessions.runs, submit, clock=Clock(start + 3600)).fire_due()
    [run] = executor.runs
    assert run.session_id == session.id and run.strategy == "reject"


class Unreachable:
    """A store whose database is down for the first ``failures`` reads of due schedules."""

    def __init__(self, store: RunStore, failures: int) -> None:
        self._store = store
        self.failures = failures

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def due_schedules(self, now: float, *, limit: int = 100) -> list[StoredSchedule]:
        if self.failures:
            self.failures -= 1
            raise StoreUnavailableError("the database at db:5432 cannot be reached")
        return await self._store.due_schedules(now, limit=limit)


async def test_the_loop_outlives_a_store_that_is_down() -> None:
    runs = InMemorySessionService().runs
    start = at("2026-05-01T08:00:00+00:00")
    schedule = create_schedule("app", "u1", cron="0 * * * *", request=REQUEST, now=start)
    await runs.create_schedule(schedule)
    flaky = Unreachable(runs, failures=3)
    submitted = Submitted()
    clock = Clock(start + 3600)
    loop = Scheduler(flaky, submitted, clock=clock, retry_delay=0.01)  # type: ignore[arg-type]
    async with loop:
        await asyncio.wait_for(submitted.arrived.wait(), BOUND_SECONDS)
    assert flaky.failures == 0 and len(submitted.firings) == 1
