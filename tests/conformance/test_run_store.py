"""Every session store keeps runs and schedules beside its sessions: stored and read back as
given, listed newest first in pages, changed only when the caller's expectation holds (so of
two processes racing for a run or a schedule exactly one wins), and deleted with their
session."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from cairn.errors import AlreadyExistsError
from cairn.sessions import (
    BaseSessionService,
    DatabaseSessionService,
    InMemorySessionService,
    SqliteSessionService,
)
from cairn.sessions.run_store import (
    CancelRequest,
    RunStatus,
    RunStore,
    StoredRun,
    StoredSchedule,
    run_store_for,
)
from cairn.sessions.sql.database import SqliteDatabase
from cairn.sessions.sql.store import SqlSessionStore

APP, USER = "app", "alice"
PENDING, RUNNING, PAUSED = RunStatus.PENDING, RunStatus.RUNNING, RunStatus.PAUSED
DONE, FAILED, CANCELLED = RunStatus.DONE, RunStatus.FAILED, RunStatus.CANCELLED


def new_run(run_id: str, session_id: str = "s1", **fields: object) -> StoredRun:
    defaults: dict[str, object] = {
        "app_name": APP,
        "user_id": USER,
        "session_id": session_id,
        "run_id": run_id,
        "seq": 0,
        "status": PENDING,
        "strategy": "enqueue",
        "request": {"newMessage": {"role": "user", "parts": [{"text": run_id}]}},
        "created_at": 1_700_000_000.25,
    }
    return StoredRun(**{**defaults, **fields})  # type: ignore[arg-type]


def new_schedule(schedule_id: str, next_run_at: float, **fields: object) -> StoredSchedule:
    defaults: dict[str, object] = {
        "app_name": APP,
        "user_id": USER,
        "schedule_id": schedule_id,
        "cron": "*/5 * * * *",
        "timezone": "Europe/Paris",
        "session_id": None,
        "request": {"newMessage": {"role": "user", "parts": [{"text": "report"}]}},
        "next_run_at": next_run_at,
        "created_at": 1_700_000_000.0,
    }
    return StoredSchedule(**{**defaults, **fields})  # type: ignore[arg-type]


@asynccontextmanager
async def another_process(store: BaseSessionService) -> AsyncIterator[RunStore]:
    """The run store as another process sees it: a second store on the same database, with
    connections of its own (the in-memory store is one process's: itself)."""
    if isinstance(store, InMemorySessionService):
        yield store.runs
        return
    assert isinstance(store, SqlSessionStore)
    database = store.database
    other: SqlSessionStore
    if isinstance(database, SqliteDatabase):
        other = SqliteSessionService(database.path)
    else:
        url = database.url.render_as_string(hide_password=False)  # type: ignore[attr-defined]
        other = DatabaseSessionService(url)
    try:
        yield run_store_for(other)
    finally:
        await other.close()


async def test_a_run_is_read_back_as_stored_with_increasing_seq(
    store: BaseSessionService,
) -> None:
    runs = run_store_for(store)
    full = new_run(
        "r1",
        seq=99,  # given by the store, not the caller
        strategy="interrupt",
        request={"newMessage": None, "stateDelta": {"n": 2**60, "x": [1.5, None]}},
        started_at=1_700_000_001.5,
        owner="host:1:abc",
        cancel=CancelRequest.ROLLBACK,
        error={"type": "ValueError", "message": "bad input"},
        webhook="https://example.com/hook",
        attempts=2,
        metadata={"label": "nightly", "ü": "✓"},
    )
    first = await runs.create_run(full)
    second = await runs.create_run(new_run("r2"))
    other_session = await runs.create_run(new_run("r1", session_id="s2"))

    assert first == dataclasses.replace(full, seq=first.seq)
    assert first.seq < second.seq < other_session.seq
    assert await runs.get_run(APP, USER, "s1", "r1") == first
    assert await runs.get_run(APP, USER, "s1", "r2") == second
    assert await runs.get_run(APP, USER, "s1", "nope") is None
    assert await runs.get_run(APP, "bob", "s1", "r1") is None


async def test_a_second_run_with_the_same_id_in_a_session_is_refused(
    store: BaseSessionService,
) -> None:
    runs = run_store_for(store)
    kept = await runs.create_run(new_run("r1"))
    with pytest.raises(AlreadyExistsError, match=r"session 's1' already has a run 'r1'"):
        await runs.create_run(new_run("r1", strategy="reject"))
    assert await runs.get_run(APP, USER, "s1", "r1") == kept


async def test_runs_are_listed_newest_first_per_session_and_per_user_in_pages(
    store: BaseSessionService,
) -> None:
    runs = run_store_for(store)
    made = [
        await runs.create_run(new_run(f"r{i}", session_id=f"s{i % 2}", status=status))
        for i, status in enumerate([DONE, FAILED, DONE, PAUSED, RUNNING, PENDING])
    ]
    await runs.create_run(new_run("theirs", session_id="s0", user_id="bob"))
    await runs.create_run(new_run("other-app", session_id="s0", app_name="other"))

    def ids(found: list[StoredRun]) -> list[str]:
        return [run.run_id for run in found]

    assert ids(await runs.list_runs(APP, USER)) == ["r5", "r4", "r3", "r2", "r1", "r0"]
    assert ids(await runs.list_runs(APP, USER, "s0")) == ["r4", "r2", "r0"]
    assert ids(await runs.list_runs(APP, USER, "s1")) == ["r5", "r3", "r1"]
    assert ids(await runs.list_runs(APP, "bob")) == ["theirs"]

    page = await runs.list_runs(APP, USER, limit=2)
    assert ids(page) == ["r5", "r4"]
    page = await runs.list_runs(APP, USER, limit=2, before_seq=page[-1].seq)
    assert ids(page) == ["r3", "r2"]
    page = await runs.list_runs(APP, USER, limit=2, before_seq=page[-1].seq)
    assert ids(page) == ["r1", "r0"]
    assert await runs.list_runs(APP, USER, limit=2, before_seq=page[-1].seq) == []
    assert ids(await runs.list_runs(APP, USER, "s1", before_seq=made[3].seq)) == ["r1"]

    assert ids(await runs.list_runs(APP, USER, statuses={DONE})) == ["r2", "r0"]
    active = await runs.list_runs(APP, USER, statuses=[PENDING, RUNNING])
    assert ids(active) == ["r5", "r4"]
    assert ids(await runs.list_runs(APP, USER, "s0", statuses={DONE, RUNNING}, limit=2)) == [
        "r4",
        "r2",
    ]
    assert await runs.list_runs(APP, USER, statuses=[]) == []


async def test_an_update_changes_the_run_only_when_its_expectation_holds(
    store: BaseSessionService,
) -> None:
    runs = run_store_for(store)
    run = await runs.create_run(new_run("r1", webhook="https://example.com/hook"))

    claimed = await runs.update_run(
        APP,
        USER,
        "s1",
        "r1",
        expect_status={PENDING},
        status=RUNNING,
        owner="worker-a",
        started_at=1_700_000_002.0,
        attempts=run.attempts + 1,
    )
    assert claimed == dataclasses.replace(
        run, status=RUNNING, owner="worker-a", started_at=1_700_000_002.0, attempts=1
    )
    assert await runs.get_run(APP, USER, "s1", "r1") == claimed

    # The status, or the owner, is not the expected one: nothing changes.
    assert await runs.update_run(APP, USER, "s1", "r1", expect_status={PENDING}, owner="b") is None
    settle = {"status": DONE, "ended_at": 1_700_000_003.0}
    assert await runs.update_run(APP, USER, "s1", "r1", expect_owner="worker-b", **settle) is None
    assert await runs.get_run(APP, USER, "s1", "r1") == claimed
    assert await runs.update_run(APP, USER, "s1", "missing", status=DONE) is None

    # Writing the values the row already has still reports a match.
    same = await runs.update_run(
        APP, USER, "s1", "r1", expect_status={RUNNING}, expect_owner="worker-a", status=RUNNING
    )
    assert same == claimed
    # No change at all: the expectation alone is checked.
    assert await runs.update_run(APP, USER, "s1", "r1", expect_status={RUNNING}) == claimed
    assert await runs.update_run(APP, USER, "s1", "r1", expect_status={DONE}) is None

    cancelled = await runs.update_run(
        APP, USER, "s1", "r1", expect_status={RUNNING}, cancel=CancelRequest.CANCEL
    )
    assert cancelled is not None and cancelled.cancel is CancelRequest.CANCEL
    failed = await runs.update_run(
        APP,
        USER,
        "s1",
        "r1",
        expect_status={RUNNING},
        expect_owner="worker-a",
        status=FAILED,
        ended_at=1_700_000_004.0,
        error={"type": "RuntimeError", "message": "Internal error", "errorId": "e1"},
        webhook_done=True,
    )
    assert failed is not None
    assert (failed.status, failed.ended_at, failed.webhook_done) == (FAILED, 1_700_000_004.0, True)
    assert failed.error == {"type": "RuntimeError", "message": "Internal error", "errorId": "e1"}

    # A paused run answered later runs again: same row, a new request, cleared fields.
    answered = await runs.update_run(
        APP,
        USER,
        "s1",
        "r1",
        status=PENDING,
        request={"continuing": True, "newMessage": None},
        cancel=None,
        error=None,
        ended_at=None,
        owner=None,
    )
    assert answered is not None and answered.seq == run.seq
    assert (answered.status, answered.request) == (
        PENDING,
        {"continuing": True, "newMessage": None},
    )
    assert (answered.cancel, answered.error, answered.ended_at, answered.owner) == (
        None,
        None,
        None,
        None,
    )

    with pytest.raises(TypeError, match=r"cannot change \['strategy'\]"):
        await runs.update_run(APP, USER, "s1", "r1", strategy="reject")


async def test_of_two_processes_claiming_a_pending_run_exactly_one_wins(
    store: BaseSessionService,
) -> None:
    runs = run_store_for(store)
    ids = [f"r{i}" for i in range(8)]
    for run_id in ids:
        await runs.create_run(new_run(run_id))

    async with another_process(store) as other:

        async def claim(run_store: RunStore, run_id: str, owner: str) -> StoredRun | None:
            return await run_store.update_run(
                APP, USER, "s1", run_id, expect_status={PENDING}, status=RUNNING, owner=owner
            )

        for run_id in ids:
            results = await asyncio.gather(claim(runs, run_id, "a"), claim(other, run_id, "b"))
            winners = [result for result in results if result is not None]
            assert len(winners) == 1, (run_id, results)
            stored = await other.get_run(APP, USER, "s1", run_id)
            assert stored == winners[0] and stored.owner in ("a", "b")


async def test_unfinished_runs_are_the_pending_and_running_ones_oldest_first(
    store: BaseSessionService,
) -> None:
    runs = run_store_for(store)
    for run_id, status, app in [
        ("r0", DONE, APP),
        ("r1", RUNNING, APP),
        ("r2", PAUSED, APP),
        ("r3", PENDING, "other"),
        ("r4", PENDING, APP),
        ("r5", CANCELLED, APP),
        ("r6", FAILED, APP),
    ]:
        await runs.create_run(new_run(run_id, status=status, app_name=app))

    assert [r.run_id for r in await runs.unfinished_runs()] == ["r1", "r3", "r4"]
    assert [r.run_id for r in await runs.unfinished_runs(app_name=APP)] == ["r1", "r4"]
    assert [r.run_id for r in await runs.unfinished_runs(limit=1)] == ["r1"]
    await runs.update_run(APP, USER, "s1", "r1", status=DONE)
    assert [r.run_id for r in await runs.unfinished_runs(app_name=APP)] == ["r4"]


async def test_undelivered_webhooks_are_of_runs_that_ended_or_paused_oldest_first(
    store: BaseSessionService,
) -> None:
    runs = run_store_for(store)
    hook = "https://example.com/hook"
    for run_id, status, webhook in [
        ("r0", DONE, hook),
        ("r1", DONE, None),
        ("r2", RUNNING, hook),
        ("r3", PAUSED, hook),
        ("r4", FAILED, hook),
        ("r5", PENDING, hook),
        ("r6", CANCELLED, hook),
    ]:
        await runs.create_run(new_run(run_id, status=status, webhook=webhook))
    await runs.create_run(new_run("r7", status=DONE, webhook=hook, webhook_done=True))

    def ids(found: list[StoredRun]) -> list[str]:
        return [run.run_id for run in found]

    assert ids(await runs.undelivered_webhooks()) == ["r0", "r3", "r4", "r6"]
    assert ids(await runs.undelivered_webhooks(limit=2)) == ["r0", "r3"]

    await runs.update_run(APP, USER, "s1", "r0", webhook_done=True)
    await runs.update_run(APP, USER, "s1", "r1", webhook_done=False)  # it has no webhook
    await runs.update_run(APP, USER, "s1", "r2", status=DONE)
    assert ids(await runs.undelivered_webhooks()) == ["r2", "r3", "r4", "r6"]

    # A paused run that is answered and ends again reports its new end.
    await runs.update_run(APP, USER, "s1", "r3", webhook_done=True)
    assert "r3" not in ids(await runs.undelivered_webhooks())
    await runs.update_run(APP, USER, "s1", "r3", status=DONE, webhook_done=False)
    assert "r3" in ids(await runs.undelivered_webhooks())
    no_hook = await runs.get_run(APP, USER, "s1", "r1")
    assert no_hook is not None and (no_hook.webhook, no_hook.webhook_done) == (None, False)
    marked = await runs.update_run(APP, USER, "s1", "r1", webhook_done=True)
    assert marked is not None and (marked.webhook, marked.webhook_done) == (None, True)
    assert await runs.get_run(APP, USER, "s1", "r1") == marked
    assert "r1" not in ids(await runs.undelivered_webhooks())


async def test_deleting_a_session_deletes_its_runs(store: BaseSessionService) -> None:
    runs = run_store_for(store)
    for session_id in ("s1", "s2"):
        await store.create_session(app_name=APP, user_id=USER, session_id=session_id)
        await runs.create_run(new_run("r1", session_id=session_id, status=DONE))
        await runs.create_run(new_run("r2", session_id=session_id))

    await store.delete_session(app_name=APP, user_id=USER, session_id="s1")

    assert await runs.get_run(APP, USER, "s1", "r1") is None
    assert await runs.list_runs(APP, USER, "s1") == []
    assert [r.run_id for r in await runs.list_runs(APP, USER)] == ["r2", "r1"]
    assert [(r.session_id, r.run_id) for r in await runs.unfinished_runs()] == [("s2", "r2")]


async def test_schedules_are_stored_listed_and_deleted(store: BaseSessionService) -> None:
    runs = run_store_for(store)
    nightly = new_schedule(
        "nightly",
        1_700_000_600.0,
        session_id="s1",
        strategy="reject",
        webhook="https://example.com/hook",
        last_run_id="r0",
        metadata={"team": "ops"},
        created_at=1_700_000_001.0,
    )
    assert await runs.create_schedule(nightly) == nightly
    hourly = await runs.create_schedule(new_schedule("hourly", 1_700_000_300.0, enabled=False))
    bobs = await runs.create_schedule(new_schedule("nightly", 1.0, user_id="bob"))
    await runs.create_schedule(new_schedule("x", 1.0, app_name="other"))
    with pytest.raises(AlreadyExistsError, match=r"user 'alice' already has a schedule 'nightly'"):
        await runs.create_schedule(new_schedule("nightly", 5.0))

    assert await runs.get_schedule(APP, USER, "nightly") == nightly
    assert await runs.get_schedule(APP, USER, "hourly") == hourly
    assert await runs.get_schedule(APP, USER, "missing") is None
    # Oldest first (by creation, then id).
    assert await runs.list_schedules(APP, USER) == [hourly, nightly]
    assert await runs.list_schedules(APP) == [hourly, bobs, nightly]
    assert await runs.list_schedules(APP, limit=1) == [hourly]

    assert await runs.delete_schedule(APP, USER, "nightly") is True
    assert await runs.delete_schedule(APP, USER, "nightly") is False
    assert await runs.get_schedule(APP, USER, "nightly") is None
    assert await runs.list_schedules(APP) == [hourly, bobs]


async def test_due_schedules_are_the_enabled_ones_whose_time_came_soonest_first(
    store: BaseSessionService,
) -> None:
    runs = run_store_for(store)
    for schedule_id, at, enabled in [
        ("later", 2_000.0, True),
        ("now", 1_000.0, True),
        ("earlier", 500.0, True),
        ("off", 100.0, False),
    ]:
        await runs.create_schedule(new_schedule(schedule_id, at, enabled=enabled))

    assert [s.schedule_id for s in await runs.due_schedules(1_000.0)] == ["earlier", "now"]
    assert [s.schedule_id for s in await runs.due_schedules(1_000.0, limit=1)] == ["earlier"]
    assert await runs.due_schedules(99.0) == []


async def test_of_two_processes_advancing_a_due_schedule_exactly_one_fires_it(
    store: BaseSessionService,
) -> None:
    runs = run_store_for(store)
    for i in range(6):
        await runs.create_schedule(new_schedule(f"sched{i}", 1_000.25))

    async with another_process(store) as other:
        for _ in range(6):
            seen_a = (await runs.due_schedules(1_000.25))[0]
            seen_b = [
                s
                for s in await other.due_schedules(1_000.25)
                if s.schedule_id == seen_a.schedule_id
            ]
            assert seen_b == [seen_a]
            results = await asyncio.gather(
                runs.advance_schedule(seen_a, next_run_at=1_300.25, last_run_id="from-a"),
                other.advance_schedule(seen_b[0], next_run_at=1_300.5, last_run_id="from-b"),
            )
            assert sorted(results) == [False, True], results
            stored = await runs.get_schedule(APP, USER, seen_a.schedule_id)
            assert stored is not None
            winner = (stored.next_run_at, stored.last_run_id)
            assert winner == ((1_300.25, "from-a") if results[0] else (1_300.5, "from-b"))

    # A schedule seen before it moved no longer advances; its current form does.
    stale = new_schedule("sched0", 1_000.25)
    assert await runs.advance_schedule(stale, next_run_at=9.0, last_run_id=None) is False
    current = await runs.get_schedule(APP, USER, "sched0")
    assert current is not None
    assert await runs.advance_schedule(current, next_run_at=1_600.0, last_run_id=None) is True
    moved = await runs.get_schedule(APP, USER, "sched0")
    assert moved is not None and (moved.next_run_at, moved.last_run_id) == (1_600.0, None)
    assert await runs.advance_schedule(stale, next_run_at=9.0, last_run_id="x") is False
    assert await runs.delete_schedule(APP, USER, "sched0")
    assert await runs.advance_schedule(moved, next_run_at=9.0, last_run_id="x") is False
