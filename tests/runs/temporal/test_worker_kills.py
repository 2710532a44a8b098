"""THE KILL TEST: `cairn worker` processes killed with SIGKILL in the middle of invocations,
at least 50 times, replacements always coming; every run completes exactly once.

Each kill waits on readiness, never on time: a run's model call or tool body has recorded
that it started (in PostgreSQL, with its worker's pid) and waits at a gate the test holds;
the test then kills that worker. The run's activity stops heartbeating, Temporal retries it
on another worker, which resumes the same invocation: a model call killed before its
reply was committed is made again; a tool killed in its body is in doubt, so the run
pauses on it (the tool is not idempotent) until the test answers with a result. Other
sessions' runs on the killed worker are cut wherever they were.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from tests.runs.temporal.agents.recorder.agent import DSN_VARIABLE
from tests.runs.temporal.harness import Harness, asyncpg_dsn, invocation_order
from tests.support.waiting import until

from cairn.sessions.run_store import RunStatus, StoredRun

pytestmark = pytest.mark.asyncio(loop_scope="module")

AGENTS = Path(__file__).resolve().parent / "agents"
SRC = Path(__file__).resolve().parents[3] / "src"
WORKERS = 3
SESSIONS = 8
MIN_RUNS = 3
KILLS = 50
PLANS = {"model": ("model", 2), "tool": ("tool", 1), "free": (None, 0)}
"""A run's plan: the step it is held at, and how many times its worker is killed there."""


class Workers:
    """``cairn worker`` processes: a fixed number alive, each killed one replaced at once."""

    def __init__(self, harness: Harness, database: str, logs: Path) -> None:
        self.harness = harness
        self.database = database
        self.logs = logs
        self.alive: dict[int, asyncio.subprocess.Process] = {}
        self.kills = 0
        self.started = 0
        self._lock = asyncio.Lock()

    async def spawn(self) -> None:
        target = str(self.harness.temporal.target)
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(SRC), str(SRC.parent)]),
            DSN_VARIABLE: asyncpg_dsn(self.database),
        }
        self.started += 1
        log = (self.logs / f"worker-{self.started}.log").open("wb")
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "cairn.cli",
            "worker",
            str(AGENTS),
            "--executor",
            target,
            "--task-queue",
            self.harness.task_queue,
            "--store",
            self.database,
            stdout=log,
            stderr=log,
            env=env,
        )
        log.close()
        self.alive[process.pid] = process

    async def kill(self, pid: int) -> bool:
        """SIGKILL the worker ``pid`` (if it is alive and ours) and start another."""
        async with self._lock:
            process = self.alive.pop(pid, None)
            if process is None:
                return False
            process.send_signal(signal.SIGKILL)
            await process.wait()
            self.kills += 1
            await self.spawn()
            return True

    async def stop(self) -> None:
        for process in self.alive.values():
            process.send_signal(signal.SIGTERM)
        for process in self.alive.values():
            await process.wait()


@pytest_asyncio.fixture(loop_scope="module")
async def workers(harness: Harness, database: str, tmp_path: Path) -> AsyncIterator[Workers]:
    pool = Workers(harness, database, tmp_path)
    for _ in range(WORKERS):
        await pool.spawn()
    try:
        yield pool
    finally:
        await pool.stop()


async def moved(harness: Harness, run: StoredRun, gate: str | None, seen: int) -> Moved:
    """Wait until the run ends or pauses, or reaches its gate once more than ``seen``."""
    found: list[Moved] = []

    async def check() -> bool:
        row = await harness.row(run)
        steps = await harness.steps(gate, run_note(run)) if gate is not None else []
        found[:] = [Moved(row, [step["pid"] for step in steps])]
        return row.status.ended or row.status is RunStatus.PAUSED or len(steps) > seen

    await until(check, f"run {run_note(run)} moves on")
    return found[0]


@dataclasses.dataclass
class Moved:
    row: StoredRun
    pids: list[int]
    """The pids of the workers where the run reached its gate, in order."""


def run_note(run: StoredRun) -> str:
    return str(run.request["newMessage"]["parts"][0]["text"])


async def drive(
    harness: Harness, workers: Workers, session_id: str, first: int
) -> dict[str, dict[str, Any]]:
    """Run the session's runs one after another (a run in doubt blocks its session until it
    is answered), killing workers at the planned steps, until ``KILLS`` kills have landed
    (and at least ``MIN_RUNS`` runs ran)."""
    ran: dict[str, dict[str, Any]] = {}
    names = list(PLANS)
    k = 0
    while k < MIN_RUNS or workers.kills < KILLS:
        name = names[(first + k) % len(names)]
        note = f"{session_id}-{k}"
        gate, planned = PLANS[name]
        if gate is not None:
            await harness.hold(gate, note)
        run = await harness.submit(session_id, note=note)
        held = gate is not None
        answered = seen = 0
        while True:
            now = await moved(harness, run, gate, seen)
            if now.row.status is RunStatus.PAUSED:
                answered += 1
                await harness.answer_in_doubt(now.row)
                continue
            if now.row.status.ended:
                break
            assert gate is not None
            seen = len(now.pids)
            if planned and workers.kills < KILLS:
                # (a worker killed already for another run: this one arrives again elsewhere)
                planned -= await workers.kill(now.pids[-1])
            elif held:
                held = False
                await harness.release(gate, note)
        if held:
            assert gate is not None
            await harness.release(gate, note)
        ran[run.run_id] = {"note": note, "status": now.row.status, "answered": answered}
        k += 1
    return ran


async def test_workers_killed_mid_invocation_leave_every_run_done_exactly_once(
    harness: Harness, workers: Workers
) -> None:
    sessions = [f"kill-{n}" for n in range(SESSIONS)]
    started = time.monotonic()
    results = await asyncio.gather(*(drive(harness, workers, s, n) for n, s in enumerate(sessions)))
    print(f"{workers.kills} kills, {workers.started} workers, {time.monotonic() - started:.0f} s")

    assert workers.kills >= KILLS, f"only {workers.kills} kills landed"
    for session_id, ran in zip(sessions, results, strict=True):
        assert all(r["status"] is RunStatus.DONE for r in ran.values()), ran
        events = await harness.events(session_id)
        ids = [e.id for e in events]
        assert len(ids) == len(set(ids)), "an event was stored twice"
        # One after another, in submission order, never overlapping: each run's events
        # are one block of the log.
        assert invocation_order(events) == list(ran)
        for run_id, result in ran.items():
            mine = [e for e in events if e.invocation_id == run_id]
            messages = [
                e
                for e in mine
                if e.author == "user" and e.content and e.content.parts and e.content.parts[0].text
            ]
            calls = [c for e in mine for c in e.get_function_calls() if c.name == "record"]
            finals = [
                e
                for e in mine
                if e.is_final_response()
                and e.content
                and e.content.parts
                and (e.content.parts[0].text or "").startswith("recorded")
            ]
            assert [m.content.parts[0].text for m in messages] == [result["note"]]  # type: ignore[union-attr, index]
            assert len(calls) == 1 and len(finals) == 1, (run_id, mine)
            executions = Counter(
                row["call_id"] for row in await harness.steps("tool", str(result["note"]))
            )
            # A call is executed at most once: a call in doubt is never re-run unasked
            # (the test answers with a result); an unpaused run executed its call once.
            assert all(count == 1 for count in executions.values()), executions
            if not result["answered"]:
                assert set(executions) == {calls[0].id}
