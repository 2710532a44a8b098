"""`/run_sse` round trips against `cairn api-server` and `adk api_server` on PostgreSQL.

    .venv/bin/python bench/api_server.py [--seconds 8] [--clients 8] [--workers 1,4]
                                         [--no-peer] [--no-install]

Two apps, each answering one user message per request:

- `chat`: an LLM agent on a zero-latency model that answers "ok" (one model call);
- `flow`: a 5-node workflow of plain functions, each writing one state key.

For each server (cairn with 1 and 4 uvicorn worker processes; google-adk 2.13.0's
`adk api_server`, one process, from its own venv under bench/.peers/adk made by
bench/peers.py), on a fresh PostgreSQL database: `--clients` concurrent clients each
create their own session, then send `POST /run_sse` requests back to back (each reading
the whole event stream) for `--seconds` seconds after a one-second warm-up, driven by
wrk when it is installed (C; it leaves the servers the CPU) or else by httpx in this
process (`--load`). Prints
requests/s and the median round trip per server and app, and the ratios. The load
generator is the same for every server. Measures and
prints; asserts no timing. Needs PostgreSQL at 127.0.0.1:5432 (user postgres).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
POSTGRES = "postgresql+asyncpg://postgres@127.0.0.1:5432"

CAIRN_CHAT = """
from cairn import Agent
from cairn.testing import ScriptedLlm

root_agent = Agent(name="chat", model=ScriptedLlm(respond=lambda request: "ok"))
"""

CAIRN_FLOW = """
from cairn.workflow import Workflow


def step(index):
    def node(ctx, node_input=None):
        ctx.state[f"step{index}"] = index
        return index

    node.__name__ = f"step{index}"
    return node


root_agent = Workflow(name="flow", edges=[("START", *(step(i) for i in range(5)))])
"""

ADK_CHAT = """
from typing import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import types


class Instant(BaseLlm):
    model: str = "instant"

    async def generate_content_async(self, llm_request, stream=False) -> AsyncGenerator:
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="ok")]))


root_agent = LlmAgent(name="chat", model=Instant())
"""

ADK_FLOW = """
from google.adk.workflow import START, Workflow


def step(index):
    def node(ctx, node_input=None):
        ctx.state[f"step{index}"] = index
        return index

    node.__name__ = f"step{index}"
    return node


root_agent = Workflow(name="flow", edges=[(START, *(step(i) for i in range(5)))])
"""


@dataclass
class Figure:
    requests_per_s: float
    median_ms: float
    errors: int


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def write_agents(folder: Path, sources: dict[str, str]) -> None:
    for name, source in sources.items():
        package = folder / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("from . import agent\n")
        (package / "agent.py").write_text(textwrap.dedent(source))


@contextlib.asynccontextmanager
async def fresh_database() -> Any:
    name = f"cairn_bench_{uuid.uuid4().hex[:10]}"
    admin = create_async_engine(f"{POSTGRES}/postgres", isolation_level="AUTOCOMMIT")
    async with admin.connect() as connection:
        await connection.execute(text(f"CREATE DATABASE {name}"))
    try:
        yield f"{POSTGRES}/{name}"
    finally:
        async with admin.connect() as connection:
            await connection.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        await admin.dispose()


@contextlib.contextmanager
def server(command: list[str], env: dict[str, str], port: int) -> Iterator[str]:
    """Start a server process, wait until GET /list-apps answers; stop it afterwards."""
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=log, cwd=ROOT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while not _answers(base):
                if process.poll() is not None:
                    log.seek(0)
                    tail = log.read().decode(errors="replace").strip().splitlines()[-5:]
                    raise RuntimeError(f"server exited {process.returncode}: {' | '.join(tail)}")
                if time.monotonic() > deadline:
                    raise RuntimeError("server did not answer within 60 s")
                time.sleep(0.2)
            yield base
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()


def _answers(base: str) -> bool:
    try:
        return httpx.get(f"{base}/list-apps", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


WRK_SCRIPT = """
local sessions = {%(sessions)s}
local next_index = 0
local threads = {}
function setup(thread)
  next_index = next_index + 1
  table.insert(threads, thread)
  thread:set("user", "%(users)s" .. next_index)
  thread:set("sid", sessions[next_index])
