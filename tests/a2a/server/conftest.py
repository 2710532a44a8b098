"""Fixtures: agents served with ``to_a2a`` in this process, called with a2a-sdk's client."""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import httpx
import pytest
from a2a.client import Client, ClientConfig, create_client
from starlette.applications import Starlette

from cairn.a2a.utils.agent_to_a2a import to_a2a

AGENTS = Path(__file__).resolve().parent / "agents"
TIMEOUT = httpx.Timeout(300.0)


def root_agent(name: str):  # type: ignore[no-untyped-def]
    import sys

    if str(AGENTS) not in sys.path:
        sys.path.insert(0, str(AGENTS))
    return importlib.import_module(f"{name}.agent").root_agent


@asynccontextmanager
async def served(app: Starlette, base: str = "http://agent") -> AsyncIterator[httpx.AsyncClient]:
    """``app`` (its lifespan run) behind an httpx client on the ASGI transport."""
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=base, timeout=TIMEOUT) as http:
            yield http


Connect = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture
def connect() -> Connect:
    """``async with connect(app, streaming=...) as client``: an a2a-sdk client of ``app``."""

    @asynccontextmanager
    async def open_client(
        app: Starlette, *, streaming: bool = True, bindings: list[str] | None = None
    ) -> AsyncIterator[Client]:
        async with served(app) as http:
            config = ClientConfig(
                streaming=streaming,
                httpx_client=http,
                supported_protocol_bindings=bindings or [],
            )
            client = await create_client("http://agent", client_config=config)
            try:
                yield client
            finally:
                await client.close()

    return open_client


def greeter_app() -> Starlette:
    return to_a2a(root_agent("greeter"), host="agent", port=80)
