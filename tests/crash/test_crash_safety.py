"""Crash safety of the durable session stores (ARCHITECTURE.md guarantees 1, 2 and 6).

1. A writer process (tests/crash/writer.py) appends events and reports each one
   only after ``append_event`` returned; the test SIGKILLs it at a random
   moment, reopens the store and checks that it opens cleanly, that every
   reported event is stored exactly once, that no row is partial (revision ==
   number of events, seq == 1..N, no stray state row, every stored event whole:
   the content and delta the writer sent) and that the state equals the initial
   state folded with the stored events' deltas. Kills land during process
   start, during the first open (migration), during ``create_session``, during
   the first append and during later appends, on a SQLite file (synchronous
   FULL) and on PostgreSQL.
2. A PostgreSQL connection dropped in the middle of an append: the caller gets
   ``StoreUnavailableError``, nothing is half-written, the next call reconnects.
3. An unreachable database: ``StoreUnavailableError`` naming host and port,
   never the password.

The kill delays come from a seeded random generator: set ``CAIRN_CRASH_SEED``
to replay a failing run's draws (where a kill lands also depends on timing, so
a replay makes the same draws, not necessarily the same kill points).
``CAIRN_CRASH_CYCLES`` changes the number of kills on one store (default 100).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import math
import multiprocessing
import os
import random
import shutil
import signal
import sqlite3
import time
import traceback
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from multiprocessing.context import ForkServerContext
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sqlalchemy import Connection, Engine, create_engine, inspect, select, text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool
from tests.crash import writer
from tests.support.databases import postgres_database

from cairn.errors import StoreUnavailableError
from cairn.events.event import Event
from cairn.sessions import BaseSessionService, DatabaseSessionService, SqliteSessionService
from cairn.sessions.sql.schema import (
    APP_SCOPE,
    SESSION_SCOPE,
    USER_SCOPE,
    VERSION_TABLE,
    events,
    sessions,
    state,
)

T = TypeVar("T")

SEED = int(os.environ.get("CAIRN_CRASH_SEED", "20260611"))
APPEND_CYCLES = int(os.environ.get("CAIRN_CRASH_CYCLES", "100"))
FIRST_OPEN_CYCLES = 20
CHECKER = "cairn-crash-check"  # application_name of the test's own PostgreSQL connections
PATIENCE = 60.0  # seconds any single step may take before the test calls it a hang

APP, USER, SESSION = writer.APP, writer.USER, writer.SESSION


# -- the writer processes ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def forkserver() -> ForkServerContext:
    """Writers fork from a server that imported cairn and the drivers once (no loop, no DB)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(
        [
            "cairn",
            "cairn.sessions",
            "tests.crash.writer",
            "sqlalchemy.dialects.postgresql.asyncpg",
            "sqlalchemy.dialects.sqlite.pysqlite",
            "asyncpg",
            "alembic.command",
        ]
    )
    warm_up = context.Process(target=writer.idle)
    warm_up.start()
    warm_up.join(PATIENCE)
    assert warm_up.exitcode == 0
    return context


@dataclasses.dataclass
class Run:
    """What one killed writer reported, with the parent's clock (seconds since start)."""

    messages: list[tuple[float, str]]
    exitcode: int | None

    def first(self, kind: str) -> tuple[float, str] | None:
        return next((m for m in self.messages if m[1].split()[0] == kind), None)

    def ids(self, kind: str) -> list[str]:
        return [m[1].split()[1] for m in self.messages if m[1].split()[0] == kind]

    @property
    def in_doubt(self) -> str | None:
        """The event whose append was running when the kill landed, if any."""
        tried, done = self.ids("try"), set(self.ids("ok"))
        return tried[-1] if tried and tried[-1] not in done else None

    @property
    def where(self) -> str:
        """Where the kill landed, as far as the writer had reported."""
        if not self.messages:
            return "process start"
        if self.first("ready") is None:
            return "open/migrate/load/create"
        if self.in_doubt is not None:
            return "during an append" if self.ids("ok") else "during the first append"
        return "between appends"


