"""Fixtures: ``api`` is an httpx client of the server app on an in-memory store."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from tests.server.harness import asgi_client


@pytest.fixture
async def api() -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client() as client:
        yield client
