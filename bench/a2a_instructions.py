"""Machine instructions per A2A ``SendMessage`` to cairn's ``to_a2a``, counted by callgrind.

    .venv/bin/python bench/a2a_instructions.py                 # 200 messages, in memory
    .venv/bin/python bench/a2a_instructions.py --messages 400 --store /tmp/a.db
    .venv/bin/python bench/a2a_instructions.py --floor         # the a2a-sdk alone

bench/a2a_round_trips.py measures time, which on a shared or virtual machine moves by 10%
or more from one run to the next: too much to see a change of a few percent. This counts
what the server's process executes for one message instead, which is the same from run to
run (to 0.1%), so two commits can be compared one after the other on any machine.

How: the server's ASGI app (``to_a2a`` of bench/a2a_twins.py's ``teller``, the same app the
round-trip bench serves) runs in this process under valgrind's callgrind, and is called
directly (no sockets, no uvicorn) with the round-trip bench's request, eight at a time.
Instrumentation is switched on (``callgrind_control``) only after startup and a warm-up,
and off after the measured messages; the figure is the instructions counted in between,
divided by the messages. ``--floor`` serves the same routes with an a2a-sdk request
handler that answers a fixed completed task at once: what the protocol costs without
any agent runtime.

Needs valgrind (Debian: ``apt install valgrind``); under it Python runs ~50x slower, so
200 messages take about half a minute. It prints the figure; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
CONCURRENT = 8


def round_trips_module() -> Any:
    if "cairn_bench_rt" in sys.modules:
        return sys.modules["cairn_bench_rt"]
    spec = importlib.util.spec_from_file_location("cairn_bench_rt", BENCH / "a2a_round_trips.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def floor_app() -> Any:
    """The a2a-sdk's routes (as cairn mounts them) around a handler that answers at once."""
    from a2a import types as a2a_types
    from a2a.server.request_handlers import RequestHandler
    from starlette.applications import Starlette

    from cairn.a2a.routes import a2a_routes

    text = "teller heard: hello"

    async def on_message_send(self: Any, params: Any, context: Any) -> Any:
        message = params.message
        task_id, context_id = str(uuid.uuid4()), str(uuid.uuid4())
        asked = a2a_types.Message(
            message_id=message.message_id,
            context_id=context_id,
            task_id=task_id,
            role=a2a_types.Role.ROLE_USER,
            parts=list(message.parts),
        )
        answer = a2a_types.Message(
            message_id=str(uuid.uuid4()),
            role=a2a_types.Role.ROLE_AGENT,
            parts=[a2a_types.Part(text=text)],
        )
        return a2a_types.Task(
            id=task_id,
            context_id=context_id,
            status=a2a_types.TaskStatus(state=a2a_types.TaskState.TASK_STATE_COMPLETED),
            artifacts=[
                a2a_types.Artifact(artifact_id=str(uuid.uuid4()), parts=[a2a_types.Part(text=text)])
            ],
            history=[asked, answer],
        )

    async def unused(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    methods: dict[str, Any] = {name: unused for name in RequestHandler.__abstractmethods__}
    methods["on_message_send"] = on_message_send
    handler_class = type("FloorHandler", (RequestHandler,), methods)
    card = a2a_types.AgentCard(name="floor", description="answers at once", version="1")
    return Starlette(routes=a2a_routes(handler_class(), card))


async def send(app: Any, check: Any) -> None:
    """One JSON-RPC ``SendMessage`` (A2A 1.0, blocking) straight into the ASGI app."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {
                    "messageId": str(uuid.uuid4()),
                    "role": "ROLE_USER",
                    "parts": [{"text": "hello"}],
                },
                "configuration": {"blocking": True},
            },
        }
    ).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"a2a-version", b"1.0"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
        "state": {},
    }
    delivered = False
    never = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await never.wait()  # no disconnect: the answer is awaited
        return {"type": "http.disconnect"}

    answer: dict[str, Any] = {"status": 0, "body": b""}

    async def reply(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
        elif message["type"] == "http.response.body":
            answer["body"] += message.get("body", b"")

    await app(scope, receive, reply)
    if not check(answer["status"], answer["body"]):
        raise RuntimeError(f"not a completed task: {answer['status']} {answer['body'][:300]!r}")


def callgrind(switch: str) -> None:
    subprocess.run(["callgrind_control", "-i", switch, str(os.getpid())], check=True,
                   capture_output=True)  # fmt: skip


async def measure(args: argparse.Namespace) -> None:
    """Run under callgrind: start the app, warm up, count ``args.messages`` messages."""
    bench = round_trips_module()
    app = floor_app() if args.floor else bench.cairn_app("teller", args.store, 9)
    check = bench.answer_is_good("1.0")

    async def client(count: int) -> None:
        for _ in range(count):
            await send(app, check)

    async with app.router.lifespan_context(app):
        await asyncio.gather(*(client(10) for _ in range(CONCURRENT)))
        callgrind("on")
        await asyncio.gather(*(client(args.messages // CONCURRENT) for _ in range(CONCURRENT)))
        callgrind("off")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=200, help="messages counted")
    parser.add_argument("--store", default="memory", help="memory or a SQLite file")
    parser.add_argument("--floor", action="store_true", help="the a2a-sdk alone")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.messages -= args.messages % CONCURRENT
    if args.inside:
        round_trips_module().run(measure(args))  # on uvloop, as the served app runs
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("needs valgrind and callgrind_control on PATH (Debian: apt install valgrind)")
    with tempfile.TemporaryDirectory(prefix="a2a-instructions-") as folder:
        out = Path(folder) / "callgrind.out"
        command = [
            "valgrind", "--tool=callgrind", "--instr-atstart=no",
            f"--callgrind-out-file={out}", sys.executable, __file__, "--inside",
            f"--messages={args.messages}", f"--store={args.store}",
            *(["--floor"] if args.floor else []),
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"the measured run failed ({done.returncode}):\n{done.stderr[-2000:]}")
        totals = [line for line in out.read_text().splitlines() if line.startswith("totals:")]
        counted = int(totals[0].split()[1])
    subject = "a2a-sdk floor" if args.floor else f"cairn to_a2a, {args.store}"
    print(
        f"{subject}: {counted / args.messages:,.0f} instructions per SendMessage "
        f"({args.messages} messages, {CONCURRENT} at a time, callgrind)"
    )


if __name__ == "__main__":
    main()
