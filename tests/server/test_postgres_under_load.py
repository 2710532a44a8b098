"""A real server on PostgreSQL, hammered by clients that disconnect, then told to stop.

Clients that hang up mid-request (right after sending, once the answer started, after the
first streamed event) cancel the server's work at whatever point it is; hostile ids fail
inside a transaction; 32 clients run one session at once. None of it may leave a database
connection inside a transaction (which would hold lease rows and wedge every later run),
answer a busy session with anything but 409 (asked to reject) or a run in its turn (the
default, waiting in line), or keep a session busy afterwards. SIGTERM
with invocations still running stops the server within a bound, and those invocations end
as cancelled ones do: leases released, the log consistent, the sessions usable at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from google.genai import types
from sqlalchemy.engine import make_url
from tests.server.agents.echo.agent import root_agent as echo_agent
from tests.server.harness import ROOT, free_port, run_body, uvicorn_server
from tests.support.databases import postgres_database
from tests.support.faults import open_transactions
from tests.support.waiting import until

from cairn import Runner
from cairn.sessions import DatabaseSessionService
from cairn.sessions.sql.engines import IDLE_PING_AFTER
from cairn.sessions.verify import verify_session

GRACE = ["--timeout-graceful-shutdown", "1"]
"""Requests in flight at SIGTERM get one second, then are cancelled."""
BOUND = 60.0
"""Seconds any condition below may take to hold: generous, the machine may be loaded."""


async def eventually(condition: Callable[[], Awaitable[bool]], what: str) -> None:
    await until(condition, what, bound=BOUND)


async def no_open_transaction(url: str) -> bool:
    return await open_transactions(url) == []


async def hang_up(port: int, path: str, body: dict[str, Any], after: bytes | None) -> None:
    """Send the request, read until ``after`` appears (None: read nothing), then reset."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    payload = json.dumps(body).encode()
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: cairn\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n".encode()
        + payload
    )
    await writer.drain()
    if after is not None:
        seen = b""
        while after not in seen:
            chunk = await reader.read(4096)
            if not chunk:
                break
            seen += chunk
    writer.transport.abort()


async def run_once_free(client: httpx.AsyncClient, session: str) -> None:
    """POST /run answers 200, once an invocation a hung-up client left has finished."""

    async def served() -> bool:
        response = await client.post("/run", json=run_body("echo", session, "again"))
        assert response.status_code in (200, 409), response.text
        return response.status_code == 200

    await eventually(served, f"session {session} is served again")


async def test_disconnects_hostile_ids_and_a_crowd_on_one_session_leave_nothing_open() -> None:
    async with postgres_database() as url:  # type: ignore[attr-defined]
        with uvicorn_server({"CAIRN_STORE": url}) as base:
            port = int(base.rsplit(":", 1)[1])
            async with httpx.AsyncClient(base_url=base, timeout=BOUND) as client:
                sessions = [f"s{i}" for i in range(30)]
                for session in ["one", *sessions]:
                    created = await client.post(
                        "/apps/echo/users/ada/sessions", json={"sessionId": session}
                    )
                    assert created.status_code == 200, created.text

                # Ids that fail inside a transaction on PostgreSQL, among real work.
                hostile = [
                    client.post("/run", json={**run_body("echo", "one", "x"), "userId": "a\0b"})
                    for _ in range(5)
                ]
                await asyncio.gather(*hostile)

                # A crowd on one session asking to be rejected when it is busy: one runs, the
                # others hear it is busy.
                rejecting = {"multitaskStrategy": "reject"}
                crowd = await asyncio.gather(
                    *(
                        client.post("/run", json=run_body("echo", "one", f"c{i}", **rejecting))
                        for i in range(32)
                    )
                )
                statuses = sorted(response.status_code for response in crowd)
                assert set(statuses) <= {200, 409}, [r.text for r in crowd if r.status_code >= 500]
                assert 200 in statuses

                # Clients that hang up at different points, on 30 sessions at once, three rounds,
                # each after a pause long enough for pooled connections to be pinged when reused.
                for after in (None, b"HTTP/1.1", b"data: "):
                    paused = time.monotonic()

                    async def idle_long_enough(since: float = paused) -> bool:
                        return time.monotonic() - since > IDLE_PING_AFTER + 0.5

                    await eventually(idle_long_enough, "pooled connections sat idle")
                    await asyncio.gather(
                        *(
                            hang_up(port, "/run_sse", run_body("echo", session, "bye"), after)
                            for session in sessions
                        ),
                        *(
                            hang_up(port, "/run", run_body("echo", session, "bye"), after)
                            for session in sessions[:10]
                        ),
                    )
                await eventually(lambda: no_open_transaction(url), "no open transaction")

                # Every session runs again, and still nothing is left inside a transaction.
                await asyncio.gather(*(run_once_free(client, s) for s in ["one", *sessions]))
                assert await open_transactions(url) == []
                # A crowd waiting in line (the default): every one of them runs.
                crowd = await asyncio.gather(
                    *(client.post("/run", json=run_body("echo", "one", f"d{i}")) for i in range(16))
                )
                assert {response.status_code for response in crowd} == {200}, [
                    r.text for r in crowd if r.status_code != 200
                ]
        store = DatabaseSessionService(url)
        for session in ["one", *sessions]:
            assert (
                await verify_session(store, app_name="echo", user_id="ada", session_id=session)
                == []
            )
        await store.close()


