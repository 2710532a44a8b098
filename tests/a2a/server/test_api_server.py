"""``cairn api-server --a2a``: every app at /a2a/{app}, behind the server's authentication."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from a2a.client import Client, ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState
from tests.a2a.server.conftest import AGENTS, TIMEOUT

from cairn.server import create_app
from cairn.server.settings import ServerSettings

KEY = "s3cret"


def said(text: str, **ids: str) -> SendMessageRequest:
    message = Message(
        message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)], **ids
    )
    return SendMessageRequest(message=message)


@asynccontextmanager
async def api_server(**settings: object) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(ServerSettings(agents_dir=AGENTS, store="memory://", a2a=True, **settings))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://cairn", timeout=TIMEOUT
        ) as http:
            yield http


@asynccontextmanager
async def a2a_client(http: httpx.AsyncClient, app_name: str) -> AsyncIterator[Client]:
    config = ClientConfig(streaming=False, httpx_client=http)
    client = await create_client(f"http://cairn/a2a/{app_name}", client_config=config)
    try:
        yield client
    finally:
        await client.close()


async def test_each_app_is_served_at_a2a_slash_its_name() -> None:
    async with api_server() as http:
        card = (await http.get("/a2a/greeter/.well-known/agent-card.json")).json()
        assert card["name"] == "greeter"
        assert card["supportedInterfaces"][0]["url"] == "http://cairn/a2a/greeter"
        async with a2a_client(http, "greeter") as client:
            [answer] = [r async for r in client.send_message(said("eve"))]
        assert answer.task.status.message.parts[0].text == "hello, eve"
        # The task is a run of the server: its session and run are in the HTTP API too.
        task = answer.task
        user = f"A2A_USER_{task.context_id}"
        runs = await http.get(f"/cairn/apps/greeter/users/{user}/sessions/{task.context_id}/runs")
        assert [r["runId"] for r in runs.json()["runs"]] == [task.id]
        missing = await http.get("/a2a/nobody/.well-known/agent-card.json")
        assert missing.status_code == 404


async def test_the_api_key_guards_every_route_but_the_card() -> None:
    async with api_server(api_key=KEY) as http:
        card = await http.get("/a2a/greeter/.well-known/agent-card.json")
        assert card.status_code == 200
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}
            },
        }
        refused = await http.post("/a2a/greeter", json=body, headers={"A2A-Version": "1.0"})
        assert refused.status_code == 401
        assert refused.headers["WWW-Authenticate"] == "X-API-Key"
        assert "X-API-Key" in refused.json()["detail"]
        http.headers["X-API-Key"] = KEY
        async with a2a_client(http, "greeter") as client:
            [answer] = [r async for r in client.send_message(said("fay"))]
        assert answer.task.status.state == TaskState.TASK_STATE_COMPLETED


async def test_an_authenticated_users_tasks_are_their_own() -> None:
    from a2a.types import GetTaskRequest
    from starlette.requests import Request

    from cairn.server.access import Principal

    def hook(request: Request) -> Principal:
        return Principal(user_id=request.headers.get("X-User", ""), apps=frozenset({"greeter"}))

    app = create_app(
        ServerSettings(agents_dir=AGENTS, store="memory://", a2a=True), authenticate=hook
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://cairn", timeout=TIMEOUT
        ) as http:
            http.headers["X-User"] = "gus"
            async with a2a_client(http, "greeter") as client:
                [answer] = [r async for r in client.send_message(said("gus"))]
                http.headers["X-User"] = "hal"
                with pytest.raises(Exception, match="has no task"):
                    await client.get_task(GetTaskRequest(id=answer.task.id))
            sessions = await http.get("/apps/greeter/users/gus/sessions", headers={"X-User": "gus"})
            assert [s["id"] for s in sessions.json()] == [answer.task.context_id]
            forbidden = await http.get("/a2a/asker/.well-known/agent-card.json")
            assert forbidden.status_code == 200  # the card is public
            body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
            denied = await http.post("/a2a/asker", json=body, headers={"A2A-Version": "1.0"})
            assert denied.status_code == 403
