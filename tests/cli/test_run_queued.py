"""``cairn run`` on a session another process is running: it says the message is queued
(behind how many) instead of waiting silently, and runs it once the session is free."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tests.cli.harness import AGENTS
from tests.cli.test_lease_ttl import cairn
from tests.support.waiting import BOUND_SECONDS, wait_until

from cairn.sessions.lease import SessionLease
from cairn.sessions.run_store import RunStatus, StoredRun, run_store_for
from cairn.sessions.sqlite_session_service import SqliteSessionService

APP, USER, SESSION = "stall", "user", "s1"


async def occupy(store: Path) -> int:
    """The session, held by another invocation, with a run a server queued behind it."""
    async with SqliteSessionService(str(store)) as service:
        await service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
        held = await service.acquire_session_lease(
            app_name=APP, user_id=USER, session_id=SESSION, holder="e-other@elsewhere", ttl=3600
        )
        assert isinstance(held, SessionLease)
        await run_store_for(service).create_run(
            StoredRun(
                APP, USER, SESSION, "e-queued", 0, RunStatus.PENDING, "enqueue", {}, time.time()
            )
        )
        return held.generation


async def free(store: Path, generation: int) -> None:
    async with SqliteSessionService(str(store)) as service:
        await service.release_session_lease(
            app_name=APP, user_id=USER, session_id=SESSION, holder="e-other@elsewhere",
            generation=generation,
        )  # fmt: skip


def test_a_message_for_a_busy_session_says_it_is_queued_then_runs(tmp_path: Path) -> None:
    store, out = tmp_path / "sessions.db", tmp_path / "out.txt"
    generation = asyncio.run(occupy(store))
    with out.open("w") as stdout:
        process = cairn(
            "run", str(AGENTS / "stall.py"), "--store", str(store), "--session", SESSION,
            stdin=-1, stdout=stdout, stderr=-2,
        )  # fmt: skip
    try:
        assert process.stdin is not None
        process.stdin.write("hello\n")
        process.stdin.flush()

        def queued() -> bool:
            assert process.poll() is None, out.read_text()
            return "queued behind" in out.read_text()

        wait_until(queued, "cairn run says the message is queued")
        said = out.read_text()
        assert "invocation e-other is running" in said and "queued behind 2 run(s)" in said
        assert "stall: ok" not in said  # it waits for its turn

        asyncio.run(free(store, generation))
        wait_until(lambda: "stall: ok" in out.read_text(), "the queued message runs")
        process.stdin.close()
        assert process.wait(timeout=BOUND_SECONDS) == 0, out.read_text()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
