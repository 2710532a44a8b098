"""Guarantees 2 and 7 of ARCHITECTURE.md with real OS processes sharing one store.

Every worker is a separate OS process (``worker.py``, started through
multiprocessing's ``forkserver`` context) that opens its own store from a path
or URL, exactly as several runner processes of one deployment would. Each test
runs on a SQLite file, PostgreSQL and MariaDB (a fresh database per test), with
at least four workers. Workers start their work together on a signal file.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import multiprocessing
import multiprocessing.process
import os
import signal
import socket
import sqlite3
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from multiprocessing.context import ForkServerContext
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from tests.multiprocess import worker as worker_module
from tests.support.databases import mariadb_database, postgres_database

from cairn import Agent, Event, MultitaskStrategy, Runner
from cairn.sessions import (
    BaseSessionService,
    DatabaseSessionService,
    Session,
    SqliteSessionService,
)
from cairn.testing import ScriptedLlm

APP = "multiprocess"
WAIT_LIMIT = 90.0
"""No wait for a worker (to be ready, to finish) lasts longer than this (seconds)."""


# -- the store under test, reachable from any process -------------------------------------
@dataclass
class Target:
    """A store every process can open: a SQLite file or a database URL."""

    kind: str
    spec: dict[str, str]

    def open(self) -> BaseSessionService:
        if "sqlite" in self.spec:
            return SqliteSessionService(self.spec["sqlite"])
        return DatabaseSessionService(self.spec["url"])

    async def query(self, sql: str) -> list[tuple[Any, ...]]:
        """The rows of a plain SQL query, read on a connection of its own."""
        if "sqlite" in self.spec:
            with contextlib.closing(sqlite3.connect(self.spec["sqlite"])) as connection:
                return [tuple(row) for row in connection.execute(sql)]
        engine = create_async_engine(self.spec["url"])
        try:
            async with engine.connect() as connection:
                return [tuple(row) for row in await connection.execute(text(sql))]
        finally:
            await engine.dispose()


@pytest.fixture(params=["sqlite", "postgres", "mariadb"])
async def target(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Target]:
    if request.param == "sqlite":
        yield Target("sqlite", {"sqlite": str(tmp_path / "sessions.db")})
        return
    server = postgres_database() if request.param == "postgres" else mariadb_database()
    async with server as url:  # type: ignore[attr-defined]
        yield Target(request.param, {"url": url})


@pytest.fixture
async def store(target: Target) -> AsyncIterator[BaseSessionService]:
    """The test's own connection to the store (it creates the schema before workers start)."""
    service = target.open()
    try:
        yield service
    finally:
        await service.close()


# -- worker processes -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def forkserver() -> ForkServerContext:
    """Workers fork from a server that imported cairn and the drivers once: cheap to start.

    (If another test module started the server first, its preload list stands and
    a worker imports what is missing itself.)
    """
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(
        [
            "cairn",
            "cairn.sessions",
            worker_module.__name__,
            "sqlalchemy.dialects.postgresql.asyncpg",
            "sqlalchemy.dialects.mysql.asyncmy",
            "sqlalchemy.dialects.sqlite.pysqlite",
            "asyncpg",
            "asyncmy",
        ]
    )
    return context


@dataclass
class Worker:
    name: str
    process: multiprocessing.process.BaseProcess
    signals: Path

    @property
    def pid(self) -> int:
        assert self.process.pid is not None
        return self.process.pid

    def exitcode(self) -> int | None:
        return self.process.exitcode

    def error(self) -> str:
        path = self.signals / f"error-{self.name}"
        return path.read_text() if path.exists() else f"(exit code {self.exitcode()})"

    async def wait(self) -> int:
        """Wait for the process to exit; its exit code (negative: killed by that signal)."""
        deadline = time.monotonic() + WAIT_LIMIT
        while (code := self.exitcode()) is None:
            if time.monotonic() > deadline:
                pytest.fail(f"worker {self.name} did not finish within {WAIT_LIMIT} s")
            await asyncio.sleep(0.01)
        self.process.join()
        return code


