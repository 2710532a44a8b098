"""Core performance figures of cairn's in-memory store and Runner, measured in one run.

Run it with ``python bench/core.py`` (or ``python bench/core.py --quick`` for a smoke
run with smaller sizes). It prints, each on its own labelled line:

1. in-memory append throughput (events/s) into one session;
2. the mean cost of one append when the session holds ~100 vs ~10,000 events, and the ratio;
3. ``get_session(num_recent_events=10)`` time at 100 vs 10,000 events, and the ratio;
4. Runner events/s for a custom agent yielding 5 events per invocation, (a) one fresh
   session per invocation and (b) every invocation on one growing session;

then a summary comparing the figures with the targets. Nothing here asserts a
timing: it is a measurement, not a test. See ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import platform
import statistics
import sys
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass

from google.genai import types

import cairn
from cairn import (
    BaseAgent,
    Event,
    EventActions,
    GetSessionConfig,
    InMemorySessionService,
    InvocationContext,
    Runner,
    Session,
)

APP = "bench"
USER = "bench-user"

# Targets (from the issue) and the reference figures quoted there (not measured here).
TARGET_APPENDS_PER_S = 100_000
TARGET_COST_RATIO = 1.2
TARGET_READ_RATIO = 1.2  # "~1x": read here as "no worse than the append-ratio bound"
REFERENCE = (
    "google-adk 2.13.0 in-memory store: 6,700 appends/s; per-append cost grows 55x by "
    "event 10,000 (quoted from the issue, NOT measured here)"
)

SENTENCE = (
    "The forecast for Lisbon is sunny with a light breeze and a high of 24 degrees, "
    "so a walk along the river this afternoon sounds like a good plan."
)


@dataclass(frozen=True)
class Sizes:
    """Every size the run uses; ``--quick`` shrinks the expensive ones."""

    append_n: int
    small: int
    large: int
    batch: int
    cost_repeats: int
    read_calls: int
    full_read_calls: int
    runner_invocations: int
    runner_window: int


FULL = Sizes(
    append_n=20_000,
    small=100,
    large=10_000,
    batch=200,
    cost_repeats=7,
    read_calls=500,
    full_read_calls=5,
    runner_invocations=400,
    runner_window=100,
)
QUICK = Sizes(
    append_n=2_000,
    small=100,
    large=10_000,
    batch=200,
    cost_repeats=3,
    read_calls=50,
    full_read_calls=2,
    runner_invocations=40,
    runner_window=10,
)


# -- helpers -------------------------------------------------------------------------------
def make_events(count: int, start: int = 0) -> list[Event]:
    """Realistic small model events: one text part and a one-key state delta each."""
    return [
        Event(
            invocation_id="e-bench",
            author="agent",
            content=types.Content(role="model", parts=[types.Part(text=f"{SENTENCE} ({i})")]),
            actions=EventActions(state_delta={"counter": i}),
        )
        for i in range(start, start + count)
    ]


async def new_session(service: InMemorySessionService, session_id: str) -> Session:
    return await service.create_session(app_name=APP, user_id=USER, session_id=session_id)


async def fill(service: InMemorySessionService, session: Session, events: list[Event]) -> None:
    for event in events:
        await service.append_event(session, event)


def line(label: str, value: str) -> None:
    print(f"{label:<56} {value}", flush=True)


def us(ns: float) -> str:
    return f"{ns / 1000:,.1f} µs"


# -- 1. append throughput --------------------------------------------------------------------
async def bench_append_throughput(sizes: Sizes) -> float:
    service = InMemorySessionService()
    session = await new_session(service, "throughput")

    t0 = time.perf_counter_ns()
    events = make_events(sizes.append_n)
    construct_ns = time.perf_counter_ns() - t0

    gc.collect()  # gc stays enabled here, as in a real process
    t0 = time.perf_counter_ns()
    for event in events:
        await service.append_event(session, event)
    elapsed_ns = time.perf_counter_ns() - t0

    rate = sizes.append_n / (elapsed_ns / 1e9)
    line(
        "[1] append throughput (in-memory, one session):",
        f"{rate:,.0f} events/s  ({sizes.append_n:,} appends in {elapsed_ns / 1e6:,.1f} ms, "
        f"{us(elapsed_ns / sizes.append_n)}/append, gc enabled)",
    )
    line(
        "    note: event construction (not timed above):",
        f"{us(construct_ns / sizes.append_n)}/event  "
        f"({sizes.append_n / (construct_ns / 1e9):,.0f} events/s)",
    )
    assert session.revision == sizes.append_n and len(session.events) == sizes.append_n
    return rate


# -- 2. per-append cost vs history size ------------------------------------------------------
async def timed_batch(
    service: InMemorySessionService, prefill: int, batch: int, session_id: str
) -> float:
    """Mean ns per append of ``batch`` appends into a fresh session already holding ``prefill``."""
    session = await new_session(service, session_id)
    await fill(service, session, make_events(prefill))
    batch_events = make_events(batch, start=prefill)
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        for event in batch_events:
            await service.append_event(session, event)
        elapsed_ns = time.perf_counter_ns() - t0
    finally:
        gc.enable()
    await service.delete_session(app_name=APP, user_id=USER, session_id=session_id)
    return elapsed_ns / batch


async def bench_append_cost(sizes: Sizes) -> float:
    service = InMemorySessionService()
    small_runs: list[float] = []
    large_runs: list[float] = []
    for r in range(sizes.cost_repeats):  # interleaved, so drift hits both sides alike
        small_runs.append(await timed_batch(service, sizes.small, sizes.batch, f"small-{r}"))
        large_runs.append(await timed_batch(service, sizes.large, sizes.batch, f"large-{r}"))
    small, large = statistics.median(small_runs), statistics.median(large_runs)
    ratio = large / small
    how = f"median of {sizes.cost_repeats} batches of {sizes.batch} appends, gc disabled"
    line(f"[2] append cost @~{sizes.small:,} events:", f"{us(small)}/append  ({how})")
    line(f"[2] append cost @~{sizes.large:,} events:", f"{us(large)}/append  ({how})")
    line(
        f"[2] append cost ratio {sizes.large:,} vs {sizes.small:,}:",
        f"{ratio:.2f}x  (target <= {TARGET_COST_RATIO}x)",
    )
    return ratio


# -- 3. windowed read vs history size ---------------------------------------------------------
async def median_read_ns(
    service: InMemorySessionService,
    session_ids: list[str],
    config: GetSessionConfig | None,
    calls: int,
) -> list[float]:
    """Median ns of ``calls`` reads of each session; the sessions are read in alternation,
    so machine drift during the measurement hits every session alike."""
    samples: dict[str, list[int]] = {sid: [] for sid in session_ids}
    gc.collect()
    gc.disable()
    try:
        for _ in range(calls):
            for sid in session_ids:
                t0 = time.perf_counter_ns()
                got = await service.get_session(
                    app_name=APP, user_id=USER, session_id=sid, config=config
                )
                samples[sid].append(time.perf_counter_ns() - t0)
                assert got is not None
    finally:
        gc.enable()
    return [statistics.median(samples[sid]) for sid in session_ids]


async def bench_recent_read(sizes: Sizes) -> float:
    service = InMemorySessionService()
    for count in (sizes.small, sizes.large):
        session = await new_session(service, f"read-{count}")
        await fill(service, session, make_events(count))
    recent = GetSessionConfig(num_recent_events=10)
    small_id, large_id = f"read-{sizes.small}", f"read-{sizes.large}"
    small, large = await median_read_ns(service, [small_id, large_id], recent, sizes.read_calls)
    ratio = large / small
    how = f"median of {sizes.read_calls} calls, alternating sizes, gc disabled"
    line(f"[3] get_session(recent 10) @{sizes.small:,} events:", f"{us(small)}  ({how})")
    line(f"[3] get_session(recent 10) @{sizes.large:,} events:", f"{us(large)}  ({how})")
    line(
        f"[3] get_session(recent 10) ratio {sizes.large:,} vs {sizes.small:,}:",
        f"{ratio:.2f}x  (target ~1x)",
    )
    (full,) = await median_read_ns(service, [large_id], None, sizes.full_read_calls)
    line(
        f"    context: get_session(all events) @{sizes.large:,}:",
        f"{full / 1e6:,.1f} ms  (median of {sizes.full_read_calls}; "
        "what a Runner would read each time without its history cache)",
    )
    return ratio


# -- 4. Runner ---------------------------------------------------------------------------------
class FiveEventAgent(BaseAgent):
    """A custom agent that answers every invocation with 5 text events."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        for step in range(5):
            yield Event(
                content=types.Content(role="model", parts=[types.Part(text=f"{SENTENCE} {step}")])
            )