def kill_writer(
    context: ForkServerContext,
    plan: writer.Plan,
    *,
    after_start: float | None = None,
    after_ready: float | None = None,
    at_try: int | None = None,
) -> Run:
    """Start a writer and SIGKILL it ``after_start`` seconds after its start, ``after_ready``
    seconds after it reported its session loaded, or (``at_try``) as soon as it reports
    starting its ``at_try``-th append, wherever the machine's speed puts the others.
    Returns everything it reported."""
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=writer.run, args=(plan, sender), daemon=True)
    messages: list[tuple[float, str]] = []
    start = time.perf_counter()
    process.start()
    sender.close()
    closed = False

    def receive(until: float) -> None:
        nonlocal closed
        while not closed and (left := until - time.perf_counter()) > 0.002:
            if receiver.poll(left - 0.001):
                try:
                    messages.append((time.perf_counter() - start, receiver.recv_bytes().decode()))
                except EOFError:
                    closed = True
        left = until - time.perf_counter()
        if left > 0:
            time.sleep(left)

    try:
        if after_start is not None:
            receive(start + after_start)
        elif at_try is not None:
            deadline = start + PATIENCE
            while sum(m.startswith("try") for _, m in messages) < at_try:
                assert not closed and time.perf_counter() < deadline, (
                    f"writer never started append {at_try} (exit code {process.exitcode}): "
                    f"{messages}"
                )
                if receiver.poll(min(0.05, max(deadline - time.perf_counter(), 0))):
                    try:
                        messages.append(
                            (time.perf_counter() - start, receiver.recv_bytes().decode())
                        )
                    except EOFError:
                        closed = True
        else:
            assert after_ready is not None
            deadline = start + PATIENCE
            while not any(m.startswith("ready") for _, m in messages):
                assert not closed and time.perf_counter() < deadline, (
                    f"writer did not get ready (exit code {process.exitcode}): {messages}"
                )
                receive(min(deadline, time.perf_counter() + 0.05))
            receive(time.perf_counter() + after_ready)
        assert process.pid is not None
        os.kill(process.pid, signal.SIGKILL)
        process.join(PATIENCE)
        while not closed and receiver.poll():
            try:
                messages.append((time.perf_counter() - start, receiver.recv_bytes().decode()))
            except EOFError:
                closed = True
    finally:
        if process.is_alive():
            process.kill()
            process.join()
        receiver.close()
    assert process.exitcode == -signal.SIGKILL, (
        f"the writer ended by itself (exit code {process.exitcode}) before the kill: {messages}"
    )
    return Run(messages, process.exitcode)


def log_uniform(rng: random.Random, low: float, high: float) -> float:
    return math.exp(rng.uniform(math.log(low), math.log(high)))


# -- the stores -----------------------------------------------------------------------------
@dataclasses.dataclass
class Rows:
    """Every row of cairn's tables (all of them: nothing but the writer's session may exist)."""

    schema: bool
    sessions: list[Any] = dataclasses.field(default_factory=list)
    events: list[Any] = dataclasses.field(default_factory=list)
    state: dict[tuple[str, str, str, str], Any] = dataclasses.field(default_factory=dict)


def read_rows(connection: Connection) -> Rows:
    if not inspect(connection).has_table(VERSION_TABLE):
        return Rows(schema=False)
    found = Rows(schema=True)
    found.sessions = list(
        connection.execute(
            select(
                sessions.c.app_name, sessions.c.user_id, sessions.c.session_id, sessions.c.revision
            )
        )
    )
    found.events = list(
        connection.execute(
            select(
                events.c.app_name,
                events.c.user_id,
                events.c.session_id,
                events.c.seq,
                events.c.event_id,
                events.c.event,
            ).order_by(events.c.seq)
        )
    )
    for row in connection.execute(
        select(
            state.c.app_name,
            state.c.scope,
            state.c.user_id,
            state.c.session_id,
            state.c.key,
            state.c.value,
        )
    ):
        assert row.app_name == APP, f"state row of another app: {row}"
        found.state[(row.scope, row.user_id, row.session_id, row.key)] = row.value
    return found


class Backend:
    name: str

    def open(self) -> BaseSessionService:
        """A new service on the store, as a restarted process would create it."""
        raise NotImplementedError

    @property
    def target(self) -> str:
        raise NotImplementedError

    async def rows(self) -> Rows:
        raise NotImplementedError

    async def schema_committed(self) -> bool:
        """Whether the store holds cairn's schema, read without migrating it."""
        raise NotImplementedError

    async def settle(self) -> None:
        """Wait until nothing of a killed writer is left running (its server connection)."""

    async def reset(self) -> None:
        """Make the store empty, as never opened."""
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError


class SqliteBackend(Backend):
    name = "sqlite"

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.generation = 0
        self.path = folder / "store-0" / "sessions.db"
        self._engine: Engine | None = None

    @property
    def target(self) -> str:
        return str(self.path)

    def open(self) -> BaseSessionService:
        return SqliteSessionService(self.path)

    async def rows(self) -> Rows:
        if self._engine is None:
            self._engine = create_engine(f"sqlite:///{self.path}", poolclass=NullPool)
        with self._engine.connect() as connection, connection.begin():
            return read_rows(connection)

    async def schema_committed(self) -> bool:
        # Read a copy, so the store itself is first opened by a session service.
        if not self.path.exists():
            return False
        scratch = self.folder / "scratch"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir()
        for suffix in ("", "-wal", "-journal"):
            source = Path(f"{self.path}{suffix}")
            if source.exists():
                shutil.copyfile(source, scratch / f"copy.db{suffix}")
        connection = sqlite3.connect(scratch / "copy.db")
        try:
            found = connection.execute(
                "SELECT count(*) FROM sqlite_master WHERE name = ?", (VERSION_TABLE,)
            ).fetchone()
        finally:
            connection.close()
        return bool(found[0])

    async def reset(self) -> None:
        await self.close()
        self.generation += 1
        self.path = self.folder / f"store-{self.generation}" / "sessions.db"

    async def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None


class PostgresBackend(Backend):
    name = "postgres"

    def __init__(self, url: str) -> None:
        self.url = url
        self._engine = create_async_engine(
            url,
            isolation_level="REPEATABLE READ",
            connect_args={"server_settings": {"application_name": CHECKER}},
        )

    @property
    def target(self) -> str:
        return self.url

    def open(self) -> BaseSessionService:
        return DatabaseSessionService(
            self.url, connect_args={"server_settings": {"application_name": CHECKER}}
        )

    async def rows(self) -> Rows:
        async with self._engine.connect() as connection:
            return await connection.run_sync(read_rows)

    async def schema_committed(self) -> bool:
        async with self._engine.connect() as connection:
            found = await connection.scalar(text(f"SELECT to_regclass('{VERSION_TABLE}')"))
        return found is not None

    async def settle(self) -> None:
        # The server ends a dead client's backend (rolling back its transaction) when it
        # reads the closed socket; wait for that, so what we read next is final.
        deadline = time.monotonic() + PATIENCE
        while True:
            async with self._engine.connect() as connection:
                left = await connection.scalar(
                    text(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                        " AND backend_type = 'client backend' AND application_name <> :me"
                    ),
                    {"me": CHECKER},
                )
            if left == 0:
                return
            assert time.monotonic() < deadline, "a killed writer's connection never went away"
            await asyncio.sleep(0.005)

    async def reset(self) -> None:
        await self.settle()
        async with self._engine.connect() as connection:
            await connection.execute(text("DROP SCHEMA public CASCADE"))
            await connection.execute(text("CREATE SCHEMA public"))
            await connection.commit()
        await self._engine.dispose()

    async def close(self) -> None:
        await self._engine.dispose()


@asynccontextmanager
async def sqlite_backend(tmp_path: Path) -> AsyncIterator[Backend]:
    backend = SqliteBackend(tmp_path)
    try:
        yield backend
    finally:
        await backend.close()


@asynccontextmanager
async def postgres_backend(_: Path) -> AsyncIterator[Backend]:
    async with postgres_database() as url:  # type: ignore[attr-defined]
        backend = PostgresBackend(url)
        try:
            yield backend
        finally:
            await backend.close()


BACKENDS: dict[str, Callable[[Path], Any]] = {
    "sqlite": sqlite_backend,
    "postgres": postgres_backend,
}


@pytest.fixture(params=list(BACKENDS))
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with BACKENDS[request.param](tmp_path) as found:
        yield found


# -- what must hold after every kill -----------------------------------------------------------
@dataclasses.dataclass
class Ledger:
    """What the writers reported across all kills on one store."""

    reported: list[str] = dataclasses.field(default_factory=list)
    in_doubt: set[str] = dataclasses.field(default_factory=set)
    """Appends cut by a kill: each may or may not have committed, but only once decided."""
    lost: set[str] = dataclasses.field(default_factory=set)
    """In-doubt appends found not stored after their kill: they must never appear later."""
    committed_unreported: int = 0

    def record(self, run: Run) -> None:
        self.reported.extend(run.ids("ok"))
        if run.in_doubt is not None:
            self.in_doubt.add(run.in_doubt)