end
function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.body = '{"appName":"%(app)s","userId":"' .. user .. '","sessionId":"' .. sid ..
    '","newMessage":{"role":"user","parts":[{"text":"hello"}]}}'
  failed = 0
end
function request()
  return wrk.format(nil, "/run_sse")
end
function response(status, headers, body)
  if status ~= 200 or string.find(body, '"error"', 1, true) then
    failed = failed + 1
  end
end
function done(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write +
    summary.errors.timeout
  for _, thread in ipairs(threads) do
    errors = errors + thread:get("failed")  -- non-200, or an error event in the stream
  end
  io.write(string.format("WRK requests=%%d errors=%%d median_us=%%d duration_us=%%d\\n",
    summary.requests, errors, latency:percentile(50), summary.duration))
end
"""


def load_wrk(base: str, app: str, clients: int, seconds: float) -> Figure:
    """The same load from wrk (C, one thread and connection per client, one session each):
    the load generator then costs the servers far less CPU than httpx does. The warm-up
    uses sessions of its own: a request it cuts off may still hold its session a moment."""

    def run(duration: str, users: str) -> str:
        sessions = []
        for number in range(1, clients + 1):
            url = f"{base}/apps/{app}/users/{users}{number}/sessions"
            created = httpx.post(url, json={})
            created.raise_for_status()
            sessions.append(created.json()["id"])
        quoted = ", ".join(f'"{sid}"' for sid in sessions)
        source = WRK_SCRIPT % {"sessions": quoted, "app": app, "users": users}
        with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
            script.write(source)
            script.flush()
            command = ["wrk", "-t", str(clients), "-c", str(clients), "-s", script.name]
            command += ["-d", duration, "--timeout", "30s", base]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
        return done.stdout

    run("1s", "warm")
    output = run(f"{seconds:g}s", "user")
    line = next(line for line in output.splitlines() if line.startswith("WRK "))
    fields = dict(part.split("=") for part in line.split()[1:])
    duration = int(fields["duration_us"]) / 1e6
    requests = int(fields["requests"])
    return Figure(requests / duration, int(fields["median_us"]) / 1000, int(fields["errors"]))


async def load(base: str, app: str, clients: int, seconds: float) -> Figure:
    """`clients` sessions, each sending /run_sse back to back; figures after a 1 s warm-up."""
    timings: list[float] = []
    errors = 0
    start_measuring = time.monotonic() + 1.0
    stop = start_measuring + seconds

    async def client(http: httpx.AsyncClient, number: int) -> None:
        nonlocal errors
        user = f"user{number}"
        created = await http.post(f"{base}/apps/{app}/users/{user}/sessions", json={})
        created.raise_for_status()
        session_id = created.json()["id"]
        body = {
            "appName": app,
            "userId": user,
            "sessionId": session_id,
            "newMessage": {"role": "user", "parts": [{"text": "hello"}]},
        }
        while (now := time.monotonic()) < stop:
            began = now
            try:
                async with http.stream("POST", f"{base}/run_sse", json=body) as response:
                    chunks = [chunk async for chunk in response.aiter_text()]
                failed = response.status_code != 200 or '"error"' in "".join(chunks)
            except httpx.HTTPError:
                failed = True
            ended = time.monotonic()
            if failed:
                errors += 1
            elif began >= start_measuring and ended <= stop:
                timings.append(ended - began)

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        await asyncio.gather(*(client(http, n) for n in range(clients)))
    median = statistics.median(timings) * 1000 if timings else float("nan")
    return Figure(len(timings) / seconds, median, errors)


async def bench_cairn(workers: int, args: argparse.Namespace, agents: Path) -> dict[str, Figure]:
    async with fresh_database() as url:
        port = free_port()
        env = {
            **os.environ,
            "CAIRN_AGENTS_DIR": str(agents),
            "CAIRN_STORE": url,
        }
        command = [
            sys.executable, "-m", "uvicorn", "--factory", "cairn.server:app_from_env",
            "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers),
            "--log-level", "warning", "--no-access-log",
        ]  # fmt: skip
        with server(command, env, port) as base:
            return {app: await measure(base, app, args) for app in APPS}


async def bench_adk(args: argparse.Namespace, agents: Path) -> dict[str, Figure]:
    sys.path.insert(0, str(BENCH))
    import peers

    python = peers.ensure_venv(peers.PEERS["adk"], not args.no_install)
    adk = python.parent / "adk"
    async with fresh_database() as url:
        port = free_port()
        env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        command = [
            str(adk), "api_server", str(agents), "--host", "127.0.0.1", "--port", str(port),
            f"--session_service_uri={url}", "--log_level", "warning",
        ]  # fmt: skip
        with server(command, env, port) as base:
            return {app: await measure(base, app, args) for app in APPS}


APPS = ("chat", "flow")


async def measure(base: str, app: str, args: argparse.Namespace) -> Figure:
    if args.load == "wrk":
        return await asyncio.to_thread(load_wrk, base, app, args.clients, args.seconds)
    return await load(base, app, args.clients, args.seconds)


def row(title: str, figures: dict[str, Figure], app: str) -> str:
    figure = figures.get(app)
    if figure is None:
        return f"  {title:<28} {app:<5} failed"
    errors = f", {figure.errors} errors" if figure.errors else ""
    return (
        f"  {title:<28} {app:<5} {figure.requests_per_s:8.1f} req/s   "
        f"median {figure.median_ms:7.2f} ms{errors}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", default="1,4")
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--no-install", action="store_true")
    parser.add_argument(
        "--load",
        choices=["wrk", "httpx"],
        default="wrk" if shutil.which("wrk") else "httpx",
        help="the load generator (default: wrk when installed, e.g. apt-get install wrk)",
    )
    args = parser.parse_args()
    results: dict[str, dict[str, Figure]] = {}
    failures: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as folder:
        cairn_agents = Path(folder) / "cairn_agents"
        write_agents(cairn_agents, {"chat": CAIRN_CHAT, "flow": CAIRN_FLOW})
        adk_agents = Path(folder) / "adk_agents"
        write_agents(adk_agents, {"chat": ADK_CHAT, "flow": ADK_FLOW})
        if not args.no_peer:
            say("[adk] api_server ...")
            try:
                results["google-adk 2.13.0, 1 process"] = await bench_adk(args, adk_agents)
            except Exception as error:  # a peer that cannot run is reported, not raised
                failures["google-adk 2.13.0, 1 process"] = str(error).splitlines()[0]
        for workers in (int(w) for w in args.workers.split(",")):
            title = f"cairn, {workers} process{'es' if workers > 1 else ''}"
            say(f"[cairn] {workers} worker(s) ...")
            results[title] = await bench_cairn(workers, args, cairn_agents)
    print(
        f"/run_sse round trips on PostgreSQL; {args.clients} concurrent clients ({args.load}), "
        f"{args.seconds:g} s per figure; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}"
    )
    for app in APPS:
        for title, figures in results.items():
            print(row(title, figures, app))
        for title, reason in failures.items():
            print(f"  {title:<28} {app:<5} failed: {reason}")
    peer = results.get("google-adk 2.13.0, 1 process")
    one = results.get("cairn, 1 process")
    if peer and one:
        for app in APPS:
            ratio = one[app].requests_per_s / peer[app].requests_per_s
            print(f"  cairn (1 process) / ADK on {app}: {ratio:.2f}x requests/s")
    many = [t for t in results if t.startswith("cairn,") and t != "cairn, 1 process"]
    if one:
        for title in many:
            for app in APPS:
                ratio = results[title][app].requests_per_s / one[app].requests_per_s
                print(f"  {title} / 1 process on {app}: {ratio:.2f}x requests/s")


if __name__ == "__main__":
    asyncio.run(main())
