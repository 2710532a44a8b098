"""The API as deployed: a real uvicorn process (``--factory cairn.server:app_from_env``)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.server.harness import run_body, sse_payloads, uvicorn_server
from tests.support.waiting import BOUND_SECONDS

KEY = {"X-API-Key": "live-key"}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("live")


@pytest.fixture(scope="module")
def live(home: Path) -> Iterator[str]:
    env = {
        "CAIRN_STORE": str(home / "sessions.db"),
        "CAIRN_API_KEY": "live-key",
        "CAIRN_MAX_BODY_BYTES": "4000",
    }
    with uvicorn_server(env, log=home / "server.log") as url:
        yield url
    log = (home / "server.log").read_text()
    assert '"path": "/run_sse"' in log  # one JSON line per request on stderr


def test_auth_over_http(live: str) -> None:
    assert httpx.get(live + "/list-apps", timeout=BOUND_SECONDS).status_code == 401
    assert (
        httpx.get(
            live + "/list-apps", headers={"X-API-Key": "wrong"}, timeout=BOUND_SECONDS
        ).status_code
        == 401
    )
    response = httpx.get(live + "/list-apps", headers=KEY, timeout=BOUND_SECONDS)
    assert response.json() == ["clerk", "echo", "memo", "review", "streamer"]
    worker = response.headers["x-cairn-worker"]
    assert worker.isdigit() and int(worker) != os.getpid()
    assert httpx.get(live + "/openapi.json", timeout=BOUND_SECONDS).status_code == 200
    health = httpx.get(live + "/health", timeout=BOUND_SECONDS)  # a probe sends no key
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    assert httpx.get(live + "/version", timeout=BOUND_SECONDS).json()["language"] == "python"


def test_sse_streams_events_as_they_come(live: str) -> None:
    with httpx.Client(base_url=live, headers=KEY, timeout=BOUND_SECONDS) as client:
        client.post("/apps/streamer/users/ada/sessions", json={"sessionId": "s"})
        body = run_body("streamer", "s", "hi", streaming=True)
        with client.stream("POST", "/run_sse", json=body) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            lines = [line for line in response.iter_lines() if line.startswith("data: ")]
        events = [json.loads(line.removeprefix("data: ")) for line in lines]
        assert [e.get("partial", False) for e in events] == [True, True, True, False]
        stored = client.get("/apps/streamer/users/ada/sessions/s").json()["events"]
        assert stored[-1] == events[-1]


def test_sse_error_event_over_http(live: str, home: Path) -> None:
    with httpx.Client(base_url=live, headers=KEY, timeout=BOUND_SECONDS) as client:
        client.post("/apps/echo/users/ada/sessions", json={"sessionId": "boom"})
        response = client.post("/run_sse", json=run_body("echo", "boom", "fail"))
    (payload,) = sse_payloads(response.text)
    error = json.loads(payload)
    assert set(error) == {"error", "errorId"} and "told to fail" not in response.text
    # The server's log (stderr) has the detail, with its traceback, under that id.
    log = (home / "server.log").read_text()
    logged = log[log.index(f"error {error['errorId']}: ") :]
    assert logged.startswith(f"error {error['errorId']}: RuntimeError: the echo agent was told")
    assert "Traceback (most recent call last)" in logged


def test_body_limit_over_http_declared_and_chunked(live: str) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"sessionId": "big", "state": {"k": "'
        for _ in range(50):
            yield b"x" * 100
        yield b'"}}'

    with httpx.Client(base_url=live, headers=KEY, timeout=BOUND_SECONDS) as client:
        declared = client.post("/run", json=run_body("echo", "s", "x" * 5000))
        assert declared.status_code == 413
        streamed = client.post(
            "/apps/echo/users/ada/sessions",
            content=chunks(),
            headers={"content-type": "application/json"},
        )
        assert streamed.status_code == 413 and "4,000 bytes" in streamed.json()["detail"]
        assert client.get("/apps/echo/users/ada/sessions/big").status_code == 404


def test_a_conversation_is_stored_in_the_sqlite_file(live: str) -> None:
    with httpx.Client(base_url=live, headers=KEY, timeout=BOUND_SECONDS) as client:
        client.post("/apps/echo/users/ada/sessions", json={"sessionId": "kept"})
        client.post("/run", json=run_body("echo", "kept", "hi"))
        assert client.get("/cairn/apps/echo/users/ada/sessions/kept").json()["eventCount"] == 2