def expected_state_rows(merged: dict[str, Any]) -> dict[tuple[str, str, str, str], Any]:
    rows = {}
    for key, value in merged.items():
        if key.startswith("app:"):
            rows[(APP_SCOPE, "", "", key.removeprefix("app:"))] = value
        elif key.startswith("user:"):
            rows[(USER_SCOPE, USER, "", key.removeprefix("user:"))] = value
        else:
            rows[(SESSION_SCOPE, USER, SESSION, key)] = value
    return rows


async def within(awaitable: Any, what: str) -> Any:
    try:
        return await asyncio.wait_for(awaitable, PATIENCE)
    except TimeoutError:
        pytest.fail(f"{what} did not finish in {PATIENCE}s")


async def check_store(backend: Backend, ledger: Ledger, context: str) -> int:
    """Reopen the store after a kill and check everything; return the stored revision."""
    await backend.settle()
    service = backend.open()
    try:
        session = await within(
            service.get_session(app_name=APP, user_id=USER, session_id=SESSION),
            f"{context}: reopening the store",
        )
        initial = await service.get_initial_state(app_name=APP, user_id=USER, session_id=SESSION)
    except Exception as exc:
        pytest.fail(
            f"{context}: the store did not reopen cleanly after the kill: "
            f"{''.join(traceback.format_exception(exc))}"
        )
    finally:
        await service.close()
    rows = await backend.rows()
    assert rows.schema, f"{context}: the reopened store has no schema"

    if session is None:
        assert initial is None
        assert not ledger.reported, f"{context}: reported events but the session is gone"
        assert (rows.sessions, rows.events, rows.state) == ([], [], {}), (
            f"{context}: rows without their session: {rows}"
        )
        ledger.lost |= ledger.in_doubt
        return 0

    # One session row; its revision counts the events, whose seq are exactly 1..N.
    assert [tuple(r) for r in rows.sessions] == [(APP, USER, SESSION, session.revision)], (
        f"{context}: session rows {rows.sessions}, revision {session.revision}"
    )
    revision = session.revision
    assert [r.seq for r in rows.events] == list(range(1, revision + 1)), (
        f"{context}: revision {revision} but event seqs {[r.seq for r in rows.events]}"
    )
    assert all((r.app_name, r.user_id, r.session_id) == (APP, USER, SESSION) for r in rows.events)
    stored_ids = [r.event_id for r in rows.events]
    assert [e.id for e in session.events] == stored_ids, f"{context}: get_session disagrees"

    # Every reported event exactly once; nothing stored that was not at least attempted.
    counts = collections.Counter(stored_ids)
    twice = sorted(i for i, n in counts.items() if n > 1)
    assert not twice, f"{context}: events stored more than once: {twice}"
    missing = [i for i in ledger.reported if counts[i] != 1]
    assert not missing, f"{context}: reported as committed but not stored: {missing}"
    reported = set(ledger.reported)
    unexplained = [i for i in stored_ids if i not in reported and i not in ledger.in_doubt]
    assert not unexplained, f"{context}: stored but never reported or in flight: {unexplained}"
    resurrected = sorted(set(stored_ids) & ledger.lost)
    assert not resurrected, f"{context}: appends found missing earlier reappeared: {resurrected}"
    assert stored_ids == sorted(stored_ids, key=writer.numbers_of), f"{context}: order changed"
    ledger.lost |= ledger.in_doubt - set(stored_ids)
    ledger.committed_unreported = len(set(stored_ids) - reported)

    # Every stored event is whole: exactly what the writer appended.
    for row, loaded in zip(rows.events, session.events, strict=True):
        stored = Event.model_validate_json(row.event)
        sent = writer.event_for(*writer.numbers_of(row.event_id))
        for event in (stored, loaded):
            assert event.id == row.event_id
            assert event.content == sent.content, f"{context}: event {event.id} content differs"
            assert event.actions.state_delta == sent.actions.state_delta, (
                f"{context}: event {event.id} state delta differs"
            )
            assert (event.author, event.invocation_id) == (sent.author, sent.invocation_id)

    # The log is the truth: initial state + deltas in order = state, row for row.
    assert initial == writer.INITIAL_STATE
    folded = dict(initial)
    for event in session.events:
        folded.update(event.actions.state_delta)
    assert session.state == folded, f"{context}: state is not the fold of the log"
    expected = expected_state_rows(folded)
    assert rows.state == expected, (
        f"{context}: state rows differ from the fold: extra "
        f"{sorted(set(rows.state) - set(expected))}, missing "
        f"{sorted(set(expected) - set(rows.state))}, changed "
        f"{sorted(k for k in expected if k in rows.state and rows.state[k] != expected[k])}"
    )
    return int(revision)


