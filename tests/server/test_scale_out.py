"""Scale-out: two uvicorn workers on one PostgreSQL database serve one session together.

Each client below keeps one connection, so it talks to one worker; clients are opened
until both workers are pinned. Requests for one session alternate between them, run
concurrently (a busy session answers 409 and the client retries), and a review raised
on one worker is answered on the other. The stored log then has every event exactly once.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import httpx
from tests.server.harness import run_body, sse_payloads, uvicorn_server
from tests.support.databases import postgres_database
from tests.support.waiting import BOUND_SECONDS, until

from cairn.sessions import DatabaseSessionService
from cairn.sessions.verify import verify_session


async def pinned(url: str, avoid: set[str]) -> tuple[httpx.AsyncClient, str]:
    """A one-connection client served by a worker not in ``avoid``, and that worker's pid
    (a worker still starting takes no connections: keep opening them until it does)."""
    found: list[tuple[httpx.AsyncClient, str]] = []

    async def served_elsewhere() -> bool:
        limits = httpx.Limits(max_connections=1)
        client = httpx.AsyncClient(base_url=url, limits=limits, timeout=BOUND_SECONDS)
        worker = (await client.get("/list-apps")).headers["x-cairn-worker"]
        if worker not in avoid:
            found.append((client, worker))
            return True
        await client.aclose()
        return False

    await until(served_elsewhere, f"a connection served by a worker other than {avoid}")
    return found[0]


async def send(client: httpx.AsyncClient, session: str, message: str) -> list[dict[str, object]]:
    """Run ``message``, retrying while the other worker's invocation holds the session."""
    answered: list[httpx.Response] = []

    async def not_busy() -> bool:
        response = await client.post("/run", json=run_body("echo", session, message))
        if response.status_code == 409:
            return False
        answered.append(response)
        return True

    await until(not_busy, f"{message!r} finding session {session!r} free")
    (response,) = answered
    assert response.status_code == 200, response.text
    events: list[dict[str, object]] = response.json()
    return events


async def test_two_workers_share_sessions_and_interrupts_on_postgres() -> None:
    async with postgres_database() as url:
        env = {"CAIRN_STORE": url}
        with uvicorn_server(env, workers=2) as base:
            first, first_worker = await pinned(base, set())
            second, second_worker = await pinned(base, {first_worker})
            clients = [first, second]
            try:
                await first.post("/apps/echo/users/ada/sessions", json={"sessionId": "s"})
                # Alternating, one at a time: each worker sees the other's events.
                for turn in range(4):
                    client = clients[turn % 2]
                    (reply,) = await send(client, "s", f"seq-{turn}")
                    assert reply["actions"]["stateDelta"] == {"turns": turn + 1}  # type: ignore[index]
                    assert (await client.get("/apps/echo/users/ada/sessions/s")).headers[
                        "x-cairn-worker"
                    ] in {first_worker, second_worker}
                # Concurrently from both workers: the lease lets one invocation in at a time.
                await asyncio.gather(*(send(clients[i % 2], "s", f"par-{i}") for i in range(10)))
                served = {
                    (await c.get("/apps/echo/users/ada/sessions/s")).headers["x-cairn-worker"]
                    for c in clients
                }
                assert served == {first_worker, second_worker}

                # An input request raised on the first worker, answered on the second.
                await first.post("/apps/review/users/ada/sessions", json={"sessionId": "r"})
                started = await first.post("/run", json=run_body("review", "r", "hello"))
                assert started.headers["x-cairn-worker"] == first_worker
                interrupts_url = "/cairn/apps/review/users/ada/sessions/r/interrupts"
                (review,) = (await second.get(interrupts_url)).json()
                answered = await second.post(
                    f"{interrupts_url}/{review['id']}", json={"response": "approve"}
                )
                assert answered.headers["x-cairn-worker"] == second_worker
                outputs = [json.loads(p).get("output") for p in sse_payloads(answered.text)]
                assert "SENT: Hello team, hello" in outputs
                assert (await first.get(interrupts_url)).json() == []
            finally:
                for client in clients:
                    await client.aclose()

        store = DatabaseSessionService(url)
        try:
            session = await store.get_session(app_name="echo", user_id="ada", session_id="s")
            assert session is not None
            texts = [e.content.parts[0].text for e in session.events if e.content is not None]
            sent = [f"seq-{i}" for i in range(4)] + [f"par-{i}" for i in range(10)]
            assert Counter(t for t in texts if not t.startswith("echo: ")) == Counter(sent)
            assert Counter(t for t in texts if t.startswith("echo: ")) == Counter(
                f"echo: {m}" for m in sent
            )
            assert len({e.id for e in session.events}) == len(session.events) == 28
            # Each invocation is its message then its reply: no two ever interleaved.
            for user, reply in zip(session.events[::2], session.events[1::2], strict=True):
                assert user.invocation_id == reply.invocation_id and user.author == "user"
            assert session.state["turns"] == 14
            assert await verify_session(store, app_name="echo", user_id="ada", session_id="s") == []
            review = await store.get_session(app_name="review", user_id="ada", session_id="r")
            assert review is not None
            paths = [p for e in review.events for p in e.node_info.output_for or []]
            assert Counter(paths)["review@1/draft@1"] == 1  # nothing ran twice
        finally:
            await store.close()
