"""Session-store figures for every cairn store, next to what the raw drivers can do.

Run it with ``python bench/stores.py`` (``--quick`` for a smoke run with smaller
sizes, ``--stores memory,sqlite`` to pick stores). For each store it prints one
column of a table: append throughput, the per-append cost at ~100 vs ~10,000
stored events, a full read, a recent-10 read, the first page of 10,000 sessions
and session creates/s; and a fresh process's first session load (a new Python process that
imports cairn, builds the store and calls ``get_session`` once, ``bench/first_load.py``),
next to ``python -c pass``. Each store runs on a database it creates and drops
itself (PostgreSQL/MariaDB: ``CREATE DATABASE`` with a unique name; SQLite: a
temporary directory). Alongside each SQL store's appends, in alternating
blocks, it measures that store's raw driver (stdlib sqlite3, asyncpg, asyncmy)
doing one transaction per iteration on tables of the same schema; then it
compares the figures with the targets. A store whose server cannot be reached
is reported as skipped. Nothing here asserts a timing. See ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy
from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import create_async_engine

import cairn
from cairn import Event, GetSessionConfig, Session
from cairn.sessions import (
    BaseSessionService,
    DatabaseSessionService,
    InMemorySessionService,
    SqliteSessionService,
)
from cairn.sessions.sql.schema import metadata
from core import make_events

APP = "bench"
USER = "bench-user"
LIST_USER = "bench-lister"

POSTGRES = os.environ.get("CAIRN_BENCH_POSTGRES", "postgresql+asyncpg://postgres@127.0.0.1:5432")
MARIADB = os.environ.get("CAIRN_BENCH_MARIADB", "mysql+asyncmy://root@127.0.0.1:3306")
POSTGRES_ADMIN_DB = "postgres"
MARIADB_ADMIN_DB = "test"
CONNECT_TIMEOUT_S = 10

ALL_STORES = ("memory", "sqlite", "sqlite-normal", "postgres", "mariadb")
STORE_TITLES = {
    "memory": "InMemorySessionService",
    "sqlite": "SqliteSessionService (WAL, synchronous=FULL, the default)",
    "sqlite-normal": 'SqliteSessionService(synchronous="NORMAL") (WAL)',
    "postgres": "DatabaseSessionService, PostgreSQL via asyncpg",
    "mariadb": "DatabaseSessionService, MariaDB via asyncmy",
}

# Targets from the issue, and the reference figures it quotes (not measured here).
# append/s over raw tx/s, per store (issue 18's targets).
TARGET_VS_RAW = {"sqlite": 0.8, "sqlite-normal": 0.7, "postgres": 0.9, "mariadb": 0.7}
TARGET_COST_RATIO = 1.2
TARGET_RECENT_MS = 2.0
TARGET_RECENT_STORES = ("sqlite", "sqlite-normal", "postgres")
TARGET_PAGE_MS = 20.0
REFERENCE = (
    "google-adk 2.13.0: ~190 appends/s on PostgreSQL, 410 appends/s with its SQLite store; "
    "raw limits about 1,400 tx/s (asyncpg) and 5,000 tx/s (sqlite3, WAL, synchronous=FULL)"
)


@dataclass(frozen=True)
class Sizes:
    """Every size the run uses; ``--quick`` shrinks the expensive ones."""

    append_n: int  # appends timed for append/s (and as many raw transactions)
    rounds: int  # append/s runs as this many store blocks alternating with raw blocks
    small: int  # events held before a cost batch, small side
    large: int  # events held before a cost batch, large side; also the recent-10 session
    batch: int  # appends per cost batch
    cost_repeats: int  # batches per side
    sessions: int  # sessions of one user for the first page (their creation gives creates/s)
    full_read_calls: int
    recent_read_calls: int
    page_calls: int
    first_loads: int  # new processes per first-load row (and as many `python -c pass`)

    @property
    def large_held(self) -> int:
        """Events in the large session once the cost batches have grown it."""
        return self.large + self.cost_repeats * self.batch


FULL = Sizes(
    append_n=2_000,
    rounds=10,
    small=100,
    large=10_000,
    batch=150,
    cost_repeats=7,
    sessions=10_000,
    full_read_calls=7,
    recent_read_calls=200,
    page_calls=30,
    first_loads=5,
)
QUICK = Sizes(
    append_n=300,
    rounds=3,
    small=100,
    large=1_000,
    batch=100,
    cost_repeats=3,
    sessions=1_000,
    full_read_calls=3,
    recent_read_calls=30,
    page_calls=10,
    first_loads=3,
)


# -- results ---------------------------------------------------------------------------------
@dataclass
class StoreResult:
    name: str
    skipped: str | None = None
    failed: str | None = None
    where: str = ""
    append_rate: float | None = None
    raw_label: str | None = None
    raw_rate: float | None = None
    cost_small_ns: float | None = None
    cost_large_ns: float | None = None
    full_read_ns: float | None = None
    recent_read_ns: float | None = None
    page_ns: float | None = None
    page_analyzed_ns: float | None = None
    create_rate: float | None = None
    large_fill_rate: float | None = None
    first_load_small_ns: float | None = None
    first_get_small_ns: float | None = None
    first_load_large_ns: float | None = None
    first_get_large_ns: float | None = None
    child_imports_ns: float | None = None
    python_pass_ns: float | None = None
    file_bytes: int | None = None

    @property
    def ok(self) -> bool:
        return self.skipped is None and self.failed is None

    @property
    def cost_ratio(self) -> float | None:
        if self.cost_small_ns is None or self.cost_large_ns is None:
            return None
        return self.cost_large_ns / self.cost_small_ns

    @property
    def vs_raw(self) -> float | None:
        if self.append_rate is None or self.raw_rate is None:
            return None
        return self.append_rate / self.raw_rate


class Skipped(Exception):
    """The store's server cannot be reached: report it, do not fail the run."""