class RecentTenAgent(FiveEventAgent):
    """The same agent, declaring that it reads only the 10 most recent events."""

    def history_window(self) -> GetSessionConfig | None:
        return GetSessionConfig(num_recent_events=10)


GO = types.Content(role="user", parts=[types.Part(text="go")])


async def one_invocation(runner: Runner, session_id: str) -> int:
    count = 0
    async for _ in runner.run_async(user_id=USER, session_id=session_id, new_message=GO):
        count += 1
    return count


async def bench_runner(sizes: Sizes) -> None:
    n = sizes.runner_invocations

    # (a) a fresh session per invocation (sessions created before timing).
    service = InMemorySessionService()
    runner = Runner(app_name=APP, agent=FiveEventAgent(name="five"), session_service=service)
    for i in range(n):
        await new_session(service, f"fresh-{i}")
    gc.collect()
    t0 = time.perf_counter_ns()
    yielded = 0
    for i in range(n):
        yielded += await one_invocation(runner, f"fresh-{i}")
    elapsed_s = (time.perf_counter_ns() - t0) / 1e9
    line(
        "[4a] Runner, fresh session per invocation:",
        f"{yielded / elapsed_s:,.0f} events/s  ({n / elapsed_s:,.0f} invocations/s; "
        f"{n} invocations x 5 agent events, +1 stored user event each)",
    )
    await runner.close()

    # (b) every invocation on ONE session: its history grows by 6 events per invocation.
    await bench_runner_one_session(
        sizes, FiveEventAgent(name="five"), "[4b] Runner, one session (loads all history),"
    )
    # (c) the same, with an agent that declares it reads only the last 10 events.
    await bench_runner_one_session(
        sizes, RecentTenAgent(name="recent"), "[4c] Runner, one session (history_window=10),"
    )