# -- 1. SIGKILL ---------------------------------------------------------------------------------
async def test_sigkill_during_appends_loses_nothing_reported(
    backend: Backend, forkserver: ForkServerContext
) -> None:
    """APPEND_CYCLES kills of writers appending to one session of one store."""
    rng = random.Random(f"{SEED}:appends:{backend.name}")
    print(f"\nCAIRN_CRASH_SEED={SEED} ({backend.name}, {APPEND_CYCLES} kills while appending)")
    ledger = Ledger()
    where: collections.Counter[str] = collections.Counter()
    ready_times: list[float] = []
    revision = 0
    started = time.perf_counter()
    for cycle in range(APPEND_CYCLES):
        plan = writer.Plan(backend.name, backend.target, cycle)
        # One kill in five lands while the writer starts and loads its session
        # (the first one always waits, to learn how long that takes).
        # Of the others, half land at a random time after it loaded, half the moment it
        # reports starting an append (so, however fast the machine, kills hit appends).
        draw = rng.random()
        if cycle > 0 and draw < 0.2:
            estimate = sorted(ready_times)[len(ready_times) // 2]
            run = kill_writer(forkserver, plan, after_start=rng.uniform(0, 1.2 * estimate))
        elif draw < 0.6:
            run = kill_writer(forkserver, plan, after_ready=log_uniform(rng, 5e-5, 0.08))
        else:
            run = kill_writer(forkserver, plan, at_try=rng.randint(1, 4))
        if (ready := run.first("ready")) is not None:
            ready_times.append(ready[0])
            assert int(ready[1].split()[1]) == revision, f"cycle {cycle}: writer saw {ready[1]}"
        ledger.record(run)
        where[run.where] += 1
        revision = await check_store(backend, ledger, f"kill {cycle} ({run.where})")
    elapsed = time.perf_counter() - started
    print(
        f"{backend.name}: {APPEND_CYCLES} kills in {elapsed:.1f}s; landed: {dict(where)}; "
        f"{revision} events stored, {len(ledger.reported)} reported, "
        f"{ledger.committed_unreported} committed but killed before reporting, "
        f"{len(ledger.lost)} cut appends not stored"
    )
    # The kills must really have hit the writer at work, and at start-up too (checked
    # only on a full run: a handful of kills may all land in one place).
    if APPEND_CYCLES >= 50:
        assert len(ledger.reported) >= APPEND_CYCLES // 4
        assert where["during an append"] + where["during the first append"] >= APPEND_CYCLES // 4
        assert where["open/migrate/load/create"] + where["process start"] >= 1


async def test_sigkill_during_first_open_and_migration(
    backend: Backend, forkserver: ForkServerContext
) -> None:
    """FIRST_OPEN_CYCLES kills of a writer opening a never-used store (migrating it,
    creating the session, making its first append), each on an emptied store."""
    rng = random.Random(f"{SEED}:first-open:{backend.name}")
    print(f"\nCAIRN_CRASH_SEED={SEED} ({backend.name}, {FIRST_OPEN_CYCLES} kills on first open)")
    where: collections.Counter[str] = collections.Counter()
    ready_times: list[float] = []
    started = time.perf_counter()
    for cycle in range(FIRST_OPEN_CYCLES):
        await backend.reset()
        plan = writer.Plan(backend.name, backend.target, cycle)
        if cycle == 0 or rng.random() < 0.3:
            run = kill_writer(forkserver, plan, after_ready=log_uniform(rng, 5e-5, 0.02))
        else:
            estimate = sum(ready_times) / len(ready_times)
            run = kill_writer(forkserver, plan, after_start=rng.uniform(0, 1.1 * estimate))
        if (ready := run.first("ready")) is not None:
            ready_times.append(ready[0])
            assert ready[1] == "ready 0"
        await backend.settle()
        migrated = await backend.schema_committed()
        if not migrated:
            assert run.first("ready") is None, "the writer loaded a session without a schema"
            landed = "before the schema committed"
        else:
            landed = "after migrating: " + run.where
        where[landed] += 1
        ledger = Ledger()
        ledger.record(run)
        await check_store(backend, ledger, f"first-open kill {cycle} ({landed})")
    elapsed = time.perf_counter() - started
    print(f"{backend.name}: {FIRST_OPEN_CYCLES} kills in {elapsed:.1f}s; landed: {dict(where)}")
    assert where["before the schema committed"] >= 1
    assert sum(n for w, n in where.items() if w != "before the schema committed") >= 1


# -- 2. a connection dropped in the middle of an append ---------------------------------------
async def _blocked_backend_pid(admin: Any, exclude: set[int]) -> int:
    deadline = time.monotonic() + PATIENCE
    while True:
        rows = (
            await admin.execute(
                text(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                    " AND state = 'active' AND wait_event_type = 'Lock'"
                    " AND query ILIKE '%cairn_sessions%'"
                )
            )
        ).all()
        pids = [row.pid for row in rows if row.pid not in exclude]
        if pids:
            assert len(pids) == 1, pids
            return int(pids[0])
        assert time.monotonic() < deadline, "the append never blocked on the session row"
        await asyncio.sleep(0.01)


async def test_postgres_connection_dropped_mid_append() -> None:
    async with postgres_database() as url:  # type: ignore[attr-defined]
        service = DatabaseSessionService(url)
        helpers: AsyncEngine = create_async_engine(url, poolclass=NullPool)
        try:
            await _connection_dropped_mid_append(url, service, helpers)
        finally:
            await service.close()
            await helpers.dispose()


async def _connection_dropped_mid_append(
    url: str, service: DatabaseSessionService, helpers: AsyncEngine
) -> None:
    session = await service.create_session(
        app_name=APP, user_id=USER, session_id=SESSION, state=dict(writer.INITIAL_STATE)
    )
    await service.append_event(session, writer.event_for(0, 0))
    before_rows = await _rows(helpers)
    held = session.model_copy(deep=True)

    async with helpers.connect() as blocker, helpers.connect() as admin:
        await admin.execution_options(isolation_level="AUTOCOMMIT")
        await blocker.begin()
        await blocker.execute(
            text(
                "SELECT revision FROM cairn_sessions WHERE app_name = :a AND user_id = :u"
                " AND session_id = :s FOR UPDATE"
            ),
            {"a": APP, "u": USER, "s": SESSION},
        )
        mine = {
            await blocker.scalar(text("SELECT pg_backend_pid()")),
            await admin.scalar(text("SELECT pg_backend_pid()")),
        }
        dropped = writer.event_for(0, 1)
        append = asyncio.create_task(service.append_event(session, dropped))
        victim = await _blocked_backend_pid(admin, mine)
        assert await admin.scalar(text("SELECT pg_terminate_backend(:p)"), {"p": victim})
        await blocker.rollback()
        try:
            await asyncio.wait_for(append, PATIENCE)
        except StoreUnavailableError as exc:
            message = str(exc)
        except TimeoutError:
            pytest.fail(f"append_event hung for {PATIENCE}s after its connection was dropped")
        except Exception as exc:  # what a user would get instead; the report names it
            pytest.fail(
                "a dropped connection should raise StoreUnavailableError, got "
                f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"
            )
        else:
            pytest.fail("append_event returned although its connection was dropped mid-append")

    assert "127.0.0.1:5432" in message, message
    # Nothing half-written: no event, same revision, same state, same caller's session.
    assert session == held, "the caller's Session changed although the append failed"
    after_rows = await _rows(helpers)
    assert after_rows == before_rows, f"rows changed: {before_rows} -> {after_rows}"
    assert dropped.id not in after_rows.events_ids

    # The next call on the same service reconnects and works.
    fresh = await within(
        service.get_session(app_name=APP, user_id=USER, session_id=SESSION), "get_session"
    )
    assert fresh is not None
    assert fresh.revision == held.revision
    assert fresh.state == held.state
    assert [e.id for e in fresh.events] == [e.id for e in held.events]
    following = writer.event_for(0, 2)
    await within(service.append_event(fresh, following), "append_event after reconnecting")
    final_rows = await _rows(helpers)
    assert final_rows.events_ids == [*before_rows.events_ids, following.id]
    assert final_rows.revision == held.revision + 1
    folded = dict(writer.INITIAL_STATE)
    for event_id in final_rows.events_ids:
        folded.update(writer.event_for(*writer.numbers_of(event_id)).actions.state_delta)
    assert final_rows.state == expected_state_rows(folded)


async def _terminate_other_clients(admin: AsyncEngine) -> None:
    """End every other client connection to the database and wait until they are gone."""
    async with admin.connect() as connection:
        victims = (
            await connection.scalars(
                text(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                    " AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
                )
            )
        ).all()
        assert victims, "the service holds no pooled connection"
        for pid in victims:
            await connection.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid})
        deadline = time.monotonic() + PATIENCE
        while await connection.scalar(
            text("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(:pids)"),
            {"pids": list(victims)},
        ):
            assert time.monotonic() < deadline, "terminated connections never went away"
            await asyncio.sleep(0.005)


