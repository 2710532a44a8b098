"""Cron schedules as Temporal Schedules: each firing creates one run and queues it on its
session's workflow, where it runs like any other."""

from __future__ import annotations

import time

import pytest
from google.genai import types
from temporalio.client import ScheduleHandle
from temporalio.service import RPCError
from tests.runs.temporal.harness import APP, USER, Harness, texts
from tests.support.waiting import until

from cairn.sessions.run_store import RunStatus, StoredRun, StoredSchedule

pytestmark = pytest.mark.asyncio(loop_scope="module")


def schedule(schedule_id: str, session_id: str | None) -> StoredSchedule:
    message = types.UserContent(parts=[types.Part(text=f"from {schedule_id}")])
    return StoredSchedule(
        app_name=APP,
        user_id=USER,
        schedule_id=schedule_id,
        cron="0 9 * * 1",
        timezone="Europe/Paris",
        session_id=session_id,
        request={"newMessage": message.model_dump(mode="json", by_alias=True, exclude_none=True)},
        next_run_at=time.time() + 3600,
        created_at=time.time(),
        metadata={"team": "ops"},
    )


async def fired(harness: Harness, schedule_id: str, count: int) -> list[StoredRun]:
    """The runs the schedule started, once there are ``count`` and all have ended."""
    found: list[StoredRun] = []

    async def ready() -> bool:
        runs = [
            run
            for run in await harness.runs.list_runs(APP, USER)
            if run.metadata.get("scheduleId") == schedule_id
        ]
        found[:] = runs
        return len(runs) >= count and all(run.status.ended for run in runs)

    await until(ready, f"{count} runs of schedule {schedule_id} end")
    return found


async def test_a_schedule_fires_runs_into_its_session(harness: Harness, session_id: str) -> None:
    await harness.store.create_session(app_name=APP, user_id=USER, session_id=session_id)
    stored = await harness.runs.create_schedule(schedule("weekly", session_id))
    schedules = harness.temporal.schedules
    await schedules.create(stored)
    handle: ScheduleHandle = harness.client.get_schedule_handle(
        f"cairn-schedule/{harness.task_queue}/recorder/u/weekly"
    )
    described = await handle.describe()
    [calendar] = described.schedule.spec.calendars  # Temporal keeps the cron as a calendar
    assert [(r.start, r.end) for r in calendar.hour] == [(9, 9)]
    assert [(r.start, r.end) for r in calendar.day_of_week] == [(1, 1)]
    assert described.schedule.spec.time_zone_name == "Europe/Paris"
    async with harness.worker():
        await schedules.trigger(APP, USER, "weekly")
        [first] = await fired(harness, "weekly", 1)
        await schedules.trigger(APP, USER, "weekly")
        runs = await fired(harness, "weekly", 2)
    assert {run.status for run in runs} == {RunStatus.DONE}
    assert {run.session_id for run in runs} == {session_id}
    assert all(run.metadata["team"] == "ops" for run in runs)
    events = await harness.events(session_id)
    for run in runs:
        assert texts(events, run.run_id) == ["from weekly", "recorded from weekly"]
    assert (await harness.runs.get_schedule(APP, USER, "weekly")).last_run_id in {  # type: ignore[union-attr]
        run.run_id for run in runs
    }
    assert first.run_id in {run.run_id for run in runs}
    assert await schedules.delete(APP, USER, "weekly") is True
    with pytest.raises(RPCError):
        await handle.describe()
    assert await schedules.delete(APP, USER, "weekly") is False


async def test_a_schedule_without_a_session_starts_each_run_in_a_new_one(
    harness: Harness,
) -> None:
    stored = await harness.runs.create_schedule(schedule("fresh", None))
    await harness.temporal.schedules.create(stored)
    async with harness.worker():
        await harness.temporal.schedules.trigger(APP, USER, "fresh")
        await fired(harness, "fresh", 1)  # (two firings in one second would be one)
        await harness.temporal.schedules.trigger(APP, USER, "fresh")
        runs = await fired(harness, "fresh", 2)
    assert len({run.session_id for run in runs}) == 2
    assert {run.status for run in runs} == {RunStatus.DONE}
    await harness.temporal.schedules.delete(APP, USER, "fresh")


async def test_a_deleted_schedule_fires_no_run(harness: Harness) -> None:
    stored = await harness.runs.create_schedule(schedule("gone", None))
    await harness.temporal.schedules.create(stored)
    await harness.runs.delete_schedule(APP, USER, "gone")  # its row went first
    handle = harness.client.get_schedule_handle(
        f"cairn-schedule/{harness.task_queue}/recorder/u/gone"
    )
    async with harness.worker():
        await harness.temporal.schedules.trigger(APP, USER, "gone")

        async def fired_once() -> bool:
            return (await handle.describe()).info.num_actions >= 1

        await until(fired_once, "the schedule fires")
        [action] = (await handle.describe()).info.recent_actions
        result = await harness.client.get_workflow_handle(
            action.action.workflow_id  # type: ignore[attr-defined]
        ).result()
    assert result is None
    runs = await harness.runs.list_runs(APP, USER)
    assert [r for r in runs if r.metadata.get("scheduleId") == "gone"] == []
