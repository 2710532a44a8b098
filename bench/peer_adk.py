"""google-adk side of bench/peers.py: the workloads of bench/workflows.py, without cairn.

Runs inside bench/.peers/adk (made by bench/peers.py), never in the project's venv:

    python bench/peer_adk.py [--invocations 200] [--rounds 200] [--stores memory,...]

Uses ADK 2.x workflows (google.adk.workflow: Workflow, START; plain functions become
FunctionNodes). The throughput workload uses a plain `Runner(node=workflow)`, as
bench/workflows.py does for cairn (with a resumable App it runs ~3x slower: ~10/s instead of
~29/s in memory at 200 invocations); the input workload uses a Runner built from an
`App(resumability_config=ResumabilityConfig(is_resumable=True))`.

1. A 5-node linear Workflow of plain functions, each writing one `ctx.state` key:
   `--invocations` invocations of `runner.run_async` in one session.
2. A 3-node Workflow whose middle node yields `RequestInput`: per round, one invocation that
   pauses (an `adk_request_input` long-running function call) and one timed invocation
   answering it with a FunctionResponse, all rounds in one session; the median of rounds
   8-10 and of the last three rounds.

Stores: InMemorySessionService, SqliteSessionService (a temporary file) and
DatabaseSessionService on PostgreSQL (postgresql+asyncpg, a fresh database, dropped after).

Prints one machine-readable line per figure:
    RESULT peer=adk workload=throughput store=memory value=<invocations/s>
    RESULT peer=adk workload=resume10 store=memory value=<ms>
    RESULT peer=adk workload=resume200 store=memory value=<ms>   (200 = --rounds)
    FAILED peer=adk store=<store> reason=<one line>
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from google.adk.apps import App, ResumabilityConfig
from google.adk.events import RequestInput
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService, InMemorySessionService
from google.adk.workflow import START, Workflow
from google.genai import types

POSTGRES = "postgresql+asyncpg://postgres@127.0.0.1:5432"


def step(i: int) -> Any:
    def write(node_input: Any, ctx: Any) -> int:
        ctx.state[f"step{i}"] = i
        return i

    write.__name__ = f"step{i}"
    return write


def before(node_input: Any) -> str:
    return "draft"


def ask(node_input: Any):  # type: ignore[no-untyped-def]
    yield RequestInput(message="ok?")


def after(node_input: Any) -> str:
    return f"done {node_input}"


def said(value: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=value)])


def plain_runner(workflow: Workflow, service: Any) -> Runner:
    return Runner(node=workflow, app_name="bench", session_service=service)


def resumable_runner(workflow: Workflow, service: Any) -> Runner:
    app = App(
        name="bench",
        root_agent=workflow,
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    return Runner(app=app, session_service=service)


async def throughput(service: Any, invocations: int) -> float:
    workflow = Workflow(name="linear", edges=[(START, *(step(i) for i in range(5)))])
    runner = plain_runner(workflow, service)
    await service.create_session(app_name="bench", user_id="u", session_id="linear")
    started = time.perf_counter()
    for _ in range(invocations):
        async for _event in runner.run_async(
            user_id="u", session_id="linear", new_message=said("go")
        ):
            pass
    elapsed = time.perf_counter() - started
    session = await service.get_session(app_name="bench", user_id="u", session_id="linear")
    if session is None or session.state.get("step4") != 4:
        raise RuntimeError("the linear workflow did not write its state")
    return invocations / elapsed


async def resume_times(service: Any, rounds: int) -> dict[int, float]:
    workflow = Workflow(name="review", edges=[(START, before, ask, after)])
    runner = resumable_runner(workflow, service)
    await service.create_session(app_name="bench", user_id="u", session_id="review")
    measured: dict[int, list[float]] = {}
    marks = {10, rounds}
    for round_number in range(1, rounds + 1):
        waiting = None
        async for event in runner.run_async(
            user_id="u", session_id="review", new_message=said("go")
        ):
            if event.long_running_tool_ids:
                waiting = next(iter(event.long_running_tool_ids))
        if waiting is None:
            raise RuntimeError(f"round {round_number} did not ask for input")
        reply = types.FunctionResponse(
            id=waiting, name="adk_request_input", response={"result": "ok"}
        )
        message = types.Content(role="user", parts=[types.Part(function_response=reply)])
        finished = False
        started = time.perf_counter()
        async for event in runner.run_async(user_id="u", session_id="review", new_message=message):
            if event.output is not None and str(event.output).startswith("done"):
                finished = True
        elapsed = time.perf_counter() - started
        if not finished:
            raise RuntimeError(f"round {round_number} did not reach the last node")
        for mark in marks:
            if mark - 2 <= round_number <= mark:
                measured.setdefault(mark, []).append(elapsed)
    return {mark: statistics.median(values) for mark, values in measured.items()}


@contextlib.asynccontextmanager
async def service_for(store: str) -> AsyncIterator[Any]:
    if store == "memory":
        yield InMemorySessionService()
        return
    if store == "sqlite":
        from google.adk.sessions.sqlite_session_service import SqliteSessionService

        with tempfile.TemporaryDirectory() as folder:
            service = SqliteSessionService(str(Path(folder) / "s.db"))
            try:
                yield service
            finally:
                await service.close()
        return
    if store == "postgres":
        from sqlalchemy import text
        from sqlalchemy.ext.asyncio import create_async_engine

        database = f"adk_wfbench_{uuid.uuid4().hex[:10]}"
        admin = create_async_engine(f"{POSTGRES}/postgres", isolation_level="AUTOCOMMIT")
        async with admin.connect() as connection:
            await connection.execute(text(f"CREATE DATABASE {database}"))
        service = DatabaseSessionService(f"{POSTGRES}/{database}")
        try:
            yield service
        finally:
            await service.close()
            async with admin.connect() as connection:
                await connection.execute(text(f"DROP DATABASE {database} WITH (FORCE)"))
            await admin.dispose()
        return
    raise ValueError(f"unknown store {store!r}")


def one_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".replace("\n", " ")[:300]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--invocations", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--stores", default="memory,sqlite,postgres")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    from importlib.metadata import version

    print(f"google-adk {version('google-adk')}; Python {sys.version.split()[0]}", flush=True)
    for store in args.stores.split(","):
        try:
            async with service_for(store) as service:
                rate = await throughput(service, args.invocations)
            print(f"RESULT peer=adk workload=throughput store={store} value={rate:.3f}")
            async with service_for(store) as service:
                times = await resume_times(service, args.rounds)
            for mark, seconds in sorted(times.items()):
                name = "resume10" if mark == 10 else "resume200"
                print(f"RESULT peer=adk workload={name} store={store} value={seconds * 1000:.4f}")
        except Exception as error:
            print(f"FAILED peer=adk store={store} reason={one_line(error)}")
        sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
