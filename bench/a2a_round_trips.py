"""A2A ``message/send`` round trips per second: cairn's A2A server against google-adk 2.13.0's.

    .venv/bin/python bench/a2a_round_trips.py                  # every row, ~1.5 min
    .venv/bin/python bench/a2a_round_trips.py --quick --no-peer   # a smoke run

Issue 21's target: round trips per second to a one-turn scripted agent (bench/a2a_twins.py's
``teller``: a ``BaseLlm`` subclass answering at once, one model call per message), cairn's
server over google-adk's, goal >= 5x. Each server runs in its own process, under uvicorn
with the same settings (``--loop``/``--http``, uvloop and httptools by default: cairn
depends on uvicorn[standard], and bench/peers.py gives ADK's venv the same two packages):

- client ceiling: a trivial ASGI app answering a canned completed task of the same size as
  a real answer; it shows how many round trips the client itself can drive, so a reader
  sees whether the client is the bottleneck of a row;
- cairn ``to_a2a(agent)`` on its default store (in memory), and on SQLite (a file);
  ``python bench/a2a_round_trips.py serve-cairn --port P [--agent approver] [--store F]``
  is how this bench (and tests/a2a/interop) starts one;
- google-adk 2.13.0 ``to_a2a(agent)`` (bench/peer_adk_a2a.py in bench/.peers/adk, made by
  bench/peers.py's ``ensure_venv``; in-memory services, ADK's only default).

All servers are started first, then measured one at a time while the others idle,
``--rounds`` times over (a machine whose load drifts weighs on every server alike); a row
gives the median round, each round's figure, and latencies over all rounds.

The same client for every row, in this process: ``--clients`` keep-alive HTTP/1.1
connections (asyncio streams on uvloop, no HTTP library), each sending one JSON-RPC request
at a time, back to back, for ``--seconds`` after a warm-up. The request is the same for
every server: A2A 1.0 ``SendMessage`` with header ``A2A-Version: 1.0`` (``--protocol 0.3``:
``message/send`` in the 0.3 form; both servers take both), a blocking send of one text
part with a fresh ``messageId`` and no ``contextId`` (a new conversation per message, as a
stateless client does; a repeated messageId would be answered from cairn's log without a
run). A round trip counts when the answer is HTTP 200 with a completed task carrying the
agent's reply; anything else is an error, reported. It prints round trips/s, the median and
99th-percentile round trip, the server process's CPU time per round trip (Linux: from
/proc; steadier than round trips/s on a machine other work shares), the ratios cairn/ADK
of both and the goal; it asserts no timing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
TEXT = "hello"
REPLY = f"teller heard: {TEXT}"
READY_BOUND = 120.0  # seconds for a server to say READY before it counts as failed
GOAL = 5.0
ADK = "google-adk 2.13.0 to_a2a"


# -- the servers (each runs `python bench/a2a_round_trips.py serve-...` in its own process) --
def canned_answer(protocol: str) -> bytes:
    """A completed task as a real server answers it (ids, history, artifact, metadata)."""
    ids = {key: str(uuid.uuid4()) for key in ("task", "context", "artifact", "reply", "m")}
    if protocol == "1.0":
        task: dict[str, Any] = {
            "id": ids["task"],
            "contextId": ids["context"],
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-01T00:00:00Z"},
            "artifacts": [{"artifactId": ids["artifact"], "parts": [{"text": REPLY}]}],
            "history": [
                {"messageId": ids["m"], "contextId": ids["context"], "taskId": ids["task"],
                 "role": "ROLE_USER", "parts": [{"text": TEXT}]},
                {"messageId": ids["reply"], "role": "ROLE_AGENT", "parts": [{"text": REPLY}]},
            ],
            "metadata": {"adk_app_name": "teller", "adk_session_id": ids["context"],
                         "adk_invocation_id": "e-" + ids["reply"]},
        }  # fmt: skip
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "result": {"task": task}}
    else:
        task = {
            "kind": "task",
            "id": ids["task"],
            "contextId": ids["context"],
            "status": {"state": "completed", "timestamp": "2026-01-01T00:00:00Z"},
            "artifacts": [
                {"artifactId": ids["artifact"], "parts": [{"kind": "text", "text": REPLY}]}
            ],
            "history": [
                {"kind": "message", "messageId": ids["m"], "contextId": ids["context"],
                 "taskId": ids["task"], "role": "user", "parts": [{"kind": "text", "text": TEXT}]},
                {"kind": "message", "messageId": ids["reply"], "role": "agent",
                 "parts": [{"kind": "text", "text": REPLY}]},
            ],
            "metadata": {"adk_app_name": "teller", "adk_session_id": ids["context"],
                         "adk_invocation_id": "e-" + ids["reply"]},
        }  # fmt: skip
        body = {"jsonrpc": "2.0", "id": 1, "result": task}
    return json.dumps(body).encode()


def trivial_app(protocol: str) -> Any:
    """An ASGI app that reads the request and answers ``canned_answer``: no A2A at all."""
    answer = canned_answer(protocol)
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(answer))]

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        more = True
        while more:
            message = await receive()
            more = message.get("more_body", False)
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": answer})

    return app


def load_twins() -> Any:
    spec = importlib.util.spec_from_file_location("cairn_bench_a2a_twins", BENCH / "a2a_twins.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cairn_app(name: str, store: str, port: int) -> Any:
    """cairn's ``to_a2a`` of bench/a2a_twins.py's agent ``name`` on ``store``: ``memory``
    (its default) or a SQLite file path (the app is then named after the agent)."""
    from cairn.a2a.utils.agent_to_a2a import to_a2a

    agent = load_twins().agent("cairn", name)
    if store == "memory":
        return to_a2a(agent, host="127.0.0.1", port=port)
    from cairn.runners import Runner
    from cairn.sessions.sqlite_session_service import SqliteSessionService

    runner = Runner(app_name=name, agent=agent, session_service=SqliteSessionService(store))
    return to_a2a(agent, host="127.0.0.1", port=port, runner=runner)


# -- the client ----------------------------------------------------------------------------------
def request_maker(protocol: str, port: int) -> Any:
    """A function giving the bytes of one whole HTTP request, with a fresh messageId."""
    version = b"A2A-Version: 1.0\r\n" if protocol == "1.0" else b""
    head = (
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n%s"
        b"Content-Length: %d\r\n\r\n"
    )
    if protocol == "1.0":
        template = (
            '{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":'
            '{"messageId":"%s","role":"ROLE_USER","parts":[{"text":"' + TEXT + '"}]}}}'
        )
    else:
        template = (
            '{"jsonrpc":"2.0","id":%d,"method":"message/send","params":{"message":'
            '{"kind":"message","messageId":"%s","role":"user",'
            '"parts":[{"kind":"text","text":"' + TEXT + '"}]}}}'
        )
    counter = iter(range(1, 1 << 62))

    def make() -> bytes:
        body = (template % (next(counter), uuid.uuid4().hex)).encode()
        return head % (port, version, len(body)) + body

    return make


def answer_is_good(protocol: str) -> Any:
    done = b'"TASK_STATE_COMPLETED"' if protocol == "1.0" else b'"completed"'
    reply = json.dumps(REPLY).encode()

    def check(status: int, body: bytes) -> bool:
        return status == 200 and done in body and reply in body and b'"result"' in body

    return check


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One HTTP/1.1 response: (status, body); a Content-Length or a chunked body."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip()
    if b"content-length" in headers:
        return status, await reader.readexactly(int(headers[b"content-length"]))
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return status, bytes(body)
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    raise RuntimeError("an answer with neither Content-Length nor chunked encoding")


@dataclass
class Figure:
    round_trips: int = 0
    errors: int = 0
    seconds: float = 0.0
    times: list[float] = field(default_factory=list)
    first_error: str = ""
    cpu: float | None = None  # the server process's CPU seconds in the measured span

    @property
    def per_second(self) -> float:
        return self.round_trips / self.seconds if self.seconds else 0.0

    @property
    def cpu_ms(self) -> float | None:
        """The server's CPU time per round trip, in ms (None where it cannot be read)."""
        if self.cpu is None or not self.round_trips:
            return None
        return self.cpu / self.round_trips * 1000

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.times)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


