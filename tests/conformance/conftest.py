"""The store contract is written once and run against every session store.

Add a store by adding a factory to ``STORE_FACTORIES``: every test in this
folder then runs against it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from cairn.sessions import BaseSessionService, InMemorySessionService


async def _in_memory() -> BaseSessionService:
    return InMemorySessionService()


STORE_FACTORIES: dict[str, Callable[[], Awaitable[BaseSessionService]]] = {
    "memory": _in_memory,
}


@pytest.fixture(params=sorted(STORE_FACTORIES))
async def store(request: pytest.FixtureRequest) -> AsyncIterator[BaseSessionService]:
    service = await STORE_FACTORIES[request.param]()
    try:
        yield service
    finally:
        await service.close()
