"""The API server on Temporal (``--executor temporal://...``): /run's events come from
the workers through the log, runs say who executes them, and a schedule created over HTTP
is a Temporal Schedule whose firing is one run."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.runs.temporal.harness import APP, RECORDER, USER, Harness
from tests.server.harness import uvicorn_server
from tests.support.waiting import BOUND_SECONDS, until

from cairn.sessions.run_store import RunStatus

pytestmark = pytest.mark.asyncio(loop_scope="module")


@contextlib.contextmanager
def api_server(harness: Harness, database: str, log: Path) -> Iterator[str]:
    target = harness.client.service_client.config.target_host
    env = {
        "CAIRN_AGENTS_DIR": str(RECORDER.parent),
        "CAIRN_STORE": database,
        "CAIRN_EXECUTOR": f"temporal://{target}",
        "CAIRN_TASK_QUEUE": harness.task_queue,
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    with uvicorn_server(env, log=log) as url:
        yield url


async def test_run_on_temporal_returns_the_events_the_worker_committed(
    harness: Harness, database: str, session_id: str, tmp_path: Path
) -> None:
    await harness.store.create_session(app_name=APP, user_id=USER, session_id=session_id)
    with api_server(harness, database, tmp_path / "server.log") as url:
        async with harness.worker(), httpx.AsyncClient(base_url=url, timeout=BOUND_SECONDS) as c:
            body = {
                "appName": APP,
                "userId": USER,
                "sessionId": session_id,
                "newMessage": {"role": "user", "parts": [{"text": session_id}]},
            }
            answered = await c.post("/run", json=body)
            assert answered.status_code == 200, answered.text
            events = answered.json()
            runs = await c.get(f"/cairn/apps/{APP}/users/{USER}/sessions/{session_id}/runs")
    parts = [p for e in events for p in (e.get("content") or {}).get("parts", [])]
    texts = [p["text"] for p in parts if "text" in p]
    assert texts[-1] == f"recorded {session_id}"
    logged = await harness.events(session_id)
    assert [e["id"] for e in events] == [e.id for e in logged if not e.partial][1:]
    [run] = runs.json()["runs"]
    assert run["executor"] == "temporal" and run["status"] == "done"
    assert len(await harness.steps("tool", session_id)) == 1  # executed once, by the worker


async def test_a_schedule_created_over_http_fires_one_run_on_temporal(
    harness: Harness, database: str, session_id: str, tmp_path: Path
) -> None:
    await harness.store.create_session(app_name=APP, user_id=USER, session_id=session_id)
    schedules = f"/cairn/apps/{APP}/users/{USER}/schedules"
    with api_server(harness, database, tmp_path / "server.log") as url:
        async with harness.worker(), httpx.AsyncClient(base_url=url, timeout=BOUND_SECONDS) as c:
            created = await c.post(
                schedules,
                json={
                    "cron": "0 3 1 1 *",
                    "sessionId": session_id,
                    "scheduleId": session_id,
                    "request": {"newMessage": {"role": "user", "parts": [{"text": session_id}]}},
                },
            )
            assert created.status_code == 201, created.text
            await harness.temporal.schedules.trigger(APP, USER, session_id)

            async def fired() -> bool:
                runs = await harness.runs.list_runs(APP, USER, session_id)
                return any(r.status is RunStatus.DONE for r in runs)

            await until(fired, "the schedule's run is done")
            assert (await c.delete(f"{schedules}/{session_id}")).status_code == 204
    [run] = await harness.runs.list_runs(APP, USER, session_id)
    assert run.metadata["scheduleId"] == session_id
    assert len(await harness.steps("tool", session_id)) == 1


async def test_a_run_submitted_while_temporal_is_down_gets_503_and_never_dangles(
    harness: Harness, database: str, session_id: str, tmp_path: Path
) -> None:
    from cairn.runs.temporal import start_dev_server

    await harness.store.create_session(app_name=APP, user_id=USER, session_id=session_id)
    own = await start_dev_server()  # a Temporal server of this test's own, to stop
    target = own.client.service_client.config.target_host
    env = {
        "CAIRN_AGENTS_DIR": str(RECORDER.parent),
        "CAIRN_STORE": database,
        "CAIRN_EXECUTOR": f"temporal://{target}",
        "CAIRN_TASK_QUEUE": harness.task_queue,
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    runs = f"/cairn/apps/{APP}/users/{USER}/sessions/{session_id}/runs"
    try:
        with uvicorn_server(env, log=tmp_path / "server.log") as url:
            await own.shutdown()
            async with httpx.AsyncClient(base_url=url, timeout=BOUND_SECONDS) as c:
                body = {"newMessage": {"role": "user", "parts": [{"text": session_id}]}}
                refused = await c.post(runs, json=body)
                listed = (await c.get(runs)).json()["runs"]
    finally:
        with contextlib.suppress(Exception):
            await own.shutdown()
    assert refused.status_code == 503, refused.text
    detail = refused.json()["detail"]
    assert "run executor" in detail and refused.json()["errorId"] in detail
    assert target not in refused.text  # the cause is in the server's log, not the answer
    # The run's row says what happened; it is not left pending for a workflow that never
    # got it, and its message was never committed.
    [run] = listed
    assert run["status"] == "cancelled" and run["error"]["type"] == "TemporalUnavailableError"
    assert await harness.events(session_id) == []
