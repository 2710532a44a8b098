"""Workflow throughput and resume cost, per store (cairn only; peers come in a later round).

    python bench/workflows.py [--quick] [--stores memory,sqlite,postgres]

1. A 5-node linear workflow of plain functions, each writing state: 200 invocations in one
   session, invocations/s.
2. A 3-node workflow whose middle node asks for input: the time to resume it after 10 and
   after 200 earlier rounds in the same session, and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from google.genai import types
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from cairn import (
    BaseSessionService,
    DatabaseSessionService,
    InMemorySessionService,
    Runner,
    SqliteSessionService,
)
from cairn.workflow import START, RequestInput, Workflow

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


async def throughput(service: BaseSessionService, invocations: int) -> float:
    workflow = Workflow(name="linear", edges=[(START, *(step(i) for i in range(5)))])
    runner = Runner(app_name="bench", agent=workflow, session_service=service)
    await service.create_session(app_name="bench", user_id="u", session_id="linear")
    started = time.perf_counter()
    for _ in range(invocations):
        async for _event in runner.run_async(
            user_id="u", session_id="linear", new_message=said("go")
        ):
            pass
    return invocations / (time.perf_counter() - started)


async def resume_times(service: BaseSessionService, rounds: int) -> dict[int, float]:
    workflow = Workflow(name="review", edges=[(START, before, ask, after)])
    runner = Runner(app_name="bench", agent=workflow, session_service=service)
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
        reply = types.FunctionResponse(
            id=waiting, name="adk_request_input", response={"result": "ok"}
        )
        message = types.Content(role="user", parts=[types.Part(function_response=reply)])
        started = time.perf_counter()
        async for _event in runner.run_async(user_id="u", session_id="review", new_message=message):
            pass
        elapsed = time.perf_counter() - started
        for mark in marks:
            if mark - 2 <= round_number <= mark:
                measured.setdefault(mark, []).append(elapsed)
    return {mark: statistics.median(values) for mark, values in measured.items()}


async def with_store(name: str, body: Any) -> Any:
    if name == "memory":
        return await body(InMemorySessionService())
    if name in ("sqlite", "sqlite-normal"):
        with tempfile.TemporaryDirectory() as folder:
            sync = "NORMAL" if name == "sqlite-normal" else "FULL"
            store = SqliteSessionService(Path(folder) / "s.db", synchronous=sync)
            try:
                return await body(store)
            finally:
                await store.close()
    database = f"cairn_wfbench_{uuid.uuid4().hex[:10]}"
    admin = create_async_engine(f"{POSTGRES}/postgres", isolation_level="AUTOCOMMIT")
    async with admin.connect() as connection:
        await connection.execute(text(f"CREATE DATABASE {database}"))
    store = DatabaseSessionService(f"{POSTGRES}/{database}")
    try:
        return await body(store)
    finally:
        await store.close()
        async with admin.connect() as connection:
            await connection.execute(text(f"DROP DATABASE {database} WITH (FORCE)"))
        await admin.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--stores", default="memory,sqlite,postgres")
    args = parser.parse_args()
    invocations, rounds = (30, 20) if args.quick else (200, 200)
    print(f"cairn workflow benchmark; Python {sys.version.split()[0]}")
    for name in args.stores.split(","):
        try:
            rate = await with_store(name, lambda s: throughput(s, invocations))
            times = await with_store(name, lambda s: resume_times(s, rounds))
        except OSError as error:
            print(f"{name:>14}: skipped ({error})")
            continue
        early, late = times[10], times[rounds]
        print(
            f"{name:>14}: 5-node workflow {rate:,.0f} invocations/s; resume after 10 rounds "
            f"{early * 1000:.2f} ms, after {rounds} rounds {late * 1000:.2f} ms "
            f"({late / early:.2f}x)"
        )
    print(
        "reference (quoted from the issue, not measured): google-adk 2.13.0 28/s memory, 16/s "
        "SQLite, 10/s PostgreSQL; LangGraph 282/s, 75/s, 92/s. Resume: ADK 6.7 -> 107 ms in "
        "memory; LangGraph flat at 1.7 ms (memory), 5.6 ms (SQLite), 4.7 ms (PostgreSQL)."
    )


if __name__ == "__main__":
    asyncio.run(main())