# -- helpers ---------------------------------------------------------------------------------
def say(text_: str = "") -> None:
    print(text_, flush=True)


def first_line(exc: BaseException) -> str:
    text_ = str(getattr(exc, "orig", None) or exc).strip() or type(exc).__name__
    return text_.splitlines()[0][:160]


def median_ns(samples: list[int]) -> float:
    return float(statistics.median(samples))


async def timed_calls(call: Callable[[], Awaitable[Any]], calls: int) -> float:
    """Median ns of ``calls`` awaits of ``call()``, GC disabled during the calls."""
    samples: list[int] = []
    await call()  # warm-up: first-use costs (statement compile, page cache) stay out
    gc.collect()
    gc.disable()
    try:
        for _ in range(calls):
            t0 = time.perf_counter_ns()
            await call()
            samples.append(time.perf_counter_ns() - t0)
    finally:
        gc.enable()
    return median_ns(samples)


async def append_all(service: BaseSessionService, session: Session, batch: list[Event]) -> None:
    for event in batch:
        await service.append_event(session, event)


def admin_url(server: str, database: str) -> URL:
    return make_url(f"{server}/{database}")


def connect_args(server: str) -> dict[str, Any]:
    if server.startswith("postgresql"):
        return {"timeout": CONNECT_TIMEOUT_S}
    return {"connect_timeout": CONNECT_TIMEOUT_S}


@asynccontextmanager
async def fresh_database(server: str, admin_db: str, prefix: str) -> AsyncIterator[str]:
    """CREATE DATABASE with a unique name on ``server``, yield its URL, DROP it afterwards.

    Raises ``Skipped`` if the server cannot be reached or refuses to create it.
    """
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    admin = create_async_engine(
        admin_url(server, admin_db),
        isolation_level="AUTOCOMMIT",
        connect_args=connect_args(server),
    )
    try:
        async with admin.connect() as connection:
            await connection.execute(text(f"CREATE DATABASE {name}"))
    except Exception as exc:
        await admin.dispose()
        raise Skipped(f"cannot create a database on {server}: {first_line(exc)}") from exc
    try:
        yield f"{server}/{name}"
    finally:
        drop = f"DROP DATABASE IF EXISTS {name}"
        if server.startswith("postgresql"):
            drop += " WITH (FORCE)"
        async with admin.connect() as connection:
            await connection.execute(text(drop))
        await admin.dispose()


@dataclass
class OpenStore:
    service: BaseSessionService
    where: str
    analyze: Callable[[], Awaitable[None]] | None
    """Refresh the database's planner statistics (``ANALYZE``), from a separate connection."""
    child_where: str | None = None
    """What ``bench/first_load.py`` builds its store on (a file or a URL); None: no first load."""


