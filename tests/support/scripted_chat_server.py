"""A real local HTTP server speaking OpenAI's chat completions wire format, with scripted
replies: what the model adapters' tests talk to through a real socket (and, for LiteLlm,
through litellm's own HTTP client) when the point is an exact reply — a tool call, a 503,
a stream that breaks off — rather than what a real model happens to say.

Run as its own uvicorn process by :func:`scripted_chat_server`. A test queues replies with
:meth:`ScriptedChatServer.script` and reads back every request the server was sent with
:meth:`ScriptedChatServer.requests`. A reply is one of:

- ``{"completion": {...}}``: a JSON chat completion (``id``/``object``/``created`` filled in);
- ``{"chunks": [{...}, ...]}``: a server-sent event stream of chunks, then ``[DONE]``
  (``"done": false`` leaves the ``[DONE]`` out, as a server that fails mid-stream does);
- ``{"status": 503, "body": {...}, "headers": {...}}``: an HTTP error;
- ``{"json": {...}}`` or ``{"lines": [{...}, ...]}``: a JSON body or newline-delimited JSON
  as given, for other wire formats (Ollama's ``/api/chat``).

With the queue empty the server answers 500, naming the request it had no reply for.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

ROOT = Path(__file__).resolve().parents[2]

app = FastAPI()
_replies: list[dict[str, Any]] = []
_requests: list[dict[str, Any]] = []


@app.put("/script")
async def put_script(request: Request) -> dict[str, int]:
    replies = await request.json()
    _replies[:] = list(replies)
    _requests.clear()
    return {"queued": len(_replies)}


@app.get("/requests")
async def get_requests() -> list[dict[str, Any]]:
    return _requests


@app.get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}


@app.get("/v1/models")
async def models() -> dict[str, Any]:
    return {"object": "list", "data": [{"id": "scripted", "object": "model"}]}


@app.post("/api/show")
async def ollama_show() -> dict[str, Any]:
    """Ollama's model details, which litellm looks up beside a call (not a scripted reply)."""
    return {"model_info": {}, "capabilities": ["completion", "tools"], "template": ""}


@app.post("/{path:path}")
async def reply(path: str, request: Request) -> Response:
    """Any POST (chat completions, and the other wire formats litellm speaks, such as
    Ollama's ``/api/chat``) is recorded and answered with the next scripted reply."""
    body = await request.json()
    headers = {name: value for name, value in request.headers.items()}
    _requests.append({"path": request.url.path, "body": body, "headers": headers})
    if not _replies:
        return JSONResponse(
            {"error": {"message": f"no scripted reply for request #{len(_requests)}"}},
            status_code=500,
        )
    scripted = _replies.pop(0)
    if "status" in scripted:
        return JSONResponse(
            scripted.get("body", {}),
            status_code=scripted["status"],
            headers=scripted.get("headers"),
        )
    if "json" in scripted:
        return JSONResponse(scripted["json"])
    if "lines" in scripted:
        lines = "".join(json.dumps(line) + "\n" for line in scripted["lines"])
        return Response(lines, media_type="application/x-ndjson")
    model = body.get("model", "scripted")
    if "completion" in scripted:
        completion = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            **scripted["completion"],
        }
        return JSONResponse(completion)
    return StreamingResponse(
        _events(scripted["chunks"], model, done=scripted.get("done", True)),
        media_type="text/event-stream",
    )


async def _events(chunks: list[dict[str, Any]], model: str, *, done: bool) -> AsyncIterator[str]:
    for chunk in chunks:
        full = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            **chunk,
        }
        yield f"data: {json.dumps(full)}\n\n"
    if done:
        yield "data: [DONE]\n\n"


class ScriptedChatServer:
    """A client of the running server: its base URL, its script and what it was sent."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.base_url = f"{url}/v1"

    def script(self, *replies: dict[str, Any]) -> None:
        """Queue ``replies`` (and forget earlier requests)."""
        httpx.put(f"{self.url}/script", json=list(replies), timeout=30).raise_for_status()

    def requests(self) -> list[dict[str, Any]]:
        """Every request sent since the last :meth:`script`: ``path``, ``body``, ``headers``."""
        response = httpx.get(f"{self.url}/requests", timeout=30)
        response.raise_for_status()
        found: list[dict[str, Any]] = response.json()
        return found

    def bodies(self) -> list[dict[str, Any]]:
        return [request["body"] for request in self.requests()]


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def scripted_chat_server() -> Iterator[ScriptedChatServer]:
    """The server in its own uvicorn process on a free loopback port, until the block ends."""
    from tests.support.waiting import BOUND_SECONDS, wait_until

    port = _free_port()
    command = [
        sys.executable, "-m", "uvicorn", "tests.support.scripted_chat_server:app",
        "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=dict(os.environ))
    url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"the scripted chat server exited with {process.returncode}")
        try:
            return httpx.get(f"{url}/health", timeout=BOUND_SECONDS).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(answers, f"the scripted chat server on {url} answering GET /health")
        yield ScriptedChatServer(url)
    finally:
        process.terminate()
        try:
            process.wait(timeout=BOUND_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