@dataclass
class Workers:
    """Starts worker processes, and the signal files they synchronize on."""

    target: Target
    signals: Path
    context: ForkServerContext
    started: list[Worker] = field(default_factory=list)

    def start(self, name: str, role: str, **spec: Any) -> Worker:
        full = {
            "name": name,
            "role": role,
            "store": self.target.spec,
            "signals": str(self.signals),
            "app": APP,
            **spec,
        }
        process = self.context.Process(target=worker_module.run, args=(full,), name=name)
        process.start()
        worker = Worker(name, process, self.signals)
        self.started.append(worker)
        return worker

    async def signal_file(self, name: str, *watched: Worker) -> dict[str, Any]:
        """The content of ``signals/<name>`` once a worker creates it (fail if they exit)."""
        path = self.signals / name
        deadline = time.monotonic() + WAIT_LIMIT
        while not path.exists():
            exited = [w for w in watched if w.exitcode() is not None]
            if exited:
                pytest.fail(f"worker {exited[0].name} exited early:\n{exited[0].error()}")
            assert time.monotonic() < deadline, f"no {name} within {WAIT_LIMIT} s"
            await asyncio.sleep(0.01)
        return dict(json.loads(path.read_text()))

    async def all_ready(self, workers: list[Worker]) -> None:
        for worker in workers:
            await self.signal_file(f"ready-{worker.name}", worker)

    def create(self, name: str) -> None:
        (self.signals / name).write_text("{}")

    async def result(self, worker: Worker) -> dict[str, Any]:
        """Wait for the worker to exit successfully; what it reported."""
        code = await worker.wait()
        assert code == 0, f"worker {worker.name} failed:\n{worker.error()}"
        return dict(json.loads((self.signals / f"result-{worker.name}").read_text()))

    async def results(self, workers: list[Worker]) -> list[dict[str, Any]]:
        return [await self.result(worker) for worker in workers]

    async def stop_all(self) -> None:
        """Kill (by pid) every worker this test started that is still running."""
        for worker in self.started:
            if worker.exitcode() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(worker.pid, signal.SIGKILL)
                await worker.wait()


@pytest.fixture
async def workers(
    target: Target, tmp_path: Path, forkserver: ForkServerContext
) -> AsyncIterator[Workers]:
    pool = Workers(target, tmp_path / "signals", forkserver)
    pool.signals.mkdir()
    try:
        yield pool
    finally:
        await pool.stop_all()


# -- helpers --------------------------------------------------------------------------------
async def load(store: BaseSessionService, user_id: str, session_id: str) -> Session:
    session = await store.get_session(app_name=APP, user_id=user_id, session_id=session_id)
    assert session is not None
    return session


def pause_for(target: Target) -> float:
    """How long an appending worker pauses between appends.

    SQLite hands its write lock to whoever asks first, and a writer that just
    committed asks again at once, so without a pause each process would write
    all of its events in one burst; the servers interleave writers anyway.
    """
    return 0.01 if target.kind == "sqlite" else 0.0


def invocation_runs(events: list[Event]) -> list[str]:
    """The invocation ids of maximal runs of consecutive events with the same invocation id."""
    return [
        invocation_id for invocation_id, _ in itertools.groupby(e.invocation_id for e in events)
    ]


def assert_invocations_whole(events: list[Event], expected: dict[str, list[str]]) -> None:
    """The events are exactly the invocations in ``expected`` (id -> the event ids it
    yielded, user event first), each stored contiguously and in the order it yielded them."""
    runs = invocation_runs(events)
    assert len(runs) == len(set(runs)), "an invocation's events were interleaved with another's"
    assert sorted(runs) == sorted(expected)
    by_invocation = {run: [e for e in events if e.invocation_id == run] for run in runs}
    for invocation_id, stored in by_invocation.items():
        assert [e.id for e in stored] == expected[invocation_id]
        assert stored[0].author == "user"
        assert all(e.author == "stepper" for e in stored[1:])


