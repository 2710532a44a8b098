"""Tool confirmation, paused and resumed 200 times in one session, per store (cairn only).

    python bench/hitl.py [--quick] [--rounds 200] [--stores memory,sqlite,postgres]

An `LlmAgent` whose model is `cairn.testing.ScriptedLlm(respond=...)` (zero latency; it calls
`refund` unless the last content holds a function response, then answers with a short text)
and whose only tool is `FunctionTool(refund, require_confirmation=True)`. One round:

1. ask: a user message; the model calls `refund`, the run pauses on an
   `adk_request_confirmation` call (its id in the event's `long_running_tool_ids`);
2. resume: a `FunctionResponse(id=<that id>, name="adk_request_confirmation",
   response={"confirmed": True})`; the tool runs and the model answers.

All rounds run in one session, so its history grows by 5 events a round. Printed per store:
rounds/s (whole rounds, ask + resume), the resume latency at round 10 and at the last round
(median of rounds 6-14 and of the last nine) and their ratio (goal: flat, <= 1.5x).
bench/hitl_peers.py runs the same scenario on google-adk 2.13.0 and shows both side by side.
It measures; it asserts no timing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.genai import types
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from cairn import (
    BaseSessionService,
    DatabaseSessionService,
    FunctionTool,
    InMemorySessionService,
    LlmAgent,
    LlmRequest,
    Runner,
    SqliteSessionService,
)
from cairn.testing import Call, ScriptedLlm

POSTGRES = "postgresql+asyncpg://postgres@127.0.0.1:5432"
CONFIRMATION = "adk_request_confirmation"
STORES = ("memory", "sqlite", "postgres")


def refund(amount: int) -> dict[str, Any]:
    """Refund an amount to the customer."""
    return {"refunded": amount}


def respond(request: LlmRequest) -> Any:
    """Call the tool when asked; once shown a function response, answer in one line."""
    last = request.contents[-1] if request.contents else None
    if last is not None and any(part.function_response for part in last.parts or []):
        return "Refund done."
    return Call("refund", amount=50)


def said(value: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=value)])


def approve(call_id: str) -> types.Content:
    reply = types.FunctionResponse(id=call_id, name=CONFIRMATION, response={"confirmed": True})
    return types.Content(role="user", parts=[types.Part(function_response=reply)])


@dataclass
class Figures:
    rounds: int
    rounds_per_s: float
    resume: dict[int, float]  # round mark (10, rounds) -> median resume seconds

    @property
    def growth(self) -> float:
        return self.resume[self.rounds] / self.resume[10]


async def confirm_rounds(service: BaseSessionService, rounds: int) -> Figures:
    """`rounds` ask + confirm rounds in one session of `service`; raises if one goes wrong."""
    model = ScriptedLlm(respond=respond)
    agent = LlmAgent(
        name="clerk", model=model, tools=[FunctionTool(refund, require_confirmation=True)]
    )
    runner = Runner(app_name="bench", agent=agent, session_service=service)
    await service.create_session(app_name="bench", user_id="u", session_id="desk")
    marks = {10, rounds}
    measured: dict[int, list[float]] = {}
    total = 0.0
    gc.collect()
    for round_number in range(1, rounds + 1):
        waiting = None
        started = time.perf_counter()
        async for event in runner.run_async(
            user_id="u", session_id="desk", new_message=said("refund 50, please")
        ):
            for call in event.get_function_calls():
                if call.name == CONFIRMATION and call.id in (event.long_running_tool_ids or ()):
                    waiting = call.id
        if waiting is None:
            raise RuntimeError(f"round {round_number} did not ask for confirmation")
        asked = time.perf_counter()
        refunded = answered = False
        async for event in runner.run_async(
            user_id="u", session_id="desk", new_message=approve(waiting)
        ):
            for response in event.get_function_responses():
                refunded |= response.name == "refund" and response.response == {"refunded": 50}
            if event.content is not None:
                answered |= any(part.text == "Refund done." for part in event.content.parts or [])
        finished = time.perf_counter()
        if not (refunded and answered):
            raise RuntimeError(f"round {round_number}: the confirmed tool did not run and answer")
        total += finished - started
        for mark in marks:
            # Nine rounds around each mark (the last nine at the end): a median of three
            # moved with a single slow disk sync.
            low, high = (mark - 4, mark + 4) if mark < rounds else (mark - 8, mark)
            if low <= round_number <= high:
                measured.setdefault(mark, []).append(finished - asked)
        model.requests.clear()  # ScriptedLlm keeps every request; a real model would not
    resume = {mark: statistics.median(values) for mark, values in measured.items()}
    return Figures(rounds=rounds, rounds_per_s=rounds / total, resume=resume)


@contextlib.asynccontextmanager
async def store(name: str) -> AsyncIterator[BaseSessionService]:
    """A fresh store: in memory, a SQLite file in a temporary directory, or a new PostgreSQL
    database (dropped on exit)."""
    if name == "memory":
        yield InMemorySessionService()
        return
    if name == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            service = SqliteSessionService(Path(folder) / "s.db")
            try:
                yield service
            finally:
                await service.close()
        return
    if name != "postgres":
        raise ValueError(f"unknown store {name!r}")
    database = f"cairn_hitlbench_{uuid.uuid4().hex[:10]}"
    admin = create_async_engine(f"{POSTGRES}/postgres", isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as connection:
            await connection.execute(text(f"CREATE DATABASE {database}"))
        service = DatabaseSessionService(f"{POSTGRES}/{database}")
        try:
            yield service
        finally:
            await service.close()
            async with admin.connect() as connection:
                await connection.execute(text(f"DROP DATABASE {database} WITH (FORCE)"))
    finally:
        await admin.dispose()


async def measure(name: str, rounds: int) -> Figures:
    async with store(name) as service:
        return await confirm_rounds(service, rounds)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="20 rounds")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--stores", default=",".join(STORES))
    args = parser.parse_args()
    rounds = 20 if args.quick else args.rounds
    if rounds < 10:
        parser.error("--rounds must be at least 10")
    print(f"cairn tool-confirmation benchmark; Python {sys.version.split()[0]}; {rounds} rounds")
    for name in args.stores.split(","):
        try:
            figures = await measure(name, rounds)
        except OSError as error:
            print(f"{name:>9}: skipped ({error})")
            continue
        print(
            f"{name:>9}: {figures.rounds_per_s:,.1f} rounds/s; resume at round 10 "
            f"{figures.resume[10] * 1000:.2f} ms, at round {rounds} "
            f"{figures.resume[rounds] * 1000:.2f} ms ({figures.growth:.2f}x, goal <= 1.5x)"
        )


if __name__ == "__main__":
    asyncio.run(main())
