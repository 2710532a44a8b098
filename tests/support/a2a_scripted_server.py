"""A real A2A server (a2a-sdk 1.3: its request handler, task store and routes) whose agent
follows a script: what ``RemoteA2aAgent``'s tests talk to over a loopback socket.

Run as its own uvicorn process by :func:`a2a_scripted_server`; a test queues replies with
:meth:`ScriptedA2aServer.script` and reads back every message the server received with
:meth:`ScriptedA2aServer.received`. Each message the agent executes takes the next reply:

- ``{"answer": "text"}``: the task completes with one artifact holding the text;
- ``{"message": "text"}``: a bare ``Message`` answers, no task;
- ``{"stream": ["a", "b"]}``: a working status with a message, then the chunks of one
  artifact (each appended to the last), then the task completes;
- ``{"ask": "prompt"}``: the task waits for input (``input-required``), the prompt as
  its status message; ``{"auth": "prompt"}`` the same in ``auth-required``;
- ``{"ask_call": {"name": ..., "args": ..., "id": ...}}``: ``input-required`` whose status
  message is a long-running function call as ADK writes it (a data part);
- ``{"fail": "reason"}``: the task fails, the reason as its status message;
- ``{"raise": "text"}``: the agent raises (the SDK fails the task);
- ``"hold": true`` beside any of those: the agent first waits until ``POST /release``
  (a test kills the client while the remote still works), after marking the task working.

The replies an answer gets echo it: ``{"answer": "{input}"}`` puts the received text in.
With the queue empty the agent answers ``"no script"``. ``POST /control/reset`` (a test's
start) forgets the script, what was received and the messageIds seen. Options: ``--no-streaming``
(the card declares no streaming), ``--dedup`` (the card declares cairn's idempotent
message extension and a repeated messageId answers the task the first one made, without
running the agent again), ``--rest-first`` (the card offers HTTP+JSON before JSON-RPC),
``--status 503`` (every A2A request answers that HTTP status), ``--card-host localhost``
(the card names its endpoints on that host).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import httpx
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
    TaskStatus,
)
from google.protobuf import json_format, struct_pb2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from cairn.a2a.agent.card_resolution import IDEMPOTENT_MESSAGE_ID_EXTENSION

ROOT = Path(__file__).resolve().parents[2]

IDEMPOTENT_MESSAGES = IDEMPOTENT_MESSAGE_ID_EXTENSION
"""The card extension saying a repeated messageId never runs twice (what cairn's client
looks for before it resends after a crash)."""

_script: list[dict[str, Any]] = []
_received: list[dict[str, Any]] = []
_requests: list[dict[str, Any]] = []
_executed: list[str] = []
_release = asyncio.Event()


def _text_of(message: Message) -> str:
    return "\n".join(part.text for part in message.parts if part.WhichOneof("content") == "text")


def _record(params: SendMessageRequest, method: str) -> None:
    message = params.message
    data = [
        json_format.MessageToDict(part.data)
        for part in message.parts
        if part.WhichOneof("content") == "data"
    ]
    _received.append(
        {
            "method": method,
            "messageId": message.message_id,
            "taskId": message.task_id,
            "contextId": message.context_id,
            "text": _text_of(message),
            "data": data,
            "metadata": [json_format.MessageToDict(p.metadata) for p in message.parts],
            "requestMetadata": json_format.MessageToDict(params.metadata),
        }
    )


def _agent_message(context_id: str, task_id: str, *parts: Part) -> Message:
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_AGENT,
        context_id=context_id,
        task_id=task_id,
        parts=list(parts),
    )


def _data_part(data: dict[str, Any], metadata: dict[str, Any]) -> Part:
    part = Part(metadata=metadata)
    part.data.struct_value.CopyFrom(json_format.ParseDict(data, struct_pb2.Struct()))
    return part


class ScriptedExecutor(AgentExecutor):
    """Takes the next scripted reply for every message it executes."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        reply = _script.pop(0) if _script else {"answer": "no script"}
        said = _text_of(context.message) if context.message else ""
        _executed.append(context.message.message_id if context.message else "")
        task_id, context_id = context.task_id or "", context.context_id or ""
        if "message" in reply:
            text = str(reply["message"]).replace("{input}", said)
            await event_queue.enqueue_event(_agent_message(context_id, "", Part(text=text)))
            return
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[context.message] if context.message else [],
                )
            )
        updater = TaskUpdater(event_queue, task_id, context_id)
        if reply.get("hold"):
            await updater.start_work()
            await _release.wait()
            _release.clear()  # the next held task waits for the next release
        if "raise" in reply:
            raise RuntimeError(str(reply["raise"]))
        if "answer" in reply:
            text = str(reply["answer"]).replace("{input}", said)
            await updater.add_artifact([Part(text=text)], name="answer")
            await updater.complete()
        elif "stream" in reply:
            chunks = [str(chunk) for chunk in reply["stream"]]
            await updater.start_work(
                _agent_message(context_id, task_id, Part(text="working on it"))
            )
            for index, chunk in enumerate(chunks):
                await updater.add_artifact(
                    [Part(text=chunk)],
                    artifact_id="answer",
                    name="answer",
                    append=index > 0,
                    last_chunk=index == len(chunks) - 1,
                )
            await updater.complete()
        elif "ask" in reply:
            prompt = Part(text=str(reply["ask"]))
            await updater.requires_input(_agent_message(context_id, task_id, prompt))
        elif "auth" in reply:
            prompt = Part(text=str(reply["auth"]))
            await updater.update_status(
                TaskState.TASK_STATE_AUTH_REQUIRED, _agent_message(context_id, task_id, prompt)
            )
        elif "ask_call" in reply:
            call = dict(reply["ask_call"])
            part = _data_part(call, {"adk_type": "function_call", "adk_is_long_running": True})
            await updater.requires_input(_agent_message(context_id, task_id, part))
        elif "fail" in reply:
            reason = Part(text=str(reply["fail"]))
            await updater.failed(_agent_message(context_id, task_id, reason))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