# -- 1. one session, all processes, through the Runner -----------------------------------------
async def test_one_session_hammered_by_many_processes_keeps_every_invocation_whole(
    target: Target, store: BaseSessionService, workers: Workers
) -> None:
    processes, invocations, steps = 4, 15, 3
    await store.create_session(app_name=APP, user_id="u", session_id="shared")
    started = [
        workers.start(
            f"w{index}",
            "run",
            user="u",
            session="shared",
            count=invocations,
            steps=steps,
            busy_timeout=60,
            pause=0.1,
            wait_for_go=True,
        )
        for index in range(processes)
    ]
    await workers.all_ready(started)
    workers.create("go")
    results = await workers.results(started)

    for result in results:
        assert result["busy"] is None
        assert len(result["invocations"]) == invocations
    seen = {
        run["invocation_id"]: run["event_ids"]
        for result in results
        for run in result["invocations"]
    }
    assert len(seen) == processes * invocations
    assert all(len(ids) == 1 + steps for ids in seen.values())

    session = await load(store, "u", "shared")
    expected_events = processes * invocations * (1 + steps)
    ids = [e.id for e in session.events]
    assert len(ids) == expected_events, "events were lost or duplicated"
    assert len(set(ids)) == expected_events, "an event was stored twice"
    assert session.revision == expected_events
    assert_invocations_whole(session.events, seen)
    # Every invocation read the state its predecessor committed: no lost update.
    assert session.state["turns"] == processes * invocations
    # The processes really did take turns on the session.
    owners = {
        run["invocation_id"]: result["pid"] for result in results for run in result["invocations"]
    }
    switches = sum(
        1 for a, b in itertools.pairwise(invocation_runs(session.events)) if owners[a] != owners[b]
    )
    assert switches >= processes - 1


# -- 2. distinct user: keys from different sessions ----------------------------------------------
async def test_user_keys_written_concurrently_from_sessions_in_many_processes_all_survive(
    target: Target, store: BaseSessionService, workers: Workers
) -> None:
    processes, appends = 4, 40
    for index in range(processes):
        await store.create_session(app_name=APP, user_id="u", session_id=f"s{index}")
    started = [
        workers.start(
            f"w{index}",
            "append",
            user="u",
            session=f"s{index}",
            count=appends,
            key="user:{worker}_{i}",
            value="{worker}-{i}",
            pause=pause_for(target),
            wait_for_go=True,
        )
        for index in range(processes)
    ]
    await workers.all_ready(started)
    workers.create("go")
    results = await workers.results(started)
    assert [result["revision"] for result in results] == [appends] * processes

    expected = {
        f"user:w{index}_{i}": f"w{index}-{i}" for index in range(processes) for i in range(appends)
    }
    for index in range(processes):
        session = await load(store, "u", f"s{index}")
        user_keys = {k: v for k, v in session.state.items() if k.startswith("user:")}
        assert user_keys == expected, f"session s{index} lost user: keys"
        assert [e.id for e in session.events] == results[index]["event_ids"]
    # A session created afterwards sees them too.
    later = await store.create_session(app_name=APP, user_id="u", session_id="later")
    assert {k: v for k, v in later.state.items() if k.startswith("user:")} == expected


# -- 3. one app: key from every process ----------------------------------------------------------
async def committed_writes(target: Target, key: str) -> tuple[list[tuple[int, Any]], list[Event]]:
    """(pk, value) of every stored event that wrote ``key``, and every stored event, in pk
    order: among appends that wrote the same key, pk order is commit order."""
    rows = await target.query("SELECT pk, event FROM cairn_events ORDER BY pk")
    stored = [(int(pk), Event.model_validate_json(raw)) for pk, raw in rows]
    writes = [(pk, e.actions.state_delta[key]) for pk, e in stored if key in e.actions.state_delta]
    return writes, [event for _, event in stored]


async def test_app_key_written_by_many_processes_ends_with_the_last_committed_write(
    target: Target, store: BaseSessionService, workers: Workers
) -> None:
    processes, appends = 4, 40
    for index in range(processes):
        await store.create_session(app_name=APP, user_id=f"u{index}", session_id=f"s{index}")
    started = [
        workers.start(
            f"w{index}",
            "append",
            user=f"u{index}",
            session=f"s{index}",
            count=appends,
            key="app:shared",
            value="{worker}-{i}",
            rounds=True,
        )
        for index in range(processes)
    ]
    await workers.all_ready(started)
    # In each round every process writes the key once, all at the same moment; once they
    # all committed, the value must be the one of the write that committed last.
    for i in range(appends):
        workers.create(f"round-{i}")
        for worker in started:
            await workers.signal_file(f"done-{i}-{worker.name}", worker)
        writes, _ = await committed_writes(target, "app:shared")
        assert len(writes) == processes * (i + 1)
        seen = (await load(store, f"u{i % processes}", f"s{i % processes}")).state
        assert seen["app:shared"] == max(writes)[1], (
            f"after round {i} the key holds {seen['app:shared']!r}, but the last committed "
            f"write was {max(writes)[1]!r}"
        )
    await workers.results(started)

    writes, stored = await committed_writes(target, "app:shared")
    assert len(writes) == processes * appends
    assert len({value for _, value in writes}) == processes * appends
    last_committed = max(writes)[1]
    # Each process's own writes committed in the order it made them.
    for index in range(processes):
        own = [value for _, value in writes if value.startswith(f"w{index}-")]
        assert own == [f"w{index}-{i}" for i in range(appends)]
    # The log is the truth: folding every event in commit order gives the stored state.
    folded: dict[str, Any] = {}
    for event in stored:
        folded.update(event.actions.state_delta)
    assert folded["app:shared"] == last_committed
    for index in range(processes):
        session = await load(store, f"u{index}", f"s{index}")
        assert session.state["app:shared"] == last_committed, (
            f"session s{index} sees {session.state['app:shared']!r}, but the last committed "
            f"write was {last_committed!r}"
        )
    other = await store.create_session(app_name=APP, user_id="someone-else", session_id="x")
    assert other.state["app:shared"] == last_committed


