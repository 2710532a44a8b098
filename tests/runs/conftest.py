"""Fixtures: ``sessions``, a session service on the in-memory, SQLite and PostgreSQL stores
(its ``runs`` beside it). MariaDB's run store is held to the same contract by
tests/conformance/test_run_store.py; what is tested here is the code above the store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.conformance.conftest import STORES

from cairn.sessions import BaseSessionService


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def sessions(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[BaseSessionService]:
    async with STORES[request.param](tmp_path) as service:
        try:
            yield service
        finally:
            await service.close()
