"""Runs over HTTP against real servers (uvicorn), on SQLite and PostgreSQL: background runs,
their order on one session, the multitask strategies, cancels, streams rejoined on another
server, and a killed server's runs finished by the next one.

The fault apps block on files the test names: ``gate`` in a tool call, ``ponder`` in its
model call, ``relay`` in the model call after a tool that records each of its runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text as sql
from sqlalchemy.ext.asyncio import create_async_engine
from tests.server.harness import (
    FAULT_AGENTS,
    ROOT,
    free_port,
    sse_payloads,
    text,
    uvicorn_server,
)
from tests.support.databases import POSTGRES, service_unavailable
from tests.support.waiting import BOUND_SECONDS, wait_until

USER = "/cairn/apps/{app}/users/ada"
SESSION = USER + "/sessions/{session}"


# -- stores and servers --------------------------------------------------------------------------
async def _admin(statement: str) -> None:
    engine = create_async_engine(f"{POSTGRES}/postgres", isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            await connection.execute(sql(statement))
    finally:
        await engine.dispose()


@contextlib.contextmanager
def postgres_store() -> Iterator[str]:
    """A fresh PostgreSQL database's URL, dropped afterwards."""
    name = f"cairn_test_{uuid.uuid4().hex[:12]}"
    try:
        asyncio.run(_admin(f"CREATE DATABASE {name}"))
    except Exception as exc:
        service_unavailable(f"no PostgreSQL at {POSTGRES}: {str(exc).splitlines()[0]}")
    try:
        yield f"{POSTGRES}/{name}"
    finally:
        asyncio.run(_admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))