# -- 4. a busy session fails fast in other processes -----------------------------------------
async def test_busy_session_fails_fast_in_another_process_naming_session_and_holder(
    target: Target, store: BaseSessionService, workers: Workers
) -> None:
    session_id = "busy-session"
    await store.create_session(app_name=APP, user_id="u", session_id=session_id)
    holder = workers.start(
        "holder",
        "run",
        user="u",
        session=session_id,
        count=1,
        inside="inside-holder",
        release="release-holder",
    )
    others = [
        workers.start(
            f"other{index}",
            "run",
            user="u",
            session=session_id,
            count=1,
            busy_timeout=0,
            wait_for_go=True,
        )
        for index in range(3)
    ]
    inside = await workers.signal_file("inside-holder", holder)
    assert inside["pid"] == holder.pid
    expected_holder = f"{inside['invocation_id']}@{socket.gethostname()}:{holder.pid}"
    await workers.all_ready(others)
    workers.create("go")
    results = await workers.results(others)
    workers.create("release-holder")
    held = await workers.result(holder)

    for result in results:
        busy = result["busy"]
        assert busy is not None, "a second invocation ran while the session was busy"
        assert result["invocations"] == []
        assert busy["session_id"] == session_id
        assert repr(session_id) in busy["message"]
        # The holder's name: invocation @ host : pid : process identity (against pid reuse).
        assert busy["holder"].startswith(expected_holder + ":")
        assert repr(busy["holder"]) in busy["message"]
        assert f":{holder.pid}:" in busy["message"]
    # Only the holder's invocation is in the session; the refused ones stored nothing.
    session = await load(store, "u", session_id)
    (run,) = held["invocations"]
    assert_invocations_whole(session.events, {run["invocation_id"]: run["event_ids"]})
    assert session.revision == len(session.events) == 4


# -- 5. a killed holder on this host is replaced at once ----------------------------------------
async def test_the_lease_of_a_killed_process_on_this_host_is_taken_over_at_once(
    target: Target, store: BaseSessionService, workers: Workers
) -> None:
    session_id = "orphaned"
    await store.create_session(app_name=APP, user_id="u", session_id=session_id)
    doomed = workers.start(
        "doomed",
        "run",
        user="u",
        session=session_id,
        count=1,
        lease_ttl=3600.0,
        inside="inside-doomed",
        release="never-created",
    )
    successor = workers.start(
        "next", "run", user="u", session=session_id, count=1, busy_timeout=0, wait_for_go=True
    )
    inside = await workers.signal_file("inside-doomed", doomed)
    await workers.all_ready([successor])
    lease = f"SELECT holder, expires_at FROM cairn_leases WHERE session_id = '{session_id}'"
    ((holder, _expires_at),) = await target.query(lease)
    assert holder.startswith(f"{inside['invocation_id']}@{socket.gethostname()}:{doomed.pid}:")
    os.kill(doomed.pid, signal.SIGKILL)
    assert await doomed.wait() == -signal.SIGKILL
    workers.create("go")
    (result,) = await workers.results([successor])

    # The dead holder's lease had an hour left and the successor did not wait at all: only
    # finding that the holder's process is gone lets it in.
    assert result["busy"] is None, f"the session stayed locked: {result['busy']}"
    (run,) = result["invocations"]
    session = await load(store, "u", session_id)
    first, *rest = session.events
    assert first.invocation_id == inside["invocation_id"] and first.author == "user"
    assert_invocations_whole(rest, {run["invocation_id"]: run["event_ids"]})
    ((holder, _expires_at),) = await target.query(lease)
    assert holder == ""  # released by the successor


