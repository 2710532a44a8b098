"""The SQLite store's group commit: with ``synchronous="FULL"`` an append returns only once
a flush of the file's write-ahead log that began after its commit has ended, and the
appends committed while a flush runs share the next one."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from google.genai import types

from cairn import SqliteSessionService
from cairn.events import Event
from cairn.sessions.session import Session

WRITERS = 24


class Flushes:
    """``os.fsync`` as it is, counting the flushes of one file; ``hold()`` makes the next
    flush of that file wait until ``release()``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self.started = threading.Event()
        self._gate: threading.Event | None = None
        self._real = os.fsync

    def __call__(self, descriptor: int) -> None:
        if os.path.realpath(f"/proc/self/fd/{descriptor}") == str(self.path.resolve()):
            gate = self._gate
            self._gate = None
            self.started.set()
            if gate is not None:
                gate.wait()
            self.count += 1
        self._real(descriptor)

    def hold(self) -> threading.Event:
        self.started.clear()
        self._gate = threading.Event()
        return self._gate


@pytest.fixture
def flushes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Flushes]:
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to tell which file a descriptor is")
    counting = Flushes(tmp_path / "sessions.db-wal")
    monkeypatch.setattr(os, "fsync", counting)
    yield counting


def said(session: Session, text: str) -> Event:
    return Event(
        invocation_id=f"i-{session.id}",
        author="user",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )


def any_done(tasks: list[asyncio.Future[Event]]) -> bool:
    return any(task.done() for task in tasks)


async def until(condition: Callable[[], bool]) -> None:
    """Let the event loop run until ``condition()`` holds (a bounded number of turns, so a
    broken store fails the test instead of hanging it)."""
    for _ in range(100_000):
        if condition():
            return
        await asyncio.sleep(0)


def stored_count(path: Path) -> int:
    with sqlite3.connect(path) as reader:
        (count,) = reader.execute("SELECT count(*) FROM cairn_events").fetchone()
    return int(count)


async def test_appends_share_a_flush_and_return_only_after_it(
    tmp_path: Path, flushes: Flushes
) -> None:
    store = SqliteSessionService(tmp_path / "sessions.db")
    try:
        sessions = [
            await store.create_session(app_name="a", user_id="u", session_id=f"s{n}")
            for n in range(WRITERS)
        ]
        await store.append_event(sessions[0], said(sessions[0], "warm"))  # the log exists
        before = flushes.count
        gate = flushes.hold()
        first = asyncio.ensure_future(store.append_event(sessions[1], said(sessions[1], "one")))
        while not (flushes.started.is_set() or first.done()):
            await asyncio.sleep(0)
        # Its flush has begun (and waits at the gate): it has not returned.
        assert flushes.started.is_set() and not first.done()
        others = [
            asyncio.ensure_future(store.append_event(s, said(s, "more"))) for s in sessions[2:]
        ]
        try:
            # Every other append commits meanwhile (a commit never waits for a flush)...
            await until(lambda: stored_count(store.path) == WRITERS or any_done(others))
            # ... and none returns before a flush that began after its commit.
            assert stored_count(store.path) == WRITERS
            assert not first.done() and not any_done(others)
        finally:
            gate.set()
        await asyncio.gather(first, *others)
    finally:
        await store.close()
    # The held flush covered the first append; the others, committed while it ran, shared
    # the flush after it.
    assert flushes.count - before == 2


async def test_a_lease_and_a_normal_store_wait_for_no_flush(
    tmp_path: Path, flushes: Flushes
) -> None:
    store = SqliteSessionService(tmp_path / "sessions.db")
    try:
        session = await store.create_session(app_name="a", user_id="u", session_id="s")
        await store.append_event(session, said(session, "warm"))
        before = flushes.count
        lease = await store.acquire_session_lease(
            app_name="a", user_id="u", session_id="s", holder="me", ttl=30.0
        )
        assert not isinstance(lease, str)
        assert flushes.count == before
    finally:
        await store.close()
    relaxed = SqliteSessionService(tmp_path / "sessions.db", synchronous="NORMAL")
    try:
        session = await relaxed.create_session(app_name="a", user_id="u", session_id="t")
        before = flushes.count
        await relaxed.append_event(session, said(session, "no flush"))
        assert flushes.count == before
        assert stored_count(relaxed.path) == 2
    finally:
        await relaxed.close()
