"""Submitting runs of the recorder agent to Temporal and watching them in PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
from google.genai import types
from temporalio.client import Client
from tests.runs.temporal.agents.recorder.agent import MODEL_GATE, TOOL_GATE
from tests.support.waiting import until

from cairn.agents.invocation_context import new_invocation_id
from cairn.cli._loading import load_target
from cairn.errors import AlreadyExistsError
from cairn.events.event import Event
from cairn.runners.runner import Runner
from cairn.runs.executor import RunExecutor
from cairn.runs.in_process import InProcessExecutor
from cairn.runs.temporal import RunPolicy, TemporalExecutor, run_worker
from cairn.runs.temporal.target import connect
from cairn.sessions.database_session_service import DatabaseSessionService
from cairn.sessions.run_store import RunStatus, StoredRun, run_store_for

RECORDER = Path(__file__).resolve().parent / "agents" / "recorder"
APP = "recorder"
USER = "u"
FAST = RunPolicy(heartbeat_timeout=2.0, retry_first=0.2, retry_max=1.0, runs_per_history=4)
"""Short timeouts, so a dead worker is replaced quickly, and continue-as-new every 4 runs."""
GATES = {"model": MODEL_GATE, "tool": TOOL_GATE}


def asyncpg_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


@dataclasses.dataclass
class Harness:
    """The store, the executor on one task queue, and the test's own PostgreSQL connection
    (which holds the gates)."""

    store: DatabaseSessionService
    client: Client
    task_queue: str
    gates: asyncpg.Connection
    policy: RunPolicy = FAST
    kind: str = "temporal"
    """The executor: ``temporal`` (workers on the task queue) or ``in-process``."""

    def __post_init__(self) -> None:
        self._gates_lock = asyncio.Lock()  # one statement at a time on the test's connection
        self.runs = run_store_for(self.store)
        self.runner = Runner(
            app_name=APP, agent=load_target(RECORDER).agent, session_service=self.store
        )
        self.executor: RunExecutor
        if self.kind == "in-process":
            self.executor = InProcessExecutor(self.runs, self.store, self.runner_for)
            return
        target = self.client.service_client.config.target_host
        self.temporal = TemporalExecutor(
            self.runs,
            f"temporal://{target}",
            task_queue=self.task_queue,
            policy=self.policy,
            client=self.client,
        )
        self.executor = self.temporal

    async def runner_for(self, app_name: str) -> Runner:
        assert app_name == APP
        return self.runner

    @contextlib.asynccontextmanager
    async def worker(self, *, own_client: bool = False) -> AsyncIterator[None]:
        """A worker in this process polling the task queue (with a client of its own: the
        SDK allows one worker per client and task queue); in-process, the executor itself,
        closed at the end."""
        if self.kind == "in-process":
            try:
                yield
            finally:
                await self.executor.close()
            return
        client = await connect(self.temporal.target) if own_client else self.client
        async with run_worker(
            client, self.store, self.runner_for, task_queue=self.task_queue, policy=self.policy
        ):
            yield

    # -- runs ------------------------------------------------------------------------------
    async def submit(
        self,
        session_id: str,
        *,
        strategy: str = "enqueue",
        note: str | None = None,
        webhook: str | None = None,
    ) -> StoredRun:
        """Store a run whose message is its note (its id, unless given) and submit it."""
        with contextlib.suppress(AlreadyExistsError):
            await self.store.create_session(app_name=APP, user_id=USER, session_id=session_id)
        run_id = new_invocation_id()
        message = types.UserContent(parts=[types.Part(text=note or run_id)])
        row = StoredRun(
            app_name=APP,
            user_id=USER,
            session_id=session_id,
            run_id=run_id,
            seq=0,
            status=RunStatus.PENDING,
            strategy=strategy,
            request={
                "newMessage": message.model_dump(mode="json", by_alias=True, exclude_none=True),
                "continuing": False,
            },
            created_at=time.time(),
            webhook=webhook,
        )
        return await self.executor.submit(await self.runs.create_run(row))

    async def row(self, run: StoredRun) -> StoredRun:
        found = await self.runs.get_run(*run.key, run.run_id)
        assert found is not None
        return found

    async def settled(self, run: StoredRun) -> StoredRun:
        """The run's row once it has ended or paused."""

        async def ready() -> bool:
            status = (await self.row(run)).status
            return status.ended or status is RunStatus.PAUSED

        await until(ready, f"run {run.run_id} ends or pauses")
        return await self.row(run)

    async def answer_in_doubt(self, run: StoredRun) -> StoredRun:
        """Answer the paused run's calls in doubt with a result (never a re-run) and submit
        it again: it continues its invocation."""
        pending = await self.runner.list_pending_interrupts(user_id=USER, session_id=run.session_id)
        doubts = [i for i in pending if i.invocation_id == run.run_id]
        assert doubts and all(i.kind == "in_doubt" for i in doubts), doubts
        answer = types.UserContent(
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=i.id, name=i.name, response={"result": {"recorded": "by hand"}}
                    )
                )
                for i in doubts
            ]
        )
        request = {
            "newMessage": answer.model_dump(mode="json", by_alias=True, exclude_none=True),
            "continuing": True,
        }
        again = await self.runs.update_run(
            *run.key,
            run.run_id,
            expect_status={RunStatus.PAUSED},
            status=RunStatus.PENDING,
            request=request,
        )
        assert again is not None
        return await self.executor.submit(again)

    # -- what the agent did -----------------------------------------------------------------
    async def steps(self, kind: str, note: str) -> list[asyncpg.Record]:
        async with self._gates_lock:
            return await self.gates.fetch(
                "SELECT * FROM steps WHERE kind = $1 AND note = $2 ORDER BY at", kind, note
            )

    async def wait_step(self, kind: str, note: str, count: int = 1) -> asyncpg.Record:
        """The ``count``-th time the step started (its row, naming the worker's pid)."""

        async def started() -> bool:
            return len(await self.steps(kind, note)) >= count

        await until(started, f"{kind} step {count} of {note}")
        return (await self.steps(kind, note))[count - 1]

    async def hold(self, kind: str, note: str) -> None:
        async with self._gates_lock:
            await self.gates.execute("SELECT pg_advisory_lock($1, hashtext($2))", GATES[kind], note)

    async def release(self, kind: str, note: str) -> None:
        async with self._gates_lock:
            await self.gates.execute(
                "SELECT pg_advisory_unlock($1, hashtext($2))", GATES[kind], note
            )

    async def events(self, session_id: str) -> list[Event]:
        session = await self.store.get_session(app_name=APP, user_id=USER, session_id=session_id)
        assert session is not None
        return session.events


def invocation_order(events: list[Event]) -> list[str]:
    """The invocations of the log in order, one entry per contiguous block of events."""
    blocks: list[str] = []
    for event in events:
        if not blocks or blocks[-1] != event.invocation_id:
            blocks.append(event.invocation_id)
    return blocks


def texts(events: list[Event], invocation_id: str) -> list[str]:
    return [
        part.text
        for event in events
        if event.invocation_id == invocation_id and event.content is not None
        for part in event.content.parts or []
        if part.text
    ]


def summary(value: Any) -> str:
    return repr(value)[:200]