@asynccontextmanager
async def open_store(name: str) -> AsyncIterator[OpenStore]:
    """The store ``name`` on a fresh database."""
    if name == "memory":
        service = InMemorySessionService()
        try:
            yield OpenStore(service, "process memory", None)
        finally:
            await service.close()
    elif name in ("sqlite", "sqlite-normal"):
        with tempfile.TemporaryDirectory(prefix="cairn-bench-") as tmp:
            path = Path(tmp) / "sessions.db"

            async def analyze_sqlite() -> None:
                connection = sqlite3.connect(path, isolation_level=None)
                try:
                    connection.execute("ANALYZE")
                finally:
                    connection.close()

            sqlite = SqliteSessionService(
                path, synchronous="NORMAL" if name == "sqlite-normal" else "FULL"
            )
            try:
                yield OpenStore(sqlite, str(path), analyze_sqlite, str(path))
            finally:
                await sqlite.close()
    else:
        server, admin_db = (
            (POSTGRES, POSTGRES_ADMIN_DB) if name == "postgres" else (MARIADB, MARIADB_ADMIN_DB)
        )
        async with fresh_database(server, admin_db, "cairn_bench") as url:

            async def analyze_server() -> None:
                engine = create_async_engine(url, isolation_level="AUTOCOMMIT")
                try:
                    async with engine.connect() as connection:
                        if name == "postgres":
                            await connection.exec_driver_sql("ANALYZE")
                        else:
                            result = await connection.exec_driver_sql(
                                "ANALYZE TABLE cairn_sessions, cairn_state, cairn_events"
                            )
                            result.fetchall()
                finally:
                    await engine.dispose()

            database = DatabaseSessionService(url)
            try:
                yield OpenStore(
                    database,
                    make_url(url).render_as_string(hide_password=True),
                    analyze_server,
                    url,
                )
            finally:
                await database.close()


# -- raw drivers -----------------------------------------------------------------------------
# The raw limit of each SQL store: the same driver doing, per transaction, the conditional
# UPDATE of one session row and the INSERT of one event row (a realistic event's JSON), on
# tables created from cairn's own schema (same columns and indexes) in a database of its own.
# Its blocks alternate with the store's append blocks, so disk and machine drift (large on
# shared disks, where an fsync can take 0.2 ms or 5 ms) hit both rates alike.
RAW_KEY = ("bench", "raw-user", "raw-session")
RAW_LABELS = {
    "sqlite": "raw sqlite3 WAL synchronous=FULL",
    "sqlite-normal": "raw sqlite3 WAL synchronous=NORMAL",
    "postgres": "raw asyncpg (PostgreSQL)",
    "mariadb": "raw asyncmy (MariaDB)",
}
_UPDATE = (
    "UPDATE cairn_sessions SET revision = {p}, update_time = {p} "
    "WHERE app_name = {p} AND user_id = {p} AND session_id = {p} AND revision = {p}"
)
_INSERT = (
    "INSERT INTO cairn_events (app_name, user_id, session_id, seq, event_id, "
    "invocation_id, timestamp, event) VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}, {p})"
)
_NEW_SESSION = (
    "INSERT INTO cairn_sessions (app_name, user_id, session_id, revision, create_time, "
    "update_time, initial_state) VALUES ({p}, {p}, {p}, 0, {p}, {p}, '{{}}')"
)


def sql(template: str, style: str) -> str:
    """``template`` with the driver's placeholders: ``?``, ``%s``, or ``$`` for $1, $2, ..."""
    marked = template.format(p="\0")
    if style != "$":
        return marked.replace("\0", style)
    parts = marked.split("\0")
    return "".join(f"{part}${i}" for i, part in enumerate(parts[:-1], 1)) + parts[-1]


class RawRunner:
    """Runs raw transactions into one session row, continuing its revision between blocks."""

    label: str

    def __init__(self, label: str) -> None:
        self.label = label
        self.revision = 0
        (event,) = make_events(1)
        self.event_json = event.to_json()

    def rows(self, n: int) -> list[tuple[int, int, str, float]]:
        """(held revision, new revision, event id, timestamp) per transaction, made untimed."""
        now = time.time()
        first = self.revision
        self.revision += n
        return [(r, r + 1, uuid.uuid4().hex, now + r * 1e-6) for r in range(first, first + n)]

    async def run(self, n: int) -> int:
        """Run ``n`` transactions; the elapsed ns."""
        raise NotImplementedError


class RawSqlite(RawRunner):
    def __init__(self, path: Path, synchronous: str, label: str) -> None:
        super().__init__(label)
        engine = create_engine(f"sqlite:///{path}")
        metadata.create_all(engine)
        engine.dispose()
        self.connection = sqlite3.connect(path, isolation_level=None)  # we BEGIN ourselves
        self.connection.execute("PRAGMA journal_mode = WAL")
        self.connection.execute(f"PRAGMA synchronous = {synchronous}")
        now = time.time()
        self.connection.execute(sql(_NEW_SESSION, "?"), (*RAW_KEY, now, now))

    async def run(self, n: int) -> int:
        app, user, sid = RAW_KEY
        update, insert = sql(_UPDATE, "?"), sql(_INSERT, "?")
        execute, raw, rows = self.connection.execute, self.event_json, self.rows(n)
        t0 = time.perf_counter_ns()
        for held, new, event_id, ts in rows:
            execute("BEGIN IMMEDIATE")
            execute(update, (new, ts, app, user, sid, held))
            execute(insert, (app, user, sid, new, event_id, "e-bench", ts, raw))
            execute("COMMIT")
        return time.perf_counter_ns() - t0

    def close(self) -> None:
        self.connection.close()


