"""Fixtures: ``api`` is an httpx client of the server app on an in-memory store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from tests.server.harness import FAULT_AGENTS, asgi_client, uvicorn_server


@pytest.fixture
async def api() -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client() as client:
        yield client


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real uvicorn server of the fault apps (``gate``: a tool that waits for a file) on a
    SQLite file; yields its URL."""
    home = tmp_path_factory.mktemp("gated")
    env = {"CAIRN_AGENTS_DIR": str(FAULT_AGENTS), "CAIRN_STORE": str(home / "sessions.db")}
    with uvicorn_server(env, log=home / "server.log") as url:
        yield url