def cpu_seconds(pid: int | None) -> float | None:
    """The user + system CPU time a process has used (Linux's /proc; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except (OSError, TypeError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def drive(port: int, args: argparse.Namespace, pid: int | None = None) -> Figure:
    """``args.clients`` connections sending back to back: a warm-up, then the measured span
    (and the CPU time the server process ``pid`` used in it)."""
    make, good = request_maker(args.protocol, port), answer_is_good(args.protocol)
    figure = Figure()
    phase = {"measuring": False, "stop": False}

    async def client() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while not phase["stop"]:
                request = make()
                started = time.perf_counter()
                writer.write(request)
                status, body = await read_answer(reader)
                took = time.perf_counter() - started
                if not phase["measuring"]:
                    continue
                if good(status, body):
                    figure.round_trips += 1
                    figure.times.append(took)
                else:
                    figure.errors += 1
                    figure.first_error = figure.first_error or f"{status}: {body[:200]!r}"
        finally:
            writer.close()

    tasks = [asyncio.ensure_future(client()) for _ in range(args.clients)]
    try:
        await asyncio.sleep(args.warmup)
        phase["measuring"] = True
        started, cpu = time.perf_counter(), cpu_seconds(pid)
        await asyncio.sleep(args.seconds)
        figure.seconds = time.perf_counter() - started
        phase["measuring"], phase["stop"] = False, True
        used = cpu_seconds(pid)
        figure.cpu = None if used is None or cpu is None else used - cpu
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
    return figure


async def probe(port: int, args: argparse.Namespace) -> str:
    """Why one request to the server is not a good round trip ("" when it is)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request_maker(args.protocol, port)())
        status, body = await read_answer(reader)
    finally:
        writer.close()
    if answer_is_good(args.protocol)(status, body):
        return ""
    return f"A2A {args.protocol} send answered {status}: {body[:300].decode(errors='replace')}"


