"""Runs across processes: the Temporal executor with 1/2/4/8 workers, against the in-process
executor with as many API servers, on one PostgreSQL store.

    python bench/scale_out.py                      # the issue's load: 256 sessions x 20 runs
    python bench/scale_out.py --sessions 64 --runs 5 --workers 1,8
    python bench/scale_out.py --quick              # a smoke run, a few seconds per row
    python bench/scale_out.py --kill-every 10      # also: a worker killed every 10 s

``SCALE_TEMPORAL_ARGS`` adds arguments to the dev server's command line (for instance
``--dynamic-config-value system.enableActivityEagerExecution=true``).

Each session's runs are background runs (``POST .../runs``) of a scripted agent that makes
one tool call; its model answers after a fixed latency (100 ms) so that two cores can show
what more workers buy. Submissions go round-robin to two API servers (Temporal rows) or
stick to one server per session (in-process rows: an in-process executor runs what its
server was given). Every process executes at most ``--runs-per-worker`` runs at once.

Printed per row: invocations/s; p50/p99 from submit to the run's last committed event;
queue wait (submit to start); PostgreSQL commits/s; CPU seconds per 100 runs of the cairn
processes, of the Temporal server and of PostgreSQL; and the checks, read from the log:
runs of a session out of order or overlapping, and runs that ran twice (more than one
user message, tool result or final answer). It measures and prints; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx

PG = os.environ.get("CAIRN_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432")
APP = "scale"
BOUND = 600.0  # seconds any one wait may take before the bench gives up
TICK = os.sysconf("SC_CLK_TCK")

AGENT = '''"""The scale-out bench's agent: one tool call per run, a model with a fixed latency."""

import asyncio
import os

from google.genai import types

from cairn import Agent
from cairn.models import BaseLlm, LlmResponse

LATENCY = float(os.environ.get("SCALE_LATENCY", "0.1"))


class FixedLatencyModel(BaseLlm):
    model: str = "fixed-latency"

    async def generate_content_async(self, llm_request, stream=False):
        await asyncio.sleep(LATENCY)
        last = llm_request.contents[-1]
        if any(part.function_response for part in last.parts or []):
            yield LlmResponse(content=types.ModelContent("done"), turn_complete=True)
            return
        call = types.FunctionCall(name="work", args={"n": 1})
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(function_call=call)]),
            turn_complete=True,
        )


def work(n: int) -> dict:
    """Does one unit of work."""
    return {"worked": n}


