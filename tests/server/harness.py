"""The API under test: in this process (httpx over ASGI) or as a real uvicorn process."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from tests.support.waiting import BOUND_SECONDS, wait_until

from cairn.server import ServerSettings, create_app

AGENTS = Path(__file__).resolve().parent / "agents"
FAULT_AGENTS = Path(__file__).resolve().parent / "fault_agents"
"""Apps that fail the server's way (``leaky``) or block until a test releases them (``gate``)."""
ROOT = Path(__file__).resolve().parents[2]


def text(value: str) -> dict[str, Any]:
    """A user message (``Content`` JSON) with one text part."""
    return {"role": "user", "parts": [{"text": value}]}


def run_body(app: str, session: str, message: str | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"appName": app, "userId": "ada", "sessionId": session, **extra}
    if message is not None:
        body["newMessage"] = text(message)
    return body


def sse_payloads(body: str) -> list[str]:
    """The ``data:`` payloads of a ``text/event-stream`` body, in order."""
    return [
        block.removeprefix("data: ") for block in body.split("\n\n") if block.startswith("data: ")
    ]


@contextlib.asynccontextmanager
async def asgi_client(
    *, root_path: str = "", mount: str = "", hook: Any = None, **settings: Any
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of ``create_app`` (running its lifespan), by default on an in-memory store;
    served under an ASGI ``root_path``, or mounted at ``mount`` in another FastAPI app, with
    ``hook`` as its ``authenticate``. ``client.app`` is the cairn app; request paths are
    relative to where it is reached."""
    settings.setdefault("agents_dir", AGENTS)
    settings.setdefault("store", "memory://")
    app = create_app(ServerSettings(**settings), authenticate=hook)
    served: FastAPI = app
    if mount:
        served = FastAPI()
        served.mount(mount, app)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=served, root_path=root_path)
        base_url = f"http://cairn{root_path}{mount}"
        async with httpx.AsyncClient(transport=transport, base_url=base_url) as client:
            client.app = app  # type: ignore[attr-defined]
            yield client


def server_app(client: httpx.AsyncClient) -> FastAPI:
    app: FastAPI = client.app  # type: ignore[attr-defined]
    return app


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def uvicorn_server(
    env: dict[str, str],
    *,
    workers: int = 1,
    log: Path | None = None,
    args: Sequence[str] = (),
) -> Iterator[str]:
    """``uvicorn --factory cairn.server:app_from_env`` on a free port (with more uvicorn
    ``args``, e.g. ``--root-path``); yields its base URL."""
    port = free_port()
    command = [
        sys.executable, "-m", "uvicorn", "--factory", "cairn.server:app_from_env",
        "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers), *args,
    ]  # fmt: skip
    full_env = {**os.environ, "CAIRN_AGENTS_DIR": str(AGENTS), **env}
    output = log.open("wb") if log is not None else subprocess.DEVNULL
    process = subprocess.Popen(
        command, env=full_env, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"uvicorn exited with {process.returncode}")
        try:
            return httpx.get(url + "/openapi.json", timeout=BOUND_SECONDS).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(answers, f"uvicorn on {url} answering GET /openapi.json")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=BOUND_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log is not None and not isinstance(output, int):
            output.close()