def run(coroutine: Any) -> Any:
    """``coroutine`` run on uvloop (asyncio's own loop when uvloop is not installed)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)


# -- running one server and measuring it ---------------------------------------------------------
@contextlib.contextmanager
def started(command: list[str], env: dict[str, str], folder: Path, name: str) -> Iterator[int]:
    """Run a server command until it prints READY (yields its pid); stop it (SIGTERM)
    afterwards."""
    log_path = folder / f"{name}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        try:
            deadline = time.monotonic() + READY_BOUND
            while b"READY " not in log_path.read_bytes():
                tail = log_path.read_bytes().decode(errors="replace").strip().splitlines()[-3:]
                if process.poll() is not None:
                    raise RuntimeError(f"exited {process.returncode}: {' | '.join(tail)}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"not ready after {READY_BOUND:.0f} s: {' | '.join(tail)}")
                time.sleep(0.05)
            yield process.pid
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def free_port() -> int:
    import socket

    with socket.socket() as probe_socket:
        probe_socket.bind(("127.0.0.1", 0))
        return int(probe_socket.getsockname()[1])


@dataclass
class Subject:
    """A server to measure: how to start it, and (once started) where."""

    title: str
    command: list[str]
    env: dict[str, str]
    port: int
    name: str
    figures: list[Figure] = field(default_factory=list)
    failure: str = ""
    pid: int | None = None


def failure_of(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".replace("\n", " ")[:300]


def measure_all(subjects: list[Subject], args: argparse.Namespace, folder: Path) -> None:
    """Start every server (each its own process), check one round trip on each, then measure
    them in turn, ``args.rounds`` times over: a machine whose load drifts during the run
    weighs on every server alike. A server that fails says why in ``failure``."""
    with contextlib.ExitStack() as servers:
        for subject in subjects:
            if subject.failure:
                continue
            try:
                subject.pid = servers.enter_context(
                    started(subject.command, subject.env, folder, subject.name)
                )
                subject.failure = run(probe(subject.port, args))
            except Exception as error:
                subject.failure = failure_of(error)
        for _ in range(args.rounds):
            for subject in subjects:
                if subject.failure:
                    continue
                try:
                    subject.figures.append(run(drive(subject.port, args, subject.pid)))
                except Exception as error:
                    subject.failure = failure_of(error)


def own_serving(mode: str, port: int, args: argparse.Namespace, *extra: str) -> list[str]:
    return [
        sys.executable, str(Path(__file__).resolve()), mode, f"--port={port}",
        f"--loop={args.loop}", f"--http={args.http}", f"--protocol={args.protocol}", *extra,
    ]  # fmt: skip


def adk_python(args: argparse.Namespace) -> Path:
    spec = importlib.util.spec_from_file_location("cairn_bench_peers", BENCH / "peers.py")
    assert spec is not None and spec.loader is not None
    peers = sys.modules.get(spec.name) or importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = peers  # its dataclasses look their module up
    spec.loader.exec_module(peers)
    return Path(peers.ensure_venv(peers.PEERS["adk"], install=not args.no_install))


def subjects_of(args: argparse.Namespace, folder: Path) -> list[Subject]:
    """The servers of the table, in its order."""
    env = dict(os.environ)
    port = free_port()
    subjects = [
        Subject("client ceiling (trivial server)", own_serving("serve-trivial", port, args), env,
                port, "trivial"),
    ]  # fmt: skip
    for store, title in (("memory", "cairn to_a2a, in memory"), ("sqlite", "cairn to_a2a, SQLite")):
        port = free_port()
        where = "memory" if store == "memory" else str(folder / "cairn.db")
        command = own_serving("serve-cairn", port, args, f"--store={where}")
        subjects.append(Subject(title, command, env, port, f"cairn-{store}"))
    adk = Subject(ADK, [], {}, 0, "adk")
    subjects.append(adk)
    if args.no_peer:
        adk.failure = "not run (--no-peer)"
        return subjects
    try:
        python = adk_python(args)
    except Exception as error:
        adk.failure = f"venv: {error}"
        return subjects
    adk.port = free_port()
    adk.command = [
        str(python), str(BENCH / "peer_adk_a2a.py"), "serve", f"--port={adk.port}",
        "--agent=teller", f"--loop={args.loop}", f"--http={args.http}",
    ]  # fmt: skip
    adk.env = {key: value for key, value in env.items() if key != "PYTHONPATH"}
    return subjects


def rate(subject: Subject) -> float:
    """Round trips per second: the median over the rounds."""
    return statistics.median(figure.per_second for figure in subject.figures)


def cpu_per_round_trip(subject: Subject) -> float | None:
    """The server's CPU ms per round trip: the median over the rounds (None: not read)."""
    found = [figure.cpu_ms for figure in subject.figures if figure.cpu_ms is not None]
    return statistics.median(found) if found and not subject.failure else None