@contextlib.contextmanager
def store_of(kind: str, home: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield str(home / "sessions.db")
    else:
        with postgres_store() as url:
            yield url


def server(store: str, home: Path, name: str = "server") -> contextlib.AbstractContextManager[str]:
    env = {"CAIRN_AGENTS_DIR": str(FAULT_AGENTS), "CAIRN_STORE": store}
    return uvicorn_server(env, log=home / f"{name}.log")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    home = tmp_path_factory.mktemp(f"runs-{request.param}")
    with store_of(request.param, home) as store, server(store, home) as url:
        yield url


@pytest.fixture
def client(served: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served, timeout=BOUND_SECONDS) as made:
        yield made


# -- helpers ---------------------------------------------------------------------------------------
def new_session(client: httpx.Client, app: str) -> str:
    session = f"s-{uuid.uuid4().hex[:8]}"
    created = client.post(f"/apps/{app}/users/ada/sessions", json={"sessionId": session})
    assert created.status_code == 200, created.text
    return session


def submit(client: httpx.Client, app: str, session: str, message: str, **extra: Any) -> Any:
    body = {"newMessage": text(message), **extra}
    return client.post(SESSION.format(app=app, session=session) + "/runs", json=body)


def started(client: httpx.Client, app: str, session: str, message: str, **extra: Any) -> Any:
    answer = submit(client, app, session, message, **extra)
    assert answer.status_code == 202, answer.text
    return answer.json()


def run_of(client: httpx.Client, app: str, session: str, run_id: str) -> Any:
    answer = client.get(SESSION.format(app=app, session=session) + f"/runs/{run_id}")
    assert answer.status_code == 200, answer.text
    return answer.json()


def wait_for(client: httpx.Client, app: str, session: str, run_id: str, *statuses: str) -> Any:
    found: dict[str, Any] = {}

    def reached() -> bool:
        found.update(run_of(client, app, session, run_id))
        return found["status"] in statuses

    wait_until(reached, f"run {run_id} being {' or '.join(statuses)}")
    return found


def log_of(client: httpx.Client, app: str, session: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = client.get(f"/apps/{app}/users/ada/sessions/{session}").json()[
        "events"
    ]
    return events


def user_texts(events: list[dict[str, Any]]) -> list[str]:
    return [
        part["text"]
        for event in events
        if event["author"] == "user"
        for part in (event.get("content") or {}).get("parts", [])
        if "text" in part
    ]


def replies(events: list[dict[str, Any]]) -> list[str]:
    return [
        part["text"]
        for event in events
        if event["author"] != "user"
        for part in (event.get("content") or {}).get("parts", [])
        if "text" in part
    ]


def flag(tmp_path: Path, name: str, *, released: bool = False) -> Path:
    path = tmp_path / name
    if released:
        path.touch()
    return path


def sse_blocks(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    """The server-sent events of a stream: each block's fields (``id``, ``event``, ``data``)."""
    block: dict[str, str] = {}
    for line in lines:
        if not line:
            if block:
                yield block
            block = {}
            continue
        field, _, value = line.partition(": ")
        block[field] = value


# -- background runs ----------------------------------------------------------------------
def test_a_background_run_is_accepted_at_once_and_completes(
    client: httpx.Client, tmp_path: Path
) -> None:
    session = new_session(client, "gate")
    gate = flag(tmp_path, "release")
    run = started(client, "gate", session, str(gate), metadata={"ticket": 7})
    # Answered while the tool still waits for its flag.
    assert run["status"] in ("pending", "running") and run["executor"] == "in-process"
    assert run["metadata"] == {"ticket": 7} and run["strategy"] == "enqueue"
    assert run["request"]["newMessage"] == text(str(gate))
    wait_until(
        lambda: any(
            "functionCall" in part
            for event in log_of(client, "gate", session)
            for part in (event.get("content") or {}).get("parts", [])
        ),
        "the tool call committed",
    )
    assert run_of(client, "gate", session, run["runId"])["status"] == "running"
    gate.touch()
    done = wait_for(client, "gate", session, run["runId"], "done")
    assert done["attempts"] == 1 and done["endedAt"] >= done["startedAt"]
    assert replies(log_of(client, "gate", session)) == ["released"]
    listed = client.get(SESSION.format(app="gate", session=session) + "/runs").json()
    assert [r["runId"] for r in listed["runs"]] == [run["runId"]]
    mine = client.get(USER.format(app="gate") + "/runs", params={"status": "done"}).json()
    assert run["runId"] in [r["runId"] for r in mine["runs"]]
    missing = client.get(SESSION.format(app="gate", session=session) + "/runs/nope")
    assert missing.status_code == 404 and "'nope'" in missing.json()["detail"]
    no_session = submit(client, "gate", "missing", "x")
    assert no_session.status_code == 404 and "'missing'" in no_session.json()["detail"]


def test_five_runs_of_a_session_run_in_arrival_order(client: httpx.Client, tmp_path: Path) -> None:
    session = new_session(client, "gate")
    first = flag(tmp_path, "hold")
    messages = [str(first)] + [str(flag(tmp_path, f"m{i}", released=True)) for i in range(4)]
    runs = [started(client, "gate", session, message) for message in messages]
    assert [r["status"] for r in runs[1:]] == ["pending"] * 4
    first.touch()
    for run in runs:
        assert wait_for(client, "gate", session, run["runId"], "done", "failed")["status"] == "done"
    assert user_texts(log_of(client, "gate", session)) == messages
    listed = client.get(SESSION.format(app="gate", session=session) + "/runs", params={"limit": 3})
    page = listed.json()
    assert [r["runId"] for r in page["runs"]] == [r["runId"] for r in reversed(runs)][:3]
    rest = client.get(
        SESSION.format(app="gate", session=session) + "/runs",
        params={"limit": 3, "cursor": page["nextCursor"]},
    ).json()
    assert [r["runId"] for r in rest["runs"]] == [runs[1]["runId"], runs[0]["runId"]]


def test_reject_on_a_busy_session_is_409(client: httpx.Client, tmp_path: Path) -> None:
    session = new_session(client, "ponder")
    hold = flag(tmp_path, "hold")
    held = started(client, "ponder", session, str(hold))
    busy = submit(client, "ponder", session, "again", multitaskStrategy="reject")
    assert busy.status_code == 409 and "busy" in busy.json()["detail"]
    hold.touch()
    wait_for(client, "ponder", session, held["runId"], "done")
    free = started(client, "ponder", session, str(hold), multitaskStrategy="reject")
    assert wait_for(client, "ponder", session, free["runId"], "done", "failed")["status"] == "done"


def test_interrupt_stops_the_running_run_and_runs_first(
    client: httpx.Client, tmp_path: Path
) -> None:
    session = new_session(client, "ponder")
    held = started(client, "ponder", session, str(flag(tmp_path, "never")))
    queued = started(client, "ponder", session, str(flag(tmp_path, "q", released=True)))
    wait_for(client, "ponder", session, held["runId"], "running")
    now = str(flag(tmp_path, "now", released=True))
    urgent = started(client, "ponder", session, now, multitaskStrategy="interrupt")
    assert wait_for(client, "ponder", session, urgent["runId"], "done")["status"] == "done"
    stopped = run_of(client, "ponder", session, held["runId"])
    assert stopped["status"] == "cancelled" and stopped["cancel"] == "interrupt"
    wait_for(client, "ponder", session, queued["runId"], "done")
    log = log_of(client, "ponder", session)
    # The stopped run's message stays; the interrupting run went before the queued one.
    assert user_texts(log) == [str(tmp_path / "never"), now, str(tmp_path / "q")]
    assert replies(log) == ["pondered", "pondered"]


def test_rollback_stops_the_running_run_and_rewinds_it_away(
    client: httpx.Client, tmp_path: Path
) -> None:
    session = new_session(client, "ponder")
    held = started(client, "ponder", session, str(flag(tmp_path, "never")))
    wait_for(client, "ponder", session, held["runId"], "running")
    instead = str(flag(tmp_path, "instead", released=True))
    again = started(client, "ponder", session, instead, multitaskStrategy="rollback")
    done = wait_for(client, "ponder", session, again["runId"], "done")
    assert done["request"]["rewindBefore"] == held["runId"]
    stopped = run_of(client, "ponder", session, held["runId"])
    assert stopped["status"] == "cancelled" and stopped["cancel"] == "rollback"
    log = log_of(client, "ponder", session)
    rewinds = [e for e in log if (e.get("actions") or {}).get("rewindBeforeInvocationId")]
    assert [e["actions"]["rewindBeforeInvocationId"] for e in rewinds] == [held["runId"]]
    assert replies(log) == ["pondered"]


def test_cancel_a_pending_and_a_running_run(client: httpx.Client, tmp_path: Path) -> None:
    session = new_session(client, "ponder")
    base = SESSION.format(app="ponder", session=session) + "/runs/"
    held = started(client, "ponder", session, str(flag(tmp_path, "never")))
    queued = started(client, "ponder", session, str(flag(tmp_path, "q", released=True)))
    never = client.post(base + queued["runId"] + "/cancel").json()
    assert never["status"] == "cancelled" and never["startedAt"] is None
    wait_for(client, "ponder", session, held["runId"], "running")
    stopped = client.post(base + held["runId"] + "/cancel", params={"wait": "true"}).json()
    assert stopped["status"] == "cancelled" and stopped["cancel"] == "cancel"
    # What the running run committed (its message) stays; the pending one stored nothing.
    assert user_texts(log_of(client, "ponder", session)) == [str(tmp_path / "never")]
    assert client.post(base + "nope/cancel").status_code == 404
    after = started(client, "ponder", session, str(flag(tmp_path, "after", released=True)))
    assert wait_for(client, "ponder", session, after["runId"], "done")["status"] == "done"


def test_run_sse_waits_its_turn_behind_a_background_run(
    client: httpx.Client, tmp_path: Path
) -> None:
    session = new_session(client, "ponder")
    hold = flag(tmp_path, "hold")
    held = started(client, "ponder", session, str(hold))
    body = {
        "appName": "ponder",
        "userId": "ada",
        "sessionId": session,
        "newMessage": text(str(flag(tmp_path, "next", released=True))),
    }
    listing = SESSION.format(app="ponder", session=session) + "/runs"
    # The answer's headers wait for the run's first event: the request runs on a thread.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        answer = pool.submit(client.post, "/run_sse", json=body)
        wait_until(
            lambda: (
                [r["status"] for r in client.get(listing).json()["runs"]] == ["pending", "running"]
            ),
            "the /run_sse run queued behind the background run",
        )
        hold.touch()
        streamed = answer.result()
    payloads = [json.loads(data) for data in sse_payloads(streamed.text)]
    assert [p["content"]["parts"][0]["text"] for p in payloads] == ["pondered"]
    assert run_of(client, "ponder", session, held["runId"])["status"] == "done"
    assert user_texts(log_of(client, "ponder", session)) == [str(hold), str(tmp_path / "next")]


# -- several servers on one store ----------------------------------------------------------
def test_a_stream_rejoined_on_another_server_has_no_gap_and_no_duplicate(tmp_path: Path) -> None:
    with (
        postgres_store() as store,
        server(store, tmp_path, "a") as first,
        server(store, tmp_path, "b") as second,
        httpx.Client(base_url=first, timeout=BOUND_SECONDS) as one,
        httpx.Client(base_url=second, timeout=BOUND_SECONDS) as other,
    ):
        session = new_session(one, "gate")
        gate = flag(tmp_path, "release")
        run = started(one, "gate", session, str(gate))
        path = SESSION.format(app="gate", session=session) + f"/runs/{run['runId']}/stream"
        seen: list[str] = []
        with one.stream("GET", path) as stream:
            for block in sse_blocks(stream.iter_lines()):
                seen.append(block["id"])
                if "functionCall" in block["data"]:
                    break  # the connection is lost mid-run
        with other.stream("GET", path, headers={"Last-Event-ID": seen[-1]}) as stream:
            gate.touch()
            blocks = list(sse_blocks(stream.iter_lines()))
        *events, end = blocks
        assert end["event"] == "end" and json.loads(end["data"])["status"] == "done"
        rest = [block["id"] for block in events]
        log = [e["id"] for e in log_of(other, "gate", session) if e["invocationId"] == run["runId"]]
        assert seen + rest == log and len(set(log)) == len(log)
        assert "released" in events[-1]["data"]
        # From the start, on either server: the whole run, then its end.
        with other.stream("GET", path) as stream:
            again = list(sse_blocks(stream.iter_lines()))
        assert [b.get("id") for b in again[:-1]] == log and again[-1]["event"] == "end"


def test_a_killed_servers_runs_are_finished_by_the_next_server(tmp_path: Path) -> None:
    """A server killed (SIGKILL) with one run mid-way and one queued: a new server on the same
    store resumes the first (its finished tool is not run again, nothing is stored twice)
    and runs the second."""
    mid, queued = tmp_path / "mid", tmp_path / "queued"
    mid.mkdir()
    queued.mkdir()
    (queued / "release").touch()
    with postgres_store() as store:
        port = free_port()
        env = {**os.environ, "CAIRN_AGENTS_DIR": str(FAULT_AGENTS), "CAIRN_STORE": store}
        command = [
            sys.executable, "-m", "uvicorn", "--factory", "cairn.server:app_from_env",
            "--host", "127.0.0.1", "--port", str(port),
        ]  # fmt: skip
        with (tmp_path / "killed.log").open("wb") as output:
            process = subprocess.Popen(
                command, env=env, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT
            )
        base = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(base_url=base, timeout=BOUND_SECONDS) as client:

                def answers() -> bool:
                    try:
                        return client.get("/openapi.json").status_code == 200
                    except httpx.HTTPError:
                        return False

                wait_until(answers, "the first server answering")
                session = new_session(client, "relay")
                first = started(client, "relay", session, str(mid))
                second = started(client, "relay", session, str(queued))
                wait_until(
                    lambda: (
                        (mid / "runs.txt").exists()
                        and any(
                            "functionResponse" in part
                            for event in log_of(client, "relay", session)
                            for part in (event.get("content") or {}).get("parts", [])
                        )
                    ),
                    "the first run's tool result committed",
                )
                assert run_of(client, "relay", session, second["runId"])["status"] == "pending"
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
        with (
            server(store, tmp_path, "next") as url,
            httpx.Client(base_url=url, timeout=BOUND_SECONDS) as client,
        ):
            (mid / "release").touch()
            resumed = wait_for(client, "relay", session, first["runId"], "done", "failed")
            assert resumed["status"] == "done" and resumed["attempts"] == 2
            assert wait_for(client, "relay", session, second["runId"], "done")["attempts"] == 1
            log = log_of(client, "relay", session)
    assert (mid / "runs.txt").read_text() == "ran\n"  # the finished tool did not run again
    assert (queued / "runs.txt").read_text() == "ran\n"
    assert len({e["id"] for e in log}) == len(log)
    assert user_texts(log) == [str(mid), str(queued)]
    assert replies(log) == ["relayed", "relayed"]