class RecordingHandler(DefaultRequestHandler):
    """The SDK's request handler, recording each message; with ``dedup``, a messageId seen
    before answers the task it made (the agent does not run again)."""

    def __init__(self, *args: Any, dedup: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.dedup = dedup
        self.tasks_by_message: dict[str, str] = {}

    async def _seen(self, message: Message, context: ServerCallContext) -> Task | None:
        if not self.dedup or message.message_id not in self.tasks_by_message:
            return None
        task_id = self.tasks_by_message[message.message_id]
        return await self.on_get_task(GetTaskRequest(id=task_id), context)

    def _remember(self, message: Message, result: Message | Task) -> None:
        if isinstance(result, Task) and result.id:
            self.tasks_by_message.setdefault(message.message_id, result.id)

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Message | Task:
        _record(params, "send")
        seen = await self._seen(params.message, context)
        if seen is not None:
            return seen
        result = await super().on_message_send(params, context)
        self._remember(params.message, result)
        return result

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        _record(params, "stream")
        seen = await self._seen(params.message, context)
        if seen is not None:
            yield seen
            return
        async for event in super().on_message_send_stream(params, context):
            if isinstance(event, Task):
                self._remember(params.message, event)
            elif getattr(event, "task_id", ""):
                self.tasks_by_message.setdefault(params.message.message_id, event.task_id)
            yield event


def build_app(
    port: int, *, streaming: bool, dedup: bool, rest_first: bool, status: int, host: str
) -> Any:
    base = f"http://{host}:{port}"
    interfaces = [
        AgentInterface(protocol_binding="JSONRPC", protocol_version="1.0", url=f"{base}/rpc"),
        AgentInterface(protocol_binding="HTTP+JSON", protocol_version="1.0", url=f"{base}/rest"),
    ]
    if rest_first:
        interfaces.reverse()
    extensions = [AgentExtension(uri=IDEMPOTENT_MESSAGES)] if dedup else []
    card = AgentCard(
        name="scripted",
        description="A scripted remote agent for cairn's tests.",
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=streaming, extensions=extensions),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(id="script", name="script", description="Follows a script.", tags=["script"])
        ],
    )
    handler = RecordingHandler(
        agent_executor=ScriptedExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        dedup=dedup,
    )

    async def put_script(request: Request) -> Response:
        _script[:] = list(await request.json())
        return JSONResponse({"queued": len(_script)})

    async def get_received(request: Request) -> Response:
        return JSONResponse(_received)

    async def get_requests(request: Request) -> Response:
        return JSONResponse(_requests)

    async def get_executed(request: Request) -> Response:
        return JSONResponse(_executed)

    async def reset(request: Request) -> Response:
        for kept in (_script, _received, _requests, _executed):
            kept.clear()
        _release.clear()
        handler.tasks_by_message.clear()
        return JSONResponse({"reset": True})

    async def release(request: Request) -> Response:
        _release.set()
        return JSONResponse({"released": True})

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    control = [
        Route("/control/script", put_script, methods=["PUT"]),
        Route("/control/received", get_received, methods=["GET"]),
        Route("/control/requests", get_requests, methods=["GET"]),
        Route("/control/executed", get_executed, methods=["GET"]),
        Route("/control/reset", reset, methods=["POST"]),
        Route("/control/release", release, methods=["POST"]),
        Route("/control/health", health, methods=["GET"]),
    ]
    routes = [
        *control,
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/rpc"),
        *create_rest_routes(handler, path_prefix="/rest"),
    ]

    async def record_requests(request: Request, call_next: Any) -> Response:
        if not request.url.path.startswith("/control"):
            _requests.append(
                {
                    "method": request.method,
                    "path": request.url.path,
                    "headers": dict(request.headers),
                }
            )
            if status and request.method == "POST":
                return JSONResponse({"error": "scripted failure"}, status_code=status)
        response: Response = await call_next(request)
        return response

    return Starlette(
        routes=routes, middleware=[Middleware(BaseHTTPMiddleware, dispatch=record_requests)]
    )