class RawAsyncpg(RawRunner):
    def __init__(self, connection: Any) -> None:
        super().__init__(RAW_LABELS["postgres"])
        self.connection = connection

    async def run(self, n: int) -> int:
        app, user, sid = RAW_KEY
        update, insert = sql(_UPDATE, "$"), sql(_INSERT, "$")
        connection, raw, rows = self.connection, self.event_json, self.rows(n)
        t0 = time.perf_counter_ns()
        for held, new, event_id, ts in rows:
            async with connection.transaction():  # BEGIN ... COMMIT
                await connection.execute(update, new, ts, app, user, sid, held)
                await connection.execute(insert, app, user, sid, new, event_id, "e-bench", ts, raw)
        return time.perf_counter_ns() - t0


class RawAsyncmy(RawRunner):
    def __init__(self, connection: Any) -> None:
        super().__init__(RAW_LABELS["mariadb"])
        self.connection = connection

    async def run(self, n: int) -> int:
        # Autocommit is off: each transaction starts at its first statement (as with
        # SQLAlchemy, which sends no BEGIN to MySQL/MariaDB) and ends with COMMIT.
        app, user, sid = RAW_KEY
        update, insert = sql(_UPDATE, "%s"), sql(_INSERT, "%s")
        connection, raw, rows = self.connection, self.event_json, self.rows(n)
        async with connection.cursor() as cursor:
            t0 = time.perf_counter_ns()
            for held, new, event_id, ts in rows:
                await cursor.execute(update, (new, ts, app, user, sid, held))
                await cursor.execute(insert, (app, user, sid, new, event_id, "e-bench", ts, raw))
                await connection.commit()
            return time.perf_counter_ns() - t0


async def create_tables(url: str) -> None:
    """cairn's tables and indexes, from its schema (no migration bookkeeping)."""
    engine = create_async_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(metadata.create_all)
    finally:
        await engine.dispose()


@asynccontextmanager
async def open_raw(name: str) -> AsyncIterator[RawRunner | None]:
    """The raw-driver runner matching store ``name`` (None for the in-memory store)."""
    if name == "memory":
        yield None
    elif name in ("sqlite", "sqlite-normal"):
        with tempfile.TemporaryDirectory(prefix="cairn-bench-raw-") as tmp:
            synchronous = "NORMAL" if name == "sqlite-normal" else "FULL"
            runner = RawSqlite(Path(tmp) / "raw.db", synchronous, RAW_LABELS[name])
            try:
                yield runner
            finally:
                runner.close()
    elif name == "postgres":
        import asyncpg

        async with fresh_database(POSTGRES, POSTGRES_ADMIN_DB, "cairn_bench_raw") as url:
            await create_tables(url)
            parsed = make_url(url)
            connection = await asyncpg.connect(
                host=parsed.host,
                port=parsed.port or 5432,
                user=parsed.username,
                password=parsed.password,
                database=parsed.database,
                timeout=CONNECT_TIMEOUT_S,
            )
            try:
                now = time.time()
                await connection.execute(sql(_NEW_SESSION, "$"), *RAW_KEY, now, now)
                yield RawAsyncpg(connection)
            finally:
                await connection.close()
    else:
        import asyncmy

        async with fresh_database(MARIADB, MARIADB_ADMIN_DB, "cairn_bench_raw") as url:
            await create_tables(url)
            parsed = make_url(url)
            connection = await asyncmy.connect(
                host=parsed.host or "127.0.0.1",
                port=parsed.port or 3306,
                user=parsed.username or "root",
                password=parsed.password or "",
                database=parsed.database,
                connect_timeout=CONNECT_TIMEOUT_S,
            )
            try:
                async with connection.cursor() as cursor:
                    # cairn's MySQL/MariaDB pool runs at READ COMMITTED: the same here.
                    await cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
                    now = time.time()
                    await cursor.execute(sql(_NEW_SESSION, "%s"), (*RAW_KEY, now, now))
                await connection.commit()
                yield RawAsyncmy(connection)
            finally:
                connection.close()


# -- one store -------------------------------------------------------------------------------
async def bench_store(name: str, sizes: Sizes) -> StoreResult:
    result = StoreResult(name=name)
    try:
        async with open_store(name) as store, open_raw(name) as raw:
            result.where = store.where
            migrate = getattr(store.service, "migrate", None)
            if migrate is not None:
                await migrate()  # schema creation stays out of every timing
            await measure_store(store, raw, sizes, result)
    except Skipped as exc:
        result.skipped = str(exc)
    except Exception as exc:
        traceback.print_exc()
        result.failed = f"{type(exc).__name__}: {first_line(exc)}"
    return result