# -- 6. a blocking sync tool keeps its lease, and runs once ---------------------------------------
async def test_a_sync_tool_blocking_past_the_lease_ttl_keeps_the_session_and_runs_once(
    target: Target, store: BaseSessionService, workers: Workers
) -> None:
    session_id, ttl = "slow-tool", 3.0
    await store.create_session(app_name=APP, user_id="u", session_id=session_id)
    counter = workers.signals / "counter"
    holder = workers.start(
        "holder",
        "tool",
        user="u",
        session=session_id,
        lease_ttl=ttl,
        inside="inside-tool",
        release="release-tool",
        counter=str(counter),
    )
    await workers.signal_file("inside-tool", holder)
    # The tool now blocks its thread. Wait until the lease the holder had then has expired and
    # been renewed since (on the store's clock): only renewals made while it blocks keep it.
    lease = f"SELECT holder, expires_at FROM cairn_leases WHERE session_id = '{session_id}'"
    ((holder_name, first_expiry),) = await target.query(lease)
    deadline = time.monotonic() + WAIT_LIMIT
    while (await target.query(lease))[0][1] < first_expiry + ttl:
        assert time.monotonic() < deadline, "the lease was not renewed while the tool blocked"
        await asyncio.sleep(0.05)

    probe = workers.start("probe", "run", user="u", session=session_id, count=1, busy_timeout=0)
    probed = await workers.result(probe)
    assert probed["busy"] is not None, "a second process got the session while the tool ran"
    assert probed["busy"]["holder"] == holder_name and probed["invocations"] == []
    workers.create("release-tool")
    done = await workers.result(holder)

    assert counter.read_text().splitlines() == [str(holder.pid)], "the tool ran more than once"
    session = await load(store, "u", session_id)
    assert [e.id for e in session.events[1:]] == done["event_ids"]
    (response,) = [r for e in session.events for r in e.get_function_responses()]
    assert response.name == "transfer" and response.response == {"sent": 100}


# -- 7. interrupt takes the session from an invocation in another process ----------------------
async def test_interrupt_takes_the_session_from_an_invocation_in_another_process(
    store: BaseSessionService, workers: Workers
) -> None:
    """The holder process sits in a slow tool; this process interrupts it. Its lease is taken
    over (fencing): the tool's result is refused when it comes, and nothing of the holder is
    committed after the takeover; the interrupting invocation runs at once."""
    session_id = "interrupted"
    await store.create_session(app_name=APP, user_id="u", session_id=session_id)
    counter = workers.signals / "counter"
    holder = workers.start(
        "holder",
        "tool",
        user="u",
        session=session_id,
        lease_ttl=30.0,
        inside="inside-tool",
        release="release-tool",
        counter=str(counter),
    )
    await workers.signal_file("inside-tool", holder)
    runner = Runner(
        app_name=APP,
        agent=Agent(name="banker", model=ScriptedLlm(script=["stopped it"])),
        session_service=store,
        multitask_strategy=MultitaskStrategy.INTERRUPT,
    )
    mine = [
        event
        async for event in runner.run_async(
            user_id="u", session_id=session_id, new_message=types.UserContent("stop that")
        )
    ]
    taken_over = await load(store, "u", session_id)
    workers.create("release-tool")  # the tool returns now; its result must be refused
    done = await workers.result(holder)

    assert done["lost"] is not None, "the interrupted process committed after the takeover"
    assert done["lost"]["holder"].startswith(done["invocation_id"] + "@")
    assert counter.read_text().splitlines() == [str(holder.pid)]
    session = await load(store, "u", session_id)
    assert [e.id for e in session.events] == [e.id for e in taken_over.events]
    theirs = [e for e in session.events if e.invocation_id == done["invocation_id"]]
    assert [e.id for e in theirs[1:-1]] == done["event_ids"]  # its call, committed before
    (answer,) = theirs[-1].get_function_responses()  # recorded by the interrupter
    assert answer.name == "transfer" and answer.response is not None
    assert answer.response["error"].startswith("interrupted: ")
    assert [e.content.parts[0].text for e in mine] == ["stopped it"]
    assert session.events[-1].id == mine[-1].id