def table(subjects: list[Subject]) -> str:
    adk = next(subject for subject in subjects if subject.title == ADK)
    theirs = rate(adk) if adk.figures and not adk.failure else 0.0
    their_cpu = cpu_per_round_trip(adk)
    header = ["server", "round trips/s", "each round", "median", "p99", "errors",
              "CPU/round trip", "cairn/ADK", "CPU: ADK/cairn", "goal"]  # fmt: skip
    lines = [header]
    failed: dict[int, str] = {}
    for subject in subjects:
        if subject.failure or not subject.figures:
            reason = subject.failure or "no figure"
            failed[len(lines)] = reason if reason.startswith("not run") else f"failed: {reason}"
            lines.append([subject.title])
            continue
        pooled = Figure(times=[took for figure in subject.figures for took in figure.times])
        errors = sum(figure.errors for figure in subject.figures)
        mine = subject.title.startswith("cairn")
        ratio = rate(subject) / theirs if theirs and mine else None
        goal = f">= {GOAL:g}x {'ok' if ratio >= GOAL else 'MISSED'}" if ratio else ""
        cpu = cpu_per_round_trip(subject)
        cpu_ratio = their_cpu / cpu if mine and cpu and their_cpu else None
        lines.append(
            [
                subject.title,
                f"{rate(subject):,.0f}/s",
                " ".join(f"{figure.per_second:,.0f}" for figure in subject.figures),
                f"{pooled.percentile(0.5):.2f} ms" if pooled.times else "-",
                f"{pooled.percentile(0.99):.2f} ms" if pooled.times else "-",
                str(errors),
                f"{cpu:.2f} ms" if cpu else "-",
                f"{ratio:.2f}x" if ratio else "-",
                f"{cpu_ratio:.2f}x" if cpu_ratio else "-",
                goal,
            ]
        )
    widths = [max(len(line[i]) for line in lines if len(line) > i) for i in range(len(header))]
    out = []
    for index, line in enumerate(lines):
        cells = [text.ljust(width) for text, width in zip(line, widths, strict=False)]
        out.append("  ".join([*cells, failed.get(index, "")]))
        if index == 0:
            out.append("  ".join("-" * width for width in widths))
    for subject in subjects:
        errors = [figure.first_error for figure in subject.figures if figure.errors]
        if errors:
            out.append(f"{subject.title}: first error: {errors[0]}")
    return "\n".join(line.rstrip() for line in out)


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", nargs="?", default="bench",
                        choices=("bench", "serve-trivial", "serve-cairn"))  # fmt: skip
    parser.add_argument("--clients", type=int, default=8, help="concurrent connections")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured span per round")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured span first")
    parser.add_argument("--rounds", type=int, default=3, help="every server measured N times")
    parser.add_argument("--protocol", choices=("1.0", "0.3"), default="1.0")
    parser.add_argument("--loop", default="uvloop", help="uvicorn --loop for every server")
    parser.add_argument("--http", default="httptools", help="uvicorn --http for every server")
    parser.add_argument("--quick", action="store_true", help="2 clients, 1 round of 0.5 s")
    parser.add_argument("--no-peer", action="store_true", help="leave google-adk out")
    parser.add_argument("--no-install", action="store_true", help="use an existing ADK venv")
    parser.add_argument("--port", type=int, help="(serve-*) the port")
    parser.add_argument("--store", default="memory", help="(serve-cairn) memory or a file")
    parser.add_argument("--agent", default="teller", help="(serve-cairn) teller or approver")
    args = parser.parse_args()
    if args.quick:
        args.clients, args.seconds, args.warmup, args.rounds = 2, 0.5, 0.2, 1
    return args


def main() -> None:
    args = arguments()
    if args.mode == "serve-trivial":
        load_twins().serve(trivial_app(args.protocol), args.port, args.loop, args.http)
        return
    if args.mode == "serve-cairn":
        app = cairn_app(args.agent, args.store, args.port)
        load_twins().serve(app, args.port, args.loop, args.http)
        return
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="a2a-bench-") as folder:
        subjects = subjects_of(args, Path(folder))
        measure_all(subjects, args, Path(folder))
    method = "SendMessage (A2A 1.0)" if args.protocol == "1.0" else "message/send (A2A 0.3)"
    print(
        f"A2A round trips, JSON-RPC {method}, blocking, one-turn scripted agent; "
        f"{args.clients} clients; {args.rounds} rounds of {args.seconds:g} s per server, each "
        f"after {args.warmup:g} s of warm-up; "
        f"uvicorn --loop {args.loop} --http {args.http}; Python {sys.version.split()[0]}; "
        f"{time.perf_counter() - began:.0f} s"
    )
    print(table(subjects))


if __name__ == "__main__":
    main()