root_agent = Agent(name="scale", model=FixedLatencyModel(), tools=[work])
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cairn_command() -> list[str]:
    return [sys.executable, "-m", "cairn.cli"]


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its reaped children (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICK


def pids_named(name: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "comm").read_text().strip() == name:
                    found.append(int(entry.name))
    return found


@dataclasses.dataclass
class Processes:
    """The processes of one row, with the CPU they used (including those killed)."""

    logs: Path
    """Where each process's output goes (a pipe nobody reads would fill and block it)."""
    procs: list[subprocess.Popen[bytes]] = dataclasses.field(default_factory=list)
    used: float = 0.0
    started: list[Path] = dataclasses.field(default_factory=list)

    def start(self, args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        log = self.logs / f"{args[len(cairn_command())]}-{len(self.started)}.log"
        self.started.append(log)
        with log.open("wb") as out:
            proc = subprocess.Popen(
                args, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        proc.log = log  # type: ignore[attr-defined]
        self.procs.append(proc)
        return proc

    def cpu(self) -> float:
        return self.used + sum(cpu_seconds(p.pid) for p in self.procs if p.poll() is None)

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        self.used += cpu_seconds(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        self.procs.remove(proc)

    def stop_all(self) -> None:
        for proc in list(self.procs):
            self.used += cpu_seconds(proc.pid)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.procs.clear()


async def wait_http(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + BOUND
    async with httpx.AsyncClient(timeout=5.0) as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                err = proc.log.read_text(errors="replace")  # type: ignore[attr-defined]
                raise RuntimeError(f"{url}: the server exited: {err[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if (await client.get(url)).status_code == 200:
                    return
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} not ready")


async def wait_tcp(port: int) -> None:
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        await asyncio.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port}")


@contextlib.contextmanager
def temporal_server() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    from cairn.runs.temporal.dev_server import temporal_cli_path

    port = free_port()
    proc = subprocess.Popen(
        [
            str(temporal_cli_path()),
            "server",
            "start-dev",
            "--ip",
            "127.0.0.1",
            "--port",
            str(port),
            "--headless",
            "--log-level",
            "error",
            *os.environ.get("SCALE_TEMPORAL_ARGS", "").split(),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield f"127.0.0.1:{port}", proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()


async def ready_temporal(target: str) -> None:
    from temporalio.client import Client

    deadline = time.monotonic() + BOUND
    while True:
        try:
            client = await Client.connect(target)
            await client.service_client.check_health()
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def wait_pollers(target: str, queue: str, count: int) -> None:
    """Until ``count`` workers poll the task queue for activities (they are ready)."""
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
    from temporalio.client import Client

    client = await Client.connect(target)
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        reply = await client.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(
                namespace="default",
                task_queue=TaskQueue(name=queue),
                task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
            )
        )
        if len({poller.identity for poller in reply.pollers}) >= count:
            return
        await asyncio.sleep(0.2)
    raise RuntimeError(f"{count} workers did not start polling {queue}")


@dataclasses.dataclass
class Row:
    label: str
    runs: int
    seconds: float
    per_second: float
    p50: float
    p99: float
    wait_p50: float
    wait_p99: float
    commits_per_second: float
    cpu_cairn: float
    cpu_temporal: float
    cpu_postgres: float
    not_done: int
    paused: int
    """Runs a kill left with a tool call in doubt: paused for an answer, never re-run."""
    out_of_order: int
    overlapping: int
    double_runs: int
    recovery: list[float] = dataclasses.field(default_factory=list)
    kills: int = 0


async def fresh_database(name: str) -> str:
    admin = await asyncpg.connect(f"{PG}/postgres")
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return f"{PG}/{name}".replace("postgresql://", "postgresql+asyncpg://", 1)


async def drop_database(name: str) -> None:
    admin = await asyncpg.connect(f"{PG}/postgres")
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


async def commits(db: asyncpg.Connection, name: str) -> int:
    value = await db.fetchval("SELECT xact_commit FROM pg_stat_database WHERE datname = $1", name)
    return int(value or 0)


async def submit_all(
    servers: list[str], sessions: int, runs: int, *, sticky: bool, concurrency: int = 32
) -> None:
    """Create the sessions, then submit run 0 of every session, run 1 of every session, ...
    (each session's runs in order; sessions in parallel)."""
    gate = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=60.0, limits=limits) as client:

        def server(session: int, attempt: int) -> str:
            return servers[session % len(servers)] if sticky else servers[attempt % len(servers)]

        async def create(i: int) -> None:
            async with gate:
                url = f"{server(i, i)}/apps/{APP}/users/u{i % 16}/sessions/s{i}"
                (await client.post(url, json={})).raise_for_status()

        await asyncio.gather(*(create(i) for i in range(sessions)))
        sent = 0

        async def submit(i: int, j: int) -> None:
            nonlocal sent
            body = {"newMessage": {"role": "user", "parts": [{"text": f"run {j}"}]}}
            url = f"{server(i, sent)}/cairn/apps/{APP}/users/u{i % 16}/sessions/s{i}/runs"
            sent += 1
            async with gate:
                reply = await client.post(url, json=body)
                reply.raise_for_status()

        for j in range(runs):
            await asyncio.gather(*(submit(i, j) for i in range(sessions)))


async def wait_finished(db: asyncpg.Connection, expected: int) -> None:
    deadline = time.monotonic() + max(BOUND, expected * 2.0)
    while time.monotonic() < deadline:
        row = await db.fetchrow(
            "SELECT count(*) AS total, count(*) FILTER (WHERE status IN ('pending','running')) "
            "AS active FROM cairn_runs"
        )
        if row["total"] >= expected and row["active"] == 0:
            return
        await asyncio.sleep(0.5)
    raise RuntimeError("the runs did not finish in time")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(db: asyncpg.Connection) -> dict[str, Any]:
    runs = await db.fetch(
        "SELECT session_id, run_id, seq, status, created_at, started_at, attempts FROM cairn_runs"
    )
    events = await db.fetch(
        "SELECT invocation_id, timestamp, event FROM cairn_events ORDER BY session_id, seq"
    )
    spans: dict[str, list[float]] = {}
    user_messages: dict[str, int] = defaultdict(int)
    results: dict[str, int] = defaultdict(int)
    finals: dict[str, int] = defaultdict(int)
    for event in events:
        inv, ts, text = event["invocation_id"], float(event["timestamp"]), event["event"]
        span = spans.setdefault(inv, [ts, ts])
        span[0], span[1] = min(span[0], ts), max(span[1], ts)
        if '"author":"user"' in text and '"text":"run ' in text:
            user_messages[inv] += 1
        if '"functionResponse"' in text:
            results[inv] += 1
        if '"text":"done"' in text:
            finals[inv] += 1
    by_session: dict[str, list[Any]] = defaultdict(list)
    for run in runs:
        by_session[run["session_id"]].append(run)
    out_of_order = overlapping = 0
    for session_runs in by_session.values():
        session_runs.sort(key=lambda r: r["seq"])
        previous = None
        for run in session_runs:
            span = spans.get(run["run_id"])
            if span is None:
                continue
            if previous is not None:
                if span[0] < previous[0]:
                    out_of_order += 1
                elif span[0] < previous[1]:
                    overlapping += 1
            previous = span
    double = sum(
        1
        for run in runs
        if max(user_messages[run["run_id"]], results[run["run_id"]], finals[run["run_id"]]) > 1
    )
    latency = [spans[r["run_id"]][1] - r["created_at"] for r in runs if r["run_id"] in spans]
    waits = [r["started_at"] - r["created_at"] for r in runs if r["started_at"]]
    first = min(r["created_at"] for r in runs)
    last = max(span[1] for span in spans.values())
    return {
        "runs": runs,
        "latency": latency,
        "waits": waits,
        "seconds": last - first,
        "not_done": sum(1 for r in runs if r["status"] not in ("done", "paused")),
        "paused": sum(1 for r in runs if r["status"] == "paused"),
        "out_of_order": out_of_order,
        "overlapping": overlapping,
        "double": double,
    }


async def one_row(
    *,
    executor: str,
    workers: int,
    args: argparse.Namespace,
    agents: Path,
    temporal: str | None,
    temporal_pid: int,
    kill_every: float | None,
) -> Row:
    name = f"cairn_scale_{os.getpid()}_{executor}_{workers}"
    store = await fresh_database(name)
    env = {**os.environ, "SCALE_LATENCY": str(args.latency), "CAIRN_STORE": store}
    env.pop("CAIRN_EXECUTOR", None)
    logs = Path(tempfile.mkdtemp(prefix=f"{name}-logs-"))  # kept, to look into afterwards
    procs = Processes(logs)
    queue = f"scale-{name}"
    db = await asyncpg.connect(f"{PG}/{name}")
    kills: list[float] = []
    try:
        servers = []
        api_count = 2 if executor == "temporal" else workers
        for _ in range(api_count):
            port = free_port()
            command = [*cairn_command(), "api-server", str(agents), "--port", str(port)]
            if executor == "temporal":
                command += ["--executor", f"temporal://{temporal}", "--task-queue", queue]
            else:
                command += ["--max-runs", str(args.runs_per_worker)]
            proc = procs.start(command, env)
            await wait_http(f"http://127.0.0.1:{port}/health", proc)
            servers.append(f"http://127.0.0.1:{port}")
        worker_command = [
            *cairn_command(),
            "worker",
            str(agents),
            "--executor",
            f"temporal://{temporal}",
            "--task-queue",
            queue,
            "--max-runs",
            str(args.runs_per_worker),
        ]
        if executor == "temporal":
            for _ in range(workers):
                procs.start(worker_command, env)
            assert temporal is not None
            await wait_pollers(temporal, queue, workers)
        postgres_before = sum(cpu_seconds(pid) for pid in pids_named("postgres"))
        temporal_before = cpu_seconds(temporal_pid)
        cairn_before = procs.cpu()
        commits_before = await commits(db, name)
        started = time.monotonic()

        async def killer() -> None:
            assert kill_every is not None
            while True:
                await asyncio.sleep(kill_every)
                live = [p for p in procs.procs if p.args[len(cairn_command())] == "worker"]
                if not live:
                    continue
                procs.kill(random.choice(live))
                kills.append(time.time())
                procs.start(worker_command, env)

        killing = asyncio.create_task(killer()) if kill_every else None
        try:
            await submit_all(servers, args.sessions, args.runs, sticky=executor == "in-process")
            await wait_finished(db, args.sessions * args.runs)
        finally:
            if killing is not None:
                killing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await killing
        wall = time.monotonic() - started
        commit_rate = (await commits(db, name) - commits_before) / wall
        cpu_cairn = procs.cpu() - cairn_before
        cpu_temporal = cpu_seconds(temporal_pid) - temporal_before
        cpu_postgres = sum(cpu_seconds(pid) for pid in pids_named("postgres")) - postgres_before
        found = await measure(db)
    finally:
        await db.close()
        procs.stop_all()
        await drop_database(name)
    count = len(found["runs"])
    recovery = []
    for run in found["runs"]:
        if run["attempts"] > 1 and run["started_at"]:
            before = [k for k in kills if k <= run["started_at"]]
            if before:
                recovery.append(run["started_at"] - before[-1])
    per_hundred = 100.0 / max(count, 1)
    label = f"{executor}, {workers} {'worker' if executor == 'temporal' else 'server'}"
    label += "s" if workers > 1 else ""
    if kill_every:
        label += f", a worker killed every {kill_every:g} s"
    return Row(
        label=label,
        runs=count,
        seconds=found["seconds"],
        per_second=count / found["seconds"],
        p50=percentile(found["latency"], 0.5),
        p99=percentile(found["latency"], 0.99),
        wait_p50=percentile(found["waits"], 0.5),
        wait_p99=percentile(found["waits"], 0.99),
        commits_per_second=commit_rate,
        cpu_cairn=cpu_cairn * per_hundred,
        cpu_temporal=cpu_temporal * per_hundred,
        cpu_postgres=cpu_postgres * per_hundred,
        not_done=found["not_done"],
        paused=found["paused"],
        out_of_order=found["out_of_order"],
        overlapping=found["overlapping"],
        double_runs=found["double"],
        recovery=recovery,
        kills=len(kills),
    )


def show(row: Row) -> None:
    print(
        f"{row.label:<44} {row.runs:>6} runs {row.per_second:8.1f} inv/s  "
        f"p50 {row.p50:6.2f} s p99 {row.p99:6.2f} s  wait p50 {row.wait_p50:6.2f} s "
        f"p99 {row.wait_p99:6.2f} s  {row.commits_per_second:7.0f} commits/s  "
        f"cpu/100 runs: cairn {row.cpu_cairn:5.2f} s temporal {row.cpu_temporal:5.2f} s "
        f"postgres {row.cpu_postgres:5.2f} s  failed/cancelled {row.not_done} "
        f"paused in doubt {row.paused} out-of-order "
        f"{row.out_of_order} overlapping {row.overlapping} double {row.double_runs}",
        flush=True,
    )
    if row.kills:
        recovered = ", ".join(
            f"{label} {value:.1f} s"
            for label, value in (
                ("median", statistics.median(row.recovery) if row.recovery else float("nan")),
                ("max", max(row.recovery) if row.recovery else float("nan")),
            )
        )
        print(
            f"  {row.kills} kills; {len(row.recovery)} runs resumed on another worker; "
            f"kill to resumed start: {recovered}",
            flush=True,
        )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=256)
    parser.add_argument("--runs", type=int, default=20, help="runs per session")
    parser.add_argument("--workers", default="1,2,4,8")
    parser.add_argument("--executors", default="temporal,in-process")
    parser.add_argument("--runs-per-worker", type=int, default=1)
    parser.add_argument("--latency", type=float, default=0.1, help="model latency, seconds")
    parser.add_argument("--kill-every", type=float, default=None, metavar="SECONDS")
    parser.add_argument("--kill-workers", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="8 sessions x 3 runs, 1,2 workers")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.runs, args.workers = 8, 3, "1,2"
    counts = [int(n) for n in args.workers.split(",")]
    executors = args.executors.split(",")
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores; {args.sessions} sessions x "
        f"{args.runs} runs, one tool call each, model latency {args.latency * 1000:.0f} ms, "
        f"{args.runs_per_worker} run(s) at once per process",
        flush=True,
    )
    workdir = Path(tempfile.mkdtemp(prefix="cairn-scale-"))
    (workdir / APP).mkdir()
    (workdir / APP / "agent.py").write_text(AGENT, encoding="utf-8")
    rows: dict[tuple[str, int], Row] = {}
    try:
        with temporal_server() as (target, server):
            await wait_tcp(int(target.rsplit(":", 1)[1]))
            await ready_temporal(target)
            for executor in executors:
                for workers in counts:
                    row = await one_row(
                        executor=executor,
                        workers=workers,
                        args=args,
                        agents=workdir,
                        temporal=target,
                        temporal_pid=server.pid,
                        kill_every=None,
                    )
                    rows[(executor, workers)] = row
                    show(row)
            if args.kill_every:
                show(
                    await one_row(
                        executor="temporal",
                        workers=args.kill_workers,
                        args=args,
                        agents=workdir,
                        temporal=target,
                        temporal_pid=server.pid,
                        kill_every=args.kill_every,
                    )
                )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("Summary")
    one, most = min(counts), max(counts)
    if ("temporal", one) in rows and ("temporal", most) in rows and most > one:
        ratio = rows[("temporal", most)].per_second / rows[("temporal", one)].per_second
        goal = "met" if ratio >= 6 * (most / 8) else "NOT met"
        print(
            f"  temporal throughput, {most} vs {one} workers: {ratio:.2f}x "
            f"(goal >= 6x for 8 vs 1: {goal})"
        )
    if ("temporal", one) in rows and ("in-process", one) in rows:
        overhead = rows[("in-process", one)].per_second / rows[("temporal", one)].per_second - 1
        goal = "met" if overhead <= 0.20 else "NOT met"
        print(
            f"  temporal executor overhead over in-process at {one}: {overhead * 100:+.1f}% "
            f"(goal <= 20%: {goal})"
        )
    bad = sum(r.out_of_order + r.overlapping + r.double_runs for r in rows.values())
    print(f"  out-of-order, overlapping or double runs in all rows: {bad}")


if __name__ == "__main__":
    asyncio.run(main())