WAITER = '''
"""Echoes, except that "hang" makes it wait forever (an invocation still running)."""
import asyncio

from google.genai import types

from cairn import BaseAgent, Context, Event


class Waiter(BaseAgent):
    async def _run_async_impl(self, ctx):
        step = Context(ctx)
        text = ctx.user_content.parts[0].text or ""
        step.state["turns"] = step.state.get("turns", 0) + 1
        yield Event(
            message=types.Content(role="model", parts=[types.Part(text=f"got: {text}")]),
            actions=step.actions,
        )
        if text == "hang":
            await asyncio.Event().wait()


root_agent = Waiter(name="waiter")
'''


async def leases(url: str) -> int:
    parsed = make_url(url)
    connection = await asyncpg.connect(
        host=parsed.host, port=parsed.port, user=parsed.username, database=parsed.database
    )
    try:
        count: int = await connection.fetchval(
            "SELECT count(*) FROM cairn_leases WHERE holder <> ''"  # a released lease keeps its row
        )
    finally:
        await connection.close()
    return count


async def test_sigterm_stops_the_server_in_bounded_time_and_ends_running_invocations_cleanly(
    tmp_path: Path,
) -> None:
    agents = tmp_path / "agents"
    (agents / "waiter").mkdir(parents=True)
    (agents / "waiter" / "agent.py").write_text(WAITER, encoding="utf-8")
    async with postgres_database() as url:  # type: ignore[attr-defined]
        port = free_port()
        serve = ["api-server", str(agents), "--port", str(port), "--store", url, *GRACE]
        process = subprocess.Popen(
            [sys.executable, "-m", "cairn.cli", *serve],
            cwd=ROOT,
            env=os.environ.copy(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            async with httpx.AsyncClient(base_url=base, timeout=BOUND) as client:

                async def up() -> bool:
                    assert process.poll() is None, "the server exited"
                    try:
                        return (await client.get("/list-apps")).status_code == 200
                    except httpx.HTTPError:
                        return False

                await eventually(up, "the server answers")
                sessions = [f"h{i}" for i in range(8)]
                for session in sessions:
                    await client.post(
                        "/apps/waiter/users/ada/sessions", json={"sessionId": session}
                    )
                hanging = [
                    asyncio.create_task(
                        client.post(
                            "/run_sse" if i % 2 else "/run",
                            json=run_body("waiter", session, "hang"),
                        )
                    )
                    for i, session in enumerate(sessions)
                ]

                async def all_running() -> bool:
                    return await leases(url) == len(sessions)

                await eventually(all_running, "every invocation holds its session")
                process.send_signal(signal.SIGTERM)

                async def exited() -> bool:
                    return process.poll() is not None

                await eventually(exited, "SIGTERM stops the server")
                await asyncio.gather(*hanging, return_exceptions=True)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()

        # Ended cleanly: no lease left, nothing inside a transaction, the logs fold.
        assert await leases(url) == 0
        assert await open_transactions(url) == []
        store = DatabaseSessionService(url)
        runner = Runner(app_name="waiter", agent=echo_agent, session_service=store)
        for session in sessions:
            assert (
                await verify_session(store, app_name="waiter", user_id="ada", session_id=session)
                == []
            )
            events = [
                event
                async for event in runner.run_async(
                    user_id="ada", session_id=session, new_message=types.UserContent("after")
                )
            ]
            assert events
        await store.close()