async def test_postgres_pooled_connection_killed_while_idle() -> None:
    """A server-side disconnect between calls (server restart, idle timeout): a read is
    retried on a fresh connection; a write succeeds or raises StoreUnavailableError having
    stored nothing; either way the next call works."""
    async with postgres_database() as url:  # type: ignore[attr-defined]
        service = DatabaseSessionService(url)
        admin = create_async_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
        try:
            await service.create_session(
                app_name=APP, user_id=USER, session_id=SESSION, state=dict(writer.INITIAL_STATE)
            )
            await _terminate_other_clients(admin)
            session = await within(
                service.get_session(app_name=APP, user_id=USER, session_id=SESSION),
                "get_session after an idle disconnect",
            )
            assert session is not None
            assert session.revision == 0
            held = session.model_copy(deep=True)

            await _terminate_other_clients(admin)
            event = writer.event_for(0, 0)
            try:
                await within(service.append_event(session, event), "append after disconnect")
            except StoreUnavailableError as exc:
                print(f"\nappend on a connection dropped while idle: {exc}")
                assert session == held, "the caller's Session changed although nothing stored"
                reloaded = await service.get_session(app_name=APP, user_id=USER, session_id=SESSION)
                assert reloaded is not None
                assert (reloaded.revision, reloaded.events, reloaded.state) == (
                    0,
                    [],
                    held.state,
                ), "a failed append left something behind"
                await within(service.append_event(reloaded, event), "the next append")
            stored = await service.get_session(app_name=APP, user_id=USER, session_id=SESSION)
            assert stored is not None
            assert [e.id for e in stored.events] == [event.id]
            assert stored.revision == 1
            assert stored.state == {**writer.INITIAL_STATE, **event.actions.state_delta}
        finally:
            await service.close()
            await admin.dispose()


