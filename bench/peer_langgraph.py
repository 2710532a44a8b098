"""LangGraph side of bench/peers.py: the workloads of bench/workflows.py, without cairn.

Runs inside bench/.peers/langgraph (made by bench/peers.py), never in the project's venv:

    python bench/peer_langgraph.py [--invocations 200] [--rounds 200] [--stores memory,...]

1. A StateGraph of 5 nodes in a line, each writing one state key: `--invocations`
   `ainvoke` calls on one thread (the checkpointer keeps every run's checkpoints).
2. A 3-node StateGraph whose middle node calls `interrupt()`: per round, one `ainvoke` that
   stops at the interrupt and one timed `ainvoke(Command(resume="ok"))`, all rounds on one
   thread; the median of rounds 8-10 and of the last three rounds.

Prints one machine-readable line per figure:
    RESULT peer=langgraph workload=throughput store=memory value=<invocations/s>
    RESULT peer=langgraph workload=resume10 store=memory value=<ms>
    RESULT peer=langgraph workload=resume200 store=memory value=<ms>   (200 = --rounds)
    FAILED peer=langgraph store=<store> reason=<one line>
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

POSTGRES = "postgresql://postgres@127.0.0.1:5432"


class Linear(TypedDict, total=False):
    step0: int
    step1: int
    step2: int
    step3: int
    step4: int


class Review(TypedDict, total=False):
    draft: str
    answer: str
    result: str


def step(i: int) -> Any:
    def write(state: Linear) -> dict[str, int]:
        return {f"step{i}": i}

    write.__name__ = f"step{i}"
    return write


def before(state: Review) -> dict[str, str]:
    return {"draft": "draft"}


def ask(state: Review) -> dict[str, str]:
    return {"answer": interrupt("ok?")}


def after(state: Review) -> dict[str, str]:
    return {"result": f"done {state.get('answer')}"}


def linear_graph(checkpointer: Any) -> Any:
    graph = StateGraph(Linear)
    previous = START
    for i in range(5):
        graph.add_node(f"step{i}", step(i))
        graph.add_edge(previous, f"step{i}")
        previous = f"step{i}"
    graph.add_edge(previous, END)
    return graph.compile(checkpointer=checkpointer)


def review_graph(checkpointer: Any) -> Any:
    graph = StateGraph(Review)
    graph.add_node("before", before)
    graph.add_node("ask", ask)
    graph.add_node("after", after)
    graph.add_edge(START, "before")
    graph.add_edge("before", "ask")
    graph.add_edge("ask", "after")
    graph.add_edge("after", END)
    return graph.compile(checkpointer=checkpointer)


async def throughput(checkpointer: Any, invocations: int) -> float:
    app = linear_graph(checkpointer)
    config = {"configurable": {"thread_id": "linear"}}
    started = time.perf_counter()
    for _ in range(invocations):
        await app.ainvoke({}, config)
    return invocations / (time.perf_counter() - started)


async def resume_times(checkpointer: Any, rounds: int) -> dict[int, float]:
    app = review_graph(checkpointer)
    config = {"configurable": {"thread_id": "review"}}
    marks = {10, rounds}
    measured: dict[int, list[float]] = {}
    for round_number in range(1, rounds + 1):
        paused = await app.ainvoke({"draft": ""}, config)
        if "__interrupt__" not in paused:
            raise RuntimeError(f"round {round_number} did not stop at the interrupt")
        started = time.perf_counter()
        done = await app.ainvoke(Command(resume="ok"), config)
        elapsed = time.perf_counter() - started
        if done.get("result") != "done ok":
            raise RuntimeError(f"round {round_number} resumed to {done!r}")
        for mark in marks:
            if mark - 2 <= round_number <= mark:
                measured.setdefault(mark, []).append(elapsed)
    return {mark: statistics.median(values) for mark, values in measured.items()}


@contextlib.asynccontextmanager
async def checkpointer_for(store: str) -> AsyncIterator[Any]:
    if store == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
        return
    if store == "sqlite":
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        with tempfile.TemporaryDirectory() as folder:
            async with AsyncSqliteSaver.from_conn_string(str(Path(folder) / "s.db")) as saver:
                await saver.setup()
                yield saver
        return
    if store == "postgres":
        import psycopg
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        database = f"lg_wfbench_{uuid.uuid4().hex[:10]}"
        async with await psycopg.AsyncConnection.connect(
            f"{POSTGRES}/postgres", autocommit=True
        ) as admin:
            await admin.execute(f"CREATE DATABASE {database}")
        try:
            async with AsyncPostgresSaver.from_conn_string(f"{POSTGRES}/{database}") as saver:
                await saver.setup()
                yield saver
        finally:
            async with await psycopg.AsyncConnection.connect(
                f"{POSTGRES}/postgres", autocommit=True
            ) as admin:
                await admin.execute(f"DROP DATABASE {database} WITH (FORCE)")
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
    from importlib.metadata import version

    print(f"langgraph {version('langgraph')}; Python {sys.version.split()[0]}", flush=True)
    for store in args.stores.split(","):
        try:
            async with checkpointer_for(store) as saver:
                rate = await throughput(saver, args.invocations)
            print(f"RESULT peer=langgraph workload=throughput store={store} value={rate:.3f}")
            async with checkpointer_for(store) as saver:
                times = await resume_times(saver, args.rounds)
            for mark, seconds in sorted(times.items()):
                name = "resume10" if mark == 10 else "resume200"
                print(
                    f"RESULT peer=langgraph workload={name} store={store} "
                    f"value={seconds * 1000:.4f}"
                )
        except Exception as error:
            print(f"FAILED peer=langgraph store={store} reason={one_line(error)}")
        sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