class ScriptedA2aServer:
    """A handle on a running scripted server: its URLs and control routes."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.card_url = f"{url}/.well-known/agent-card.json"

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        from tests.support.waiting import BOUND_SECONDS

        response = httpx.request(method, self.url + path, timeout=BOUND_SECONDS, **kwargs)
        response.raise_for_status()
        return response.json()

    def script(self, *replies: dict[str, Any]) -> None:
        self._call("PUT", "/control/script", json=list(replies))

    def received(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self._call("GET", "/control/received")
        return found

    def requests(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self._call("GET", "/control/requests")
        return found

    def executed(self) -> list[str]:
        """The messageIds the agent ran for (a message answered from the dedup table is not)."""
        found: list[str] = self._call("GET", "/control/executed")
        return found

    def release(self) -> None:
        self._call("POST", "/control/release")

    def reset(self) -> None:
        """Forget the script, what was received and the messageIds seen; hold again."""
        self._call("POST", "/control/reset")


@contextlib.contextmanager
def a2a_scripted_server(*options: str) -> Iterator[ScriptedA2aServer]:
    """The server in its own process on a free loopback port, until the block ends;
    ``options`` are its command-line flags (``--no-streaming``, ``--dedup``, ...)."""
    from tests.support.model_server import free_port
    from tests.support.waiting import BOUND_SECONDS, wait_until

    port = free_port()
    command = [sys.executable, "-m", "tests.support.a2a_scripted_server", str(port), *options]
    process = subprocess.Popen(command, cwd=ROOT, env=dict(os.environ))
    server = ScriptedA2aServer(f"http://127.0.0.1:{port}")

    def answers() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"the scripted A2A server exited with {process.returncode}")
        try:
            return bool(httpx.get(f"{server.url}/control/health", timeout=BOUND_SECONDS).is_success)
        except httpx.HTTPError:
            return False

    try:
        wait_until(answers, f"the scripted A2A server on {server.url} answering")
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=BOUND_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("port", type=int)
    parser.add_argument("--no-streaming", action="store_true")
    parser.add_argument("--dedup", action="store_true")
    parser.add_argument("--rest-first", action="store_true")
    parser.add_argument("--status", type=int, default=0)
    parser.add_argument("--card-host", default="127.0.0.1")
    args = parser.parse_args()
    app = build_app(
        args.port,
        streaming=not args.no_streaming,
        dedup=args.dedup,
        rest_first=args.rest_first,
        status=args.status,
        host=args.card_host,
    )
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
