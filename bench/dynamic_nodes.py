"""Resume cost of a workflow whose node runs others with ``ctx.run_node`` (cairn only).

    python bench/dynamic_nodes.py [--quick] [--stores memory,sqlite]

A node calls ``ctx.run_node`` N times, then runs a node that asks for input, so the
invocation pauses with N finished dynamic runs in the log. Resuming it (the answer) runs
the node again: each of the N children is found in the log and its output reused, none is
run again. Printed per store, as medians over several sessions, with their ratio (the
target is flat: within 1.5x):

1. in the paused invocation: resume after 10 vs after 200 dynamic runs of that invocation,
   in the Runner that ran them (it keeps the events it committed, so it reads only the
   answer; each child's record is found in the invocation's log indexed by node path), and
   what a read of the whole session costs a process that must read it first (the resumed
   node needs every child's record, so that part grows with N);
2. in the session's history: a 10-run invocation resumed when earlier invocations of the
   session already made 10 vs 200 dynamic runs (those are never read again).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from google.genai import types

from cairn import BaseSessionService, InMemorySessionService, Runner, SqliteSessionService
from cairn.workflow import START, RequestInput, Workflow, node


def step(node_input: int) -> int:
    return node_input + 1


def ask(node_input: Any):  # type: ignore[no-untyped-def]
    yield RequestInput(interrupt_id="go-on", message="go on?")


def planner(runs: int) -> Workflow:
    @node(rerun_on_resume=True)
    async def plan(ctx: Any, node_input: Any) -> str:
        total = 0
        for number in range(runs):
            total += await ctx.run_node(step, node_input=number)
        answer = await ctx.run_node(ask)
        return f"{answer} {total}"

    return Workflow(name="planner", edges=[(START, plan)])


def said(value: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=value)])


GO_ON = types.Content(
    role="user",
    parts=[
        types.Part(
            function_response=types.FunctionResponse(
                id="go-on", name="adk_request_input", response={"result": "ok"}
            )
        )
    ],
)


async def one_round(runner: Runner, session_id: str, runs: int) -> float:
    """Start an invocation that pauses after ``runs`` dynamic runs; seconds to resume it."""
    async for _event in runner.run_async(
        user_id="u", session_id=session_id, new_message=said("plan")
    ):
        pass
    started = time.perf_counter()
    output = None
    async for event in runner.run_async(user_id="u", session_id=session_id, new_message=GO_ON):
        output = event.output if event.output is not None else output
    elapsed = time.perf_counter() - started
    expected = f"ok {sum(range(1, runs + 1))}"
    if output != expected:
        raise SystemExit(f"the resumed run answered {output!r}, not {expected!r}")
    return elapsed


async def in_invocation(
    service: BaseSessionService, runs: int, sessions: int
) -> tuple[float, float]:
    """Median seconds to resume after ``runs`` dynamic runs of the paused invocation, and
    median seconds the store takes to read such a session."""
    runner = Runner(app_name="bench", agent=planner(runs), session_service=service)
    times, reads = [], []
    for index in range(sessions):
        session_id = f"s{runs}-{index}"
        await service.create_session(app_name="bench", user_id="u", session_id=session_id)
        times.append(await one_round(runner, session_id, runs))
        started = time.perf_counter()
        await service.get_session(app_name="bench", user_id="u", session_id=session_id)
        reads.append(time.perf_counter() - started)
    return statistics.median(times), statistics.median(reads)


async def in_history(service: BaseSessionService, earlier_runs: int) -> float:
    """Median seconds to resume a 10-run invocation once the session's earlier invocations
    made ``earlier_runs`` dynamic runs."""
    runner = Runner(app_name="bench", agent=planner(10), session_service=service)
    session_id = f"h{earlier_runs}"
    await service.create_session(app_name="bench", user_id="u", session_id=session_id)
    rounds = earlier_runs // 10
    for _ in range(rounds - 1):
        await one_round(runner, session_id, 10)
    return statistics.median([await one_round(runner, session_id, 10) for _ in range(3)])


async def with_store(name: str, body: Any) -> Any:
    if name == "memory":
        return await body(InMemorySessionService())
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteSessionService(Path(folder) / "s.db")
        try:
            return await body(store)
        finally:
            await store.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a few sessions, a smoke run")
    parser.add_argument("--stores", default="memory,sqlite")
    args = parser.parse_args()
    sessions = 2 if args.quick else 9
    print(f"cairn dynamic nodes benchmark; Python {sys.version.split()[0]}")
    for name in args.stores.split(","):
        await with_store(name, lambda s: in_invocation(s, 10, 1))  # warm up
        few, few_read = await with_store(name, lambda s: in_invocation(s, 10, sessions))
        many, many_read = await with_store(name, lambda s: in_invocation(s, 200, sessions))
        print(
            f"{name:>8}: in the invocation: resume after 10 dynamic runs {few * 1000:.2f} ms, "
            f"after 200 {many * 1000:.2f} ms ({many / few:.2f}x; target within 1.5x); the "
            f"store's read of the session {few_read * 1000:.2f} -> {many_read * 1000:.2f} ms"
        )
        early = await with_store(name, lambda s: in_history(s, 10))
        late = await with_store(name, lambda s: in_history(s, 40 if args.quick else 200))
        print(
            f"{name:>8}: in the history: resume after {10} earlier dynamic runs "
            f"{early * 1000:.2f} ms, after {40 if args.quick else 200} {late * 1000:.2f} ms "
            f"({late / early:.2f}x; target within 1.5x)"
        )


if __name__ == "__main__":
    asyncio.run(main())
