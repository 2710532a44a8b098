"""What recording spans costs a run, and whether reading them stays bounded.

    python bench/trace_overhead.py [--turns 300] [--rounds 3] [--store sqlite|memory]

Two kinds of fresh process, alternated for ``--rounds``, run the same ``--turns``
invocations of the trace tests' weather agent (tests/support/trace_agents: three model
calls on a zero-latency scripted model, two tool calls, one of which raises) in one
session: one with no OpenTelemetry SDK at all (the API's no-ops, as ``cairn api-server``
runs by default), one as ``cairn web`` runs (an SDK ``TracerProvider``, the
``SpanRecorder`` writing every span into the session store, content capture on). Prints
the median turn time of each (the median over the rounds) and their ratio (goal: <= 1.25x;
the spans are written off the run's path, in batches), the spans recorded and dropped,
and the median time to read one invocation's spans and the newest 10 invocations' totals
after turn 100 (a third of a shorter run) and after the last turn (goal: both stay flat,
<= 1.5x, as the session grows). Measures and prints; asserts no timing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from google.genai import types

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.trace_agents.weather.agent import root_agent  # noqa: E402

from cairn import Runner  # noqa: E402
from cairn.sessions import (  # noqa: E402
    BaseSessionService,
    InMemorySessionService,
    SqliteSessionService,
)

APP, USER, SESSION = "bench", "u1", "s1"


async def child(turns: int, store: str, recording: bool) -> dict[str, Any]:
    folder = tempfile.TemporaryDirectory()
    service: BaseSessionService = (
        SqliteSessionService(Path(folder.name) / "sessions.db")
        if store == "sqlite"
        else InMemorySessionService()
    )
    recorder = None
    if recording:
        from cairn.sessions.span_recorder import SpanRecorder, span_store_for
        from cairn.telemetry.setup import add_span_processor, setup_telemetry

        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
        setup_telemetry()
        span_store = span_store_for(service)
        assert span_store is not None
        recorder = SpanRecorder(span_store)
        add_span_processor(recorder)
    runner = Runner(app_name=APP, agent=root_agent, session_service=service)
    await service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    times: list[float] = []
    reads: dict[str, list[float]] = {}
    invocations: list[str] = []
    for turn in range(1, turns + 1):
        message = types.Content(role="user", parts=[types.Part(text=f"Weather? ({turn})")])
        started = time.perf_counter()
        async for event in runner.run_async(user_id=USER, session_id=SESSION, new_message=message):
            invocation = event.invocation_id
        times.append(time.perf_counter() - started)
        invocations.append(invocation)
        if recorder is not None and turn in (early(turns), turns):
            await recorder.flush()
            reads[f"spans@{turn}"], reads[f"totals@{turn}"] = await timed_reads(
                recorder.store, invocations
            )
    result: dict[str, Any] = {"turn_ms": 1000 * statistics.median(times)}
    if recorder is not None:
        await recorder.close()
        found = await recorder.store.session_totals(APP, USER, SESSION)
        result.update(spans=found.spans, dropped=recorder.dropped)
        result.update({k: 1000 * statistics.median(v) for k, v in reads.items()})
    await runner.close()
    await service.close()
    return result


async def timed_reads(store: Any, invocations: list[str]) -> tuple[list[float], list[float]]:
    spans, totals = [], []
    for invocation in invocations[-10:] * 3:
        started = time.perf_counter()
        await store.invocation_spans(APP, USER, SESSION, invocation)
        spans.append(time.perf_counter() - started)
        started = time.perf_counter()
        await store.invocation_totals(APP, USER, SESSION, limit=10)
        totals.append(time.perf_counter() - started)
    return spans, totals


def early(turns: int) -> int:
    """The turn of the first reads: past the content cap at full size (a long conversation's
    prompt is capped, so later reads hold as much), 1/3 of the way in a short run."""
    return min(100, max(1, turns // 3))


def run_child(turns: int, store: str, recording: bool) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    command = [sys.executable, __file__, "--turns", str(turns), "--store", store, "--child"]
    if recording:
        command.append("--recording")
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--store", choices=["sqlite", "memory"], default="sqlite")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--recording", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(child(args.turns, args.store, args.recording))))
        return
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, store {args.store}")
    # Rounds alternate the two processes, so that the machine's drift hits both alike.
    plains, recordeds = [], []
    for _ in range(args.rounds):
        plains.append(run_child(args.turns, args.store, recording=False))
        recordeds.append(run_child(args.turns, args.store, recording=True))
    plain_ms = statistics.median(r["turn_ms"] for r in plains)
    recorded_ms = statistics.median(r["turn_ms"] for r in recordeds)
    recorded = recordeds[-1]
    rounds = f"{args.rounds} rounds of {args.turns}"
    print(f"turn, no SDK (median, {rounds}):         {plain_ms:8.2f} ms")
    print(f"turn, spans recorded (median, {rounds}): {recorded_ms:8.2f} ms")
    ratio = recorded_ms / plain_ms
    print(f"recording overhead ratio:                  {ratio:8.2f}x  (goal <= 1.25x)")
    print(f"spans recorded: {recorded['spans']}, dropped: {recorded['dropped']}")
    last, first = args.turns, early(args.turns)
    for kind in ("spans", "totals"):
        before, late = recorded[f"{kind}@{first}"], recorded[f"{kind}@{last}"]
        what = "an invocation's spans" if kind == "spans" else "the newest 10 invocations' totals"
        goal = "  (goal <= 1.5x)"
        print(
            f"read {what}: turn {first} {before:.2f} ms, turn {last} {late:.2f} ms, "
            f"ratio {late / before:.2f}x{goal}"
        )


if __name__ == "__main__":
    main()