@dataclasses.dataclass
class SessionRows:
    revision: int
    events_ids: list[str]
    state: dict[tuple[str, str, str, str], Any]


async def _rows(engine: AsyncEngine) -> SessionRows:
    async with engine.connect() as connection:
        rows = await connection.run_sync(read_rows)
    assert len(rows.sessions) == 1
    return SessionRows(rows.sessions[0].revision, [r.event_id for r in rows.events], rows.state)


# -- 3. an unreachable database ------------------------------------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        "postgresql+asyncpg://postgres:s3cret@127.0.0.1:1/nope",
        "mysql+asyncmy://root:s3cret@127.0.0.1:1/nope",
        "mysql+aiomysql://root:s3cret@127.0.0.1:1/nope",
    ],
    ids=["postgres", "mariadb-asyncmy", "mariadb-aiomysql"],
)
async def test_unreachable_database_names_host_and_port_not_password(url: str) -> None:
    service = DatabaseSessionService(url)
    try:
        for attempt, operation in enumerate(
            [
                lambda: service.get_session(app_name=APP, user_id=USER, session_id=SESSION),
                lambda: service.create_session(app_name=APP, user_id=USER, session_id=SESSION),
            ]
        ):
            with pytest.raises(StoreUnavailableError) as caught:
                await asyncio.wait_for(operation(), PATIENCE)
            message = str(caught.value)
            assert "127.0.0.1:1" in message, f"call {attempt}: {message}"
            assert "s3cret" not in message, f"call {attempt}: {message}"
            chain = "".join(traceback.format_exception(caught.value))
            assert "s3cret" not in chain, "the password appears in the exception chain"
    finally:
        await service.close()
