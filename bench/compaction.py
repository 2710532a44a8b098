"""The cost of a turn as a conversation grows, with compaction on.

    python bench/compaction.py [--turns 5000] [--interval 20] [--overlap 4] [--store memory]

One session, an LlmAgent on a zero-latency scripted model, the app compacting
every ``--interval`` invocations (keeping ``--overlap`` verbatim). Prints the
median time to build the model request (``LlmAgent._build_request``: state,
instructions, tools, the prompt contents from the history) and of the whole turn
around turn 10 and over the last turns, their ratios (goal: flat, <= 1.5x), and
the prompt size at both points. Also the first turn of a *new process* (a
new Runner, nothing cached) at both points, on a fork of the session: it reads
the history from the newest summary onward, so it should be flat too (medians
over a whole compaction cycle after turn 5 x interval and at the end).
``--store sqlite`` runs it all on a SQLite file. Measures and prints; asserts
no timing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from google.genai import types

from cairn import App, InMemorySessionService, LlmAgent, Runner, SqliteSessionService
from cairn.apps import EventsCompactionConfig, LlmEventSummarizer
from cairn.testing import ScriptedLlm

BUILD_TIMES: list[float] = []


class TimedAgent(LlmAgent):
    """An LlmAgent that records how long building each model request took."""

    async def _build_request(self, ctx: Any, tools: Any) -> Any:
        started = time.perf_counter()
        request = await super()._build_request(ctx, tools)
        BUILD_TIMES.append(time.perf_counter() - started)
        return request


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument("--interval", type=int, default=20)
    parser.add_argument("--overlap", type=int, default=4)
    parser.add_argument("--store", choices=["memory", "sqlite"], default="memory")
    args = parser.parse_args()
    if args.store == "sqlite":
        folder = tempfile.TemporaryDirectory()
        store: Any = SqliteSessionService(Path(folder.name) / "sessions.db")
    else:
        store = InMemorySessionService()
    chat = ScriptedLlm(respond=lambda request: f"reply to {len(request.contents)} contents")
    summaries = ScriptedLlm(respond=lambda request: "The user is chatting about numbers.")
    config = EventsCompactionConfig(
        compaction_interval=args.interval,
        overlap_size=args.overlap,
        summarizer=LlmEventSummarizer(summaries),
    )
    agent = TimedAgent(name="pal", model=chat, instruction="Be brief.")
    app = App(name="bench", root_agent=agent, events_compaction_config=config)
    runner = Runner(app=app, session_service=store)
    await store.create_session(app_name="bench", user_id="u", session_id="s")
    turn_times: list[float] = []
    sizes: list[int] = []
    # New-process turns over a whole compaction cycle at each end (the window a new process
    # reads grows from `overlap` to `interval + overlap` invocations within a cycle).
    cycle = args.interval
    cold_early = range(5 * cycle, 6 * cycle)
    cold_late = range(args.turns, args.turns + cycle)  # after the timed turns: no interference
    cold: dict[int, float] = {}
    for turn in range(args.turns + cycle):
        if turn in cold_early or turn in cold_late:
            cold[turn] = await _new_process_turn(app, store)
        message = types.Content(role="user", parts=[types.Part(text=f"number {turn}")])
        started = time.perf_counter()
        async for _ in runner.run_async(user_id="u", session_id="s", new_message=message):
            pass
        elapsed = time.perf_counter() - started
        size = len(chat.requests[-1].contents)
        chat.requests.clear()  # a real model keeps nothing; ScriptedLlm would keep every request
        summaries.requests.clear()
        if turn < args.turns:  # the extra cycle only serves the new-process measurement
            turn_times.append(elapsed)
            sizes.append(size)
    window = 2 * args.interval  # a whole compaction cycle on each side, so a median is fair
    early = slice(10, 10 + window)
    late = slice(args.turns - window, args.turns)
    session = await store.get_session(app_name="bench", user_id="u", session_id="s")
    assert session is not None
    print(
        f"cairn compaction benchmark; Python {sys.version.split()[0]}; {args.turns} turns, "
        f"compaction every {args.interval} invocations keeping {args.overlap}; "
        f"{len(session.events)} events in the log"
    )
    for name, values in (("build the model request", BUILD_TIMES), ("whole turn", turn_times)):
        first, last = statistics.median(values[early]), statistics.median(values[late])
        print(
            f"  {name:>24}: turn 10 {first * 1000:.3f} ms, turn {args.turns} "
            f"{last * 1000:.3f} ms ({last / first:.2f}x, goal <= 1.5x)"
        )
    first = statistics.median(cold[t] for t in cold_early)
    last = statistics.median(cold[t] for t in cold_late)
    print(
        f"  {'first turn, new process':>24}: turn {cold_early[0]} {first * 1000:.3f} ms, "
        f"turn {args.turns} "
        f"{last * 1000:.3f} ms ({last / first:.2f}x, goal <= 1.5x)"
    )
    print(
        f"  {'prompt contents':>24}: turn 10 up to {max(sizes[early])}, "
        f"turn {args.turns} up to {max(sizes[late])}"
    )


async def _new_process_turn(app: App, store: Any, repeats: int = 1) -> float:
    """Median time of the first turn of a new Runner (nothing cached) on a fork of the session."""
    times = []
    for attempt in range(repeats):
        twin = await store.fork_session(app_name="bench", user_id="u", session_id="s")
        _settle(store)
        fresh = Runner(app=app, session_service=store)
        message = types.Content(role="user", parts=[types.Part(text=f"hello {attempt}")])
        builds = len(BUILD_TIMES)
        started = time.perf_counter()
        async for _ in fresh.run_async(user_id="u", session_id=twin.id, new_message=message):
            pass
        times.append(time.perf_counter() - started)
        del BUILD_TIMES[builds:]  # BUILD_TIMES holds the main session's turns only
        await store.delete_session(app_name="bench", user_id="u", session_id=twin.id)
    return statistics.median(times)


def _settle(store: Any) -> None:
    """Leave nothing of the fork (untimed setup) to be paid during the timed turn: a new
    process has no garbage from copying a 10,000-event session, and the SQLite file has
    the fork's pages checkpointed out of its write-ahead log."""
    gc.collect()
    if isinstance(store, SqliteSessionService):
        with contextlib.closing(sqlite3.connect(store.path)) as connection:
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")


if __name__ == "__main__":
    asyncio.run(main())