async def bench_runner_one_session(sizes: Sizes, agent: BaseAgent, label: str) -> None:
    n = sizes.runner_invocations
    k = sizes.runner_window
    service = InMemorySessionService()
    runner = Runner(app_name=APP, agent=agent, session_service=service)
    await new_session(service, "shared")
    per_invocation_s: list[float] = []
    counts: list[int] = []
    gc.collect()
    for _ in range(n):
        t0 = time.perf_counter_ns()
        counts.append(await one_invocation(runner, "shared"))
        per_invocation_s.append((time.perf_counter_ns() - t0) / 1e9)
    first = sum(counts[:k]) / sum(per_invocation_s[:k])
    last = sum(counts[-k:]) / sum(per_invocation_s[-k:])
    held_before_last = 6 * (n - k)
    line(
        f"{label} first {k} of {n}:",
        f"{first:,.0f} events/s  (history 0 -> {6 * k:,} events)",
    )
    line(
        f"{label} last {k} of {n}:",
        f"{last:,.0f} events/s  (history {held_before_last:,} -> {6 * n:,} events; "
        f"slowdown {first / last:.1f}x)",
    )
    final = await service.get_session(
        app_name=APP,
        user_id=USER,
        session_id="shared",
        config=GetSessionConfig(num_recent_events=0),
    )
    assert final is not None and final.revision == 6 * n
    await runner.close()


# -- main ----------------------------------------------------------------------------------
def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


async def run(sizes: Sizes, quick: bool) -> None:
    print(f"cairn {cairn.__version__} core benchmark{' (--quick: smaller sizes)' if quick else ''}")
    print(f"Python {platform.python_version()} ({platform.python_implementation()})")
    print(
        f"Machine: processor={platform.processor() or '?'!r} machine={platform.machine()!r} "
        f"({platform.platform()})"
    )
    print(flush=True)

    rate = await bench_append_throughput(sizes)
    cost_ratio = await bench_append_cost(sizes)
    read_ratio = await bench_recent_read(sizes)
    await bench_runner(sizes)

    print()
    print("Summary vs targets")
    line(
        "  append throughput:",
        f"{rate:,.0f} events/s   target >= {TARGET_APPENDS_PER_S:,} events/s  "
        f"-> {verdict(rate >= TARGET_APPENDS_PER_S)}",
    )
    line(
        f"  append cost ratio {sizes.large:,} vs {sizes.small:,}:",
        f"{cost_ratio:.2f}x   target <= {TARGET_COST_RATIO}x  "
        f"-> {verdict(cost_ratio <= TARGET_COST_RATIO)}",
    )
    line(
        f"  recent-10 read ratio {sizes.large:,} vs {sizes.small:,}:",
        f"{read_ratio:.2f}x   target ~1x (taken as <= {TARGET_READ_RATIO}x)  "
        f"-> {verdict(read_ratio <= TARGET_READ_RATIO)}",
    )
    print(f"  reference: {REFERENCE}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--quick", action="store_true", help="smaller sizes, for a smoke run (a few seconds)"
    )
    args = parser.parse_args(argv)
    asyncio.run(run(QUICK if args.quick else FULL, args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
