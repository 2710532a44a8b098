"""A client that leaves does not stop its invocation: it runs to its end, every event
committed, and the session's log shows it; the server's shutdown ends what still runs.

The ``gate`` app's tool blocks until a file the test names exists, so the client can
leave while the invocation is surely running, and the test decides when it may go on.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.genai import types
from tests.server.harness import FAULT_AGENTS, asgi_client, run_body, server_app
from tests.support.waiting import BOUND_SECONDS, until, wait_until

SESSION = "/apps/gate/users/ada/sessions/{}"


def texts(events: list[dict[str, Any]]) -> list[str]:
    return [
        part["text"]
        for event in events
        for part in (event.get("content") or {}).get("parts", [])
        if "text" in part
    ]


def calls(events: list[dict[str, Any]]) -> list[str]:
    return [
        part["functionCall"]["name"]
        for event in events
        for part in (event.get("content") or {}).get("parts", [])
        if "functionCall" in part
    ]


def assert_ran_to_its_end(client: httpx.Client, session: str) -> None:
    """The session's log ends with the invocation's final reply, and folds to its state."""

    def events() -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = client.get(SESSION.format(session)).json()["events"]
        return found

    wait_until(lambda: "released" in texts(events()), f"session {session!r} ending 'released'")
    log = events()
    assert calls(log) == ["wait_for_release"]
    assert texts(log)[-1] == "released" and log[-1]["author"] == "gate"
    assert len({event["invocationId"] for event in log}) == 1
    verified = client.get(f"/cairn{SESSION.format(session)}/verify").json()
    assert verified == {"ok": True, "differences": []}


def test_a_stream_whose_client_left_runs_to_its_end(gated: str, tmp_path: Path) -> None:
    flag = tmp_path / "release"
    with httpx.Client(base_url=gated, timeout=BOUND_SECONDS) as client:
        client.post("/apps/gate/users/ada/sessions", json={"sessionId": "sse"})
        body = run_body("gate", "sse", str(flag))
        with client.stream("POST", "/run_sse", json=body) as response:
            assert response.status_code == 200
            first = next(line for line in response.iter_lines() if line.startswith("data: "))
        # The connection is closed mid-stream: the tool is still waiting for the flag.
        assert calls([json.loads(first.removeprefix("data: "))]) == ["wait_for_release"]
        flag.touch()
        assert_ran_to_its_end(client, "sse")


async def test_a_run_whose_client_left_runs_to_its_end(gated: str, tmp_path: Path) -> None:
    flag = tmp_path / "release"
    async with httpx.AsyncClient(base_url=gated, timeout=BOUND_SECONDS) as client:
        await client.post("/apps/gate/users/ada/sessions", json={"sessionId": "run"})
        request = asyncio.create_task(client.post("/run", json=run_body("gate", "run", str(flag))))

        async def waiting() -> bool:
            events = (await client.get(SESSION.format("run"))).json()["events"]
            return calls(events) == ["wait_for_release"]

        await until(waiting, "the gate's tool call committed")
        request.cancel()  # the client gives up: its connection is closed
        with pytest.raises(asyncio.CancelledError):
            await request
    flag.touch()
    with httpx.Client(base_url=gated, timeout=BOUND_SECONDS) as client:
        assert_ran_to_its_end(client, "run")


async def test_shutdown_ends_an_invocation_nobody_listens_to(tmp_path: Path) -> None:
    flag = tmp_path / "never-released"
    async with asgi_client(agents_dir=FAULT_AGENTS) as api:
        context = server_app(api).state.cairn
        await api.post("/apps/gate/users/ada/sessions", json={"sessionId": "s"})
        runner = await context.runner("gate")
        message = types.Content(role="user", parts=[types.Part(text=str(flag))])
        invocation = context.invoke(
            runner.run_async(user_id="ada", session_id="s", new_message=message)
        )
        invocation.detach()  # as when its client left

        async def waiting() -> bool:
            events = (await api.get(SESSION.format("s"))).json()["events"]
            return calls(events) == ["wait_for_release"]

        await until(waiting, "the gate's tool call committed")
        assert context.invocations == {invocation.task}
    # The app shut down (its lifespan ended) while the tool still waited.
    assert invocation.task.cancelled() and context.invocations == set()
