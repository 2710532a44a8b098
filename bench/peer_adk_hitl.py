"""google-adk side of bench/hitl_peers.py: the tool-confirmation rounds of bench/hitl.py.

Runs inside bench/.peers/adk (made by bench/peers.py), never in the project's venv, and never
imports cairn:

    python bench/peer_adk_hitl.py [--rounds 200] [--stores memory,sqlite,postgres]

An ADK `LlmAgent` whose model is `Clerk`, a `BaseLlm` subclass with no latency that replies
from what it is shown, as bench/hitl.py's scripted model does (it calls `refund` unless the
last content holds a function response, then answers with a short text), and whose only tool
is `FunctionTool(refund, require_confirmation=True)`. A plain `Runner(app_name=..., agent=...)`:
ADK 2.13.0 resumes a confirmed call from the session's events without a resumable App, so
none is configured (the same as the cairn side). One round:

1. ask: a user message; ADK answers the `refund` call with an error ("requires
   confirmation") and pauses on its `adk_request_confirmation` call (the id in the event's
   `long_running_tool_ids`);
2. resume: a `FunctionResponse(id=<that id>, name="adk_request_confirmation",
   response={"confirmed": True})`; the tool runs and the model answers.

All rounds in one session. Stores: InMemorySessionService, SqliteSessionService (a file in a
temporary directory) and DatabaseSessionService on PostgreSQL (postgresql+asyncpg, a fresh
database, dropped after). ADK's documentation lists DatabaseSessionService as unsupported for
tool confirmation; a store on which a round goes wrong is reported, not raised.

Prints one machine-readable line per figure:
    RESULT peer=adk workload=rounds store=memory value=<rounds/s>
    RESULT peer=adk workload=resume10 store=memory value=<ms>
    RESULT peer=adk workload=resume200 store=memory value=<ms>   (200 = --rounds)
    FAILED peer=adk store=<store> reason=<one line>
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService, InMemorySessionService
from google.adk.tools import FunctionTool
from google.genai import types

POSTGRES = "postgresql+asyncpg://postgres@127.0.0.1:5432"
CONFIRMATION = "adk_request_confirmation"


def refund(amount: int) -> dict[str, Any]:
    """Refund an amount to the customer."""
    return {"refunded": amount}


class Clerk(BaseLlm):
    """Calls `refund` when asked; once shown a function response, answers in one line."""

    model: str = "clerk"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1] if llm_request.contents else None
        if last is not None and any(part.function_response for part in last.parts or []):
            part = types.Part(text="Refund done.")
        else:
            call = types.FunctionCall(name="refund", args={"amount": 50})
            part = types.Part(function_call=call)
        yield LlmResponse(content=types.Content(role="model", parts=[part]), turn_complete=True)


def said(value: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=value)])


def approve(call_id: str) -> types.Content:
    reply = types.FunctionResponse(id=call_id, name=CONFIRMATION, response={"confirmed": True})
    return types.Content(role="user", parts=[types.Part(function_response=reply)])


async def confirm_rounds(service: Any, rounds: int) -> tuple[float, dict[int, float]]:
    """(rounds/s, {10: median resume s, rounds: median resume s}); raises if a round fails."""
    agent = LlmAgent(
        name="clerk", model=Clerk(), tools=[FunctionTool(refund, require_confirmation=True)]
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
    return rounds / total, {mark: statistics.median(values) for mark, values in measured.items()}


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
    if store != "postgres":
        raise ValueError(f"unknown store {store!r}")
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    database = f"adk_hitlbench_{uuid.uuid4().hex[:10]}"
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


def one_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".replace("\n", " ")[:300]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
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
                rate, times = await confirm_rounds(service, args.rounds)
            print(f"RESULT peer=adk workload=rounds store={store} value={rate:.3f}")
            for mark, seconds in sorted(times.items()):
                name = "resume10" if mark == 10 else "resume200"
                print(f"RESULT peer=adk workload={name} store={store} value={seconds * 1000:.4f}")
        except Exception as error:
            print(f"FAILED peer=adk store={store} reason={one_line(error)}")
        sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