async def measure_store(
    store: OpenStore, raw: RawRunner | None, sizes: Sizes, result: StoreResult
) -> None:
    service = store.service
    # append/s: sequential appends into one session, gc enabled (as in a real process),
    # in blocks alternating with blocks of raw-driver transactions (which goes first
    # alternates too), so both rates are measured over the same stretch of time.
    session = await service.create_session(app_name=APP, user_id=USER, session_id="throughput")
    blocks = [make_events(sizes.append_n // sizes.rounds) for _ in range(sizes.rounds)]
    if raw is not None:
        await raw.run(20)  # warm-up: prepared statements, first pages
    store_ns = raw_ns = 0
    gc.collect()
    for r, block in enumerate(blocks):
        if raw is not None and r % 2 == 1:
            raw_ns += await raw.run(len(block))
        t0 = time.perf_counter_ns()
        await append_all(service, session, block)
        store_ns += time.perf_counter_ns() - t0
        if raw is not None and r % 2 == 0:
            raw_ns += await raw.run(len(block))
    appended = sum(len(block) for block in blocks)
    assert session.revision == appended
    result.append_rate = appended / (store_ns / 1e9)
    if raw is not None:
        result.raw_label = raw.label
        result.raw_rate = appended / (raw_ns / 1e9)
    del blocks

    # Full read of that session (config=None: every event is parsed).
    async def full_read() -> None:
        got = await service.get_session(app_name=APP, user_id=USER, session_id="throughput")
        assert got is not None and len(got.events) == appended

    result.full_read_ns = await timed_calls(full_read, sizes.full_read_calls)

    # The large session, filled through append_event: the real store contents.
    large = await service.create_session(app_name=APP, user_id=USER, session_id="large")
    fill = make_events(sizes.large)
    t0 = time.perf_counter_ns()
    await append_all(service, large, fill)
    result.large_fill_rate = sizes.large / ((time.perf_counter_ns() - t0) / 1e9)
    del fill

    recent = GetSessionConfig(num_recent_events=10)

    async def recent_read() -> None:
        got = await service.get_session(
            app_name=APP, user_id=USER, session_id="large", config=recent
        )
        assert got is not None and len(got.events) == 10 and got.revision == sizes.large

    result.recent_read_ns = await timed_calls(recent_read, sizes.recent_read_calls)

    # Per-append cost at ~small vs ~large events, interleaved so drift hits both alike.
    # Small side: a fresh session filled to `small` for each batch. Large side:
    # consecutive batches into the large session (it grows by `batch` per repeat).
    small_runs: list[float] = []
    large_runs: list[float] = []
    for r in range(sizes.cost_repeats):
        small = await service.create_session(app_name=APP, user_id=USER, session_id=f"small-{r}")
        await append_all(service, small, make_events(sizes.small))
        small_runs.append(await timed_batch(service, small, sizes.batch))
        large_runs.append(await timed_batch(service, large, sizes.batch))
    result.cost_small_ns = statistics.median(small_runs)
    result.cost_large_ns = statistics.median(large_runs)

    # creates/s: the sessions of one user that the first page then lists (2 state keys each).
    gc.collect()
    t0 = time.perf_counter_ns()
    for i in range(sizes.sessions):
        await service.create_session(
            app_name=APP,
            user_id=LIST_USER,
            session_id=f"s-{i:06d}",
            state={"topic": "weather in Lisbon", "turns": i},
        )
    result.create_rate = sizes.sessions / ((time.perf_counter_ns() - t0) / 1e9)

    async def first_page() -> None:
        page = await service.list_sessions_page(app_name=APP, user_id=LIST_USER, limit=50)
        assert len(page.sessions) == 50 and page.next_cursor is not None
        assert len(page.sessions[0].state) == 2

    # Measured as the store is right after the creates: whether the server has refreshed its
    # planner statistics by now is up to it (PostgreSQL's autovacuum, InnoDB's auto stats).
    result.page_ns = await timed_calls(first_page, sizes.page_calls)
    if store.analyze is not None:  # and again with fresh statistics, as in a settled database
        await store.analyze()
        result.page_analyzed_ns = await timed_calls(first_page, sizes.page_calls)

    # A fresh process's first load, of a small session and of the large one (now holding
    # `large_held` events), with the store as full as the run leaves it.
    if store.child_where is not None:
        assert large.revision == sizes.large_held
        small = await service.create_session(app_name=APP, user_id=USER, session_id="first-load")
        await append_all(service, small, make_events(sizes.small))
        first_loads(store, result, sizes)


async def timed_batch(service: BaseSessionService, session: Session, batch: int) -> float:
    """Mean ns per append of ``batch`` appends into ``session``, GC disabled."""
    events = make_events(batch, start=session.revision)
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        await append_all(service, session, events)
        elapsed_ns = time.perf_counter_ns() - t0
    finally:
        gc.enable()
    return elapsed_ns / batch


# -- a fresh process's first load ----------------------------------------------------------
FIRST_LOAD = Path(__file__).resolve().with_name("first_load.py")


def child_first_load(name: str, where: str, session_id: str) -> tuple[int, dict[str, Any]]:
    """Start ``bench/first_load.py``: ns from before the process is started to its line
    saying that the session is loaded, and that line (its own timings)."""
    argv = [sys.executable, str(FIRST_LOAD), name, where, APP, USER, session_id]
    with tempfile.TemporaryFile() as errors:
        t0 = time.perf_counter_ns()
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errors, text=True)
        assert child.stdout is not None
        line = child.stdout.readline()
        elapsed_ns = time.perf_counter_ns() - t0
        child.stdout.read()
        child.stdout.close()
        code = child.wait()
        if code != 0 or not line:
            errors.seek(0)
            told = errors.read().decode(errors="replace").strip().splitlines()
            last = told[-1] if told else "no message"
            raise RuntimeError(f"{FIRST_LOAD.name} {session_id} exited with {code}: {last}")
    return elapsed_ns, json.loads(line)


def python_pass_ns() -> int:
    """ns from before ``python -c pass`` is started to its exit."""
    t0 = time.perf_counter_ns()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter_ns() - t0


def first_loads(store: OpenStore, result: StoreResult, sizes: Sizes) -> None:
    """Medians of ``sizes.first_loads`` new processes loading the small and the large
    session, and of as many ``python -c pass``, in rounds (the order alternates).

    Blocking: the event loop (and so the store in this process) waits, idle.
    """
    assert store.child_where is not None
    name = result.name
    expected = {"first-load": sizes.small, "large": sizes.large_held}
    samples: dict[str, list[int]] = {key: [] for key in ("pass", "first-load", "large")}
    gets: dict[str, list[int]] = {"first-load": [], "large": []}
    imports: list[int] = []
    if name in ("sqlite", "sqlite-normal"):
        result.file_bytes = Path(store.child_where).stat().st_size
    order = ["pass", "first-load", "large"]
    for r in range(sizes.first_loads):
        for what in order if r % 2 == 0 else order[::-1]:
            if what == "pass":
                samples[what].append(python_pass_ns())
                continue
            elapsed_ns, told = child_first_load(name, store.child_where, what)
            if told["events"] != expected[what]:
                raise AssertionError(f"{what}: loaded {told['events']} of {expected[what]} events")
            samples[what].append(elapsed_ns)
            gets[what].append(told["get_ns"])
            imports.append(told["imports_ns"])
    result.python_pass_ns = median_ns(samples["pass"])
    result.first_load_small_ns = median_ns(samples["first-load"])
    result.first_load_large_ns = median_ns(samples["large"])
    result.first_get_small_ns = median_ns(gets["first-load"])
    result.first_get_large_ns = median_ns(gets["large"])
    result.child_imports_ns = median_ns(imports)


# -- server facts ----------------------------------------------------------------------------
async def server_facts(server: str, admin_db: str, queries: dict[str, str]) -> str:
    engine = create_async_engine(admin_url(server, admin_db), connect_args=connect_args(server))
    try:
        async with engine.connect() as connection:
            found = [
                f"{label}={(await connection.execute(text(q))).scalar()}"
                for label, q in queries.items()
            ]
        return ", ".join(found)
    except Exception as exc:
        return f"unreachable ({first_line(exc)})"
    finally:
        await engine.dispose()


async def print_header(stores: list[str], sizes: Sizes, quick: bool) -> None:
    say(
        f"cairn {cairn.__version__} session-store benchmark"
        f"{' (--quick: smaller sizes)' if quick else ''}"
    )
    say(f"Python {platform.python_version()} ({platform.python_implementation()})")
    say(
        f"Machine: processor={platform.processor() or '?'!r} machine={platform.machine()!r} "
        f"cpus={os.cpu_count()} ({platform.platform()})"
    )
    say(f"SQLAlchemy {sqlalchemy.__version__}; SQLite library {sqlite3.sqlite_version}")
    if "sqlite" in stores or "sqlite-normal" in stores:
        say(f"SQLite files in: {tempfile.gettempdir()} (set TMPDIR to move them)")
    if "postgres" in stores:
        facts = await server_facts(
            POSTGRES,
            POSTGRES_ADMIN_DB,
            {
                "server": "SHOW server_version",
                "fsync": "SHOW fsync",
                "synchronous_commit": "SHOW synchronous_commit",
            },
        )
        say(f"PostgreSQL {POSTGRES}: {facts}")
    if "mariadb" in stores:
        facts = await server_facts(
            MARIADB,
            MARIADB_ADMIN_DB,
            {
                "server": "SELECT VERSION()",
                "innodb_flush_log_at_trx_commit": "SELECT @@innodb_flush_log_at_trx_commit",
            },
        )
        say(f"MariaDB {MARIADB}: {facts}")
    say(
        f"Sizes: {sizes.append_n:,} appends for append/s; cost batches of {sizes.batch} "
        f"appends at ~{sizes.small:,} and ~{sizes.large:,} events (median of "
        f"{sizes.cost_repeats}); {sizes.sessions:,} sessions listed"
    )
    say()


# -- report ----------------------------------------------------------------------------------
def fmt_rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def fmt_ms(ns: float | None) -> str:
    if ns is None:
        return "-"
    ms = ns / 1e6
    return f"{ms:,.3f}" if ms < 1 else f"{ms:,.2f}" if ms < 100 else f"{ms:,.0f}"


def fmt_us(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1000:,.1f}"


def fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def row_labels(sizes: Sizes) -> list[tuple[str, Callable[[StoreResult], str]]]:
    """(label, cell) of every table row; sizes that --quick shrinks are in the labels."""
    q = " [quick size]" if sizes.large != FULL.large else ""
    n, small, large = f"{sizes.append_n:,}", f"{sizes.small:,}", f"{sizes.large:,}"
    held = f"{sizes.large_held:,}"
    return [
        (f"append/s ({n} appends, one session)", lambda r: fmt_rate(r.append_rate)),
        ("raw driver tx/s (alternating blocks)", lambda r: fmt_rate(r.raw_rate)),
        ("append/s / raw tx/s", lambda r: fmt_ratio(r.vs_raw)),
        (f"append µs @~{small} events", lambda r: fmt_us(r.cost_small_ns)),
        (f"append µs @~{large} events{q}", lambda r: fmt_us(r.cost_large_ns)),
        (f"append cost ratio {large} / {small}{q}", lambda r: fmt_ratio(r.cost_ratio)),
        (f"full read ms ({n} events)", lambda r: fmt_ms(r.full_read_ns)),
        (f"recent-10 read ms @{large} events{q}", lambda r: fmt_ms(r.recent_read_ns)),
        (f"first page ms (50 of {sizes.sessions:,} sessions)", lambda r: fmt_ms(r.page_ns)),
        ("first page ms, after ANALYZE", lambda r: fmt_ms(r.page_analyzed_ns)),
        (f"creates/s ({sizes.sessions:,}, 2 state keys each)", lambda r: fmt_rate(r.create_rate)),
        (f"context: appends/s filling to {large}", lambda r: fmt_rate(r.large_fill_rate)),
        (f"first load ms, new process @{small} events", lambda r: fmt_ms(r.first_load_small_ns)),
        (f"  its first get_session ms @{small}", lambda r: fmt_ms(r.first_get_small_ns)),
        (
            f"first load ms, new process @{held} events{q}",
            lambda r: fmt_ms(r.first_load_large_ns),
        ),
        (f"  its first get_session ms @{held}{q}", lambda r: fmt_ms(r.first_get_large_ns)),
        ("  its imports ms (import cairn, cairn.sessions)", lambda r: fmt_ms(r.child_imports_ns)),
        ("context: python -c pass ms (same run)", lambda r: fmt_ms(r.python_pass_ns)),
    ]


def print_table(results: list[StoreResult], sizes: Sizes) -> None:
    width = max(14, *(len(r.name) + 2 for r in results))
    labels = row_labels(sizes)
    label_width = max(len(label) for label, _ in labels) + 2
    say("Store".ljust(label_width) + "".join(r.name.rjust(width) for r in results))
    say("-" * (label_width + width * len(results)))
    for label, cell in labels:
        cells = [cell(r) if r.ok else ("skipped" if r.skipped else "FAILED") for r in results]
        say(label.ljust(label_width) + "".join(c.rjust(width) for c in cells))
    say()
    for r in results:
        if r.skipped:
            say(f"  {r.name}: skipped: {r.skipped}")
        elif r.failed:
            say(f"  {r.name}: FAILED: {r.failed}")
        else:
            size = "" if r.file_bytes is None else f" ({r.file_bytes / 1e6:,.1f} MB at first load)"
            say(f"  {r.name}: {STORE_TITLES[r.name]}; {r.where}{size}")
    say()


def print_raw(results: list[StoreResult], sizes: Sizes) -> None:
    say("Raw driver limits: per transaction, UPDATE one cairn_sessions row (revision-checked)")
    say("  + INSERT one cairn_events row (a realistic event's JSON), on tables made from")
    say(
        f"  cairn's schema; {sizes.append_n:,} transactions in {sizes.rounds} blocks alternating "
        "with the store's append blocks"
    )
    sql_stores = [r for r in results if r.name in RAW_LABELS]
    width = max((len(RAW_LABELS[r.name]) for r in sql_stores), default=0) + 2
    for r in sql_stores:
        label = RAW_LABELS[r.name].ljust(width)
        if r.raw_rate is not None and r.append_rate is not None:
            say(
                f"  {label}{r.raw_rate:>8,.0f} tx/s   "
                f"(alongside {r.name}: {r.append_rate:,.0f} appends/s)"
            )
        else:
            say(f"  {label}skipped: {r.name} was {'skipped' if r.skipped else 'not measured'}")
    if not sql_stores:
        say("  (none: no SQL store selected)")
    say()


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def print_targets(results: list[StoreResult], sizes: Sizes) -> None:
    done = [r for r in results if r.ok]
    q = " (quick size)" if sizes.large != FULL.large else ""
    say("Targets (informational; nothing here fails the run)")
    goals = TARGET_VS_RAW
    for r in done:
        if r.vs_raw is None or r.append_rate is None or r.raw_rate is None:
            continue
        target = goals.get(r.name)
        goal = f"target >= {target}x -> {verdict(r.vs_raw >= target)}" if target else "(no target)"
        say(
            f"  {r.name} append/s vs {r.raw_label}: {r.append_rate:,.0f} / {r.raw_rate:,.0f} "
            f"= {r.vs_raw:.2f}x   {goal}"
        )
    for r in done:
        if r.cost_ratio is not None:
            say(
                f"  {r.name} append cost ratio {sizes.large:,} / {sizes.small:,}{q}: "
                f"{r.cost_ratio:.2f}x   target <= {TARGET_COST_RATIO}x "
                f"-> {verdict(r.cost_ratio <= TARGET_COST_RATIO)}"
            )
    for r in done:
        if r.recent_read_ns is not None:
            ms = r.recent_read_ns / 1e6
            goal = (
                f"target <= {TARGET_RECENT_MS:g} ms -> {verdict(ms <= TARGET_RECENT_MS)}"
                if r.name in TARGET_RECENT_STORES
                else "(target set for SQLite and PostgreSQL only)"
            )
            say(f"  {r.name} recent-10 read @{sizes.large:,}{q}: {ms:,.3f} ms   {goal}")
    for r in done:
        if r.page_ns is not None:
            ms = r.page_ns / 1e6
            analyzed = ""
            if r.page_analyzed_ns is not None:
                after = r.page_analyzed_ns / 1e6
                analyzed = (
                    f" (after ANALYZE: {after:,.2f} ms -> {verdict(after <= TARGET_PAGE_MS)})"
                )
            say(
                f"  {r.name} first page of {sizes.sessions:,} sessions: {ms:,.2f} ms   "
                f"target <= {TARGET_PAGE_MS:g} ms -> {verdict(ms <= TARGET_PAGE_MS)}{analyzed}"
            )
    say(f"  reference (quoted from the issue, NOT measured here): {REFERENCE}")


# -- main ----------------------------------------------------------------------------------
async def run(stores: list[str], sizes: Sizes, quick: bool) -> int:
    await print_header(stores, sizes, quick)
    results: list[StoreResult] = []
    for name in stores:
        t0 = time.perf_counter()
        say(f"... measuring {name}")
        result = await bench_store(name, sizes)
        state = "skipped" if result.skipped else "FAILED" if result.failed else "done"
        say(f"    {state} in {time.perf_counter() - t0:,.1f} s")
        results.append(result)
    say()
    print_table(results, sizes)
    print_raw(results, sizes)
    print_targets(results, sizes)
    return 1 if any(r.failed for r in results) else 0


def parse_stores(value: str) -> list[str]:
    stores = [s.strip() for s in value.split(",") if s.strip()]
    unknown = [s for s in stores if s not in ALL_STORES]
    if unknown or not stores:
        raise argparse.ArgumentTypeError(
            f"unknown store(s) {', '.join(unknown) or '(none given)'}; "
            f"choose from {','.join(ALL_STORES)}"
        )
    return list(dict.fromkeys(stores))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--quick", action="store_true", help="smaller sizes, for a smoke run (well under a minute)"
    )
    parser.add_argument(
        "--stores",
        type=parse_stores,
        default=list(ALL_STORES),
        help=f"comma-separated stores to measure (default: {','.join(ALL_STORES)})",
    )
    args = parser.parse_args(argv)
    # MariaDB reports a harmless note while cairn's migration creates its version table;
    # asyncmy logs every server warning, which would only clutter the output.
    logging.getLogger("asyncmy").setLevel(logging.ERROR)
    return asyncio.run(run(args.stores, QUICK if args.quick else FULL, args.quick))


if __name__ == "__main__":
    sys.exit(main())
