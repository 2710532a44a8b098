"""Fixtures of the human-in-the-loop tests: a scenario driven on each store, in this process
or each step in a new one; a real local OAuth2 provider the scenarios sign in at."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.hitl.driver import Driver
from tests.support.databases import postgres_database

PLACES = [
    ("memory", "same"),
    ("sqlite", "same"),
    ("sqlite", "new"),
    ("postgres", "same"),
    ("postgres", "new"),
]


@pytest.fixture(params=PLACES, ids=[f"{store}-{where}" for store, where in PLACES])
async def place(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[str, str]]:
    store, where = request.param
    if store == "memory":
        yield "memory://", where
    elif store == "sqlite":
        yield str(tmp_path / "sessions.db"), where
    else:
        async with postgres_database() as url:  # type: ignore[attr-defined]
            yield url, where


@pytest.fixture
async def drive(place: tuple[str, str], tmp_path: Path) -> AsyncIterator[object]:
    drivers: list[Driver] = []

    def make(scenario: str) -> Driver:
        driver = Driver(place[0], scenario, place[1], tmp_path / "runs.txt")
        drivers.append(driver)
        return driver

    yield make
    for driver in drivers:
        await driver.close()


@pytest.fixture
def oauth_provider():  # type: ignore[no-untyped-def]
    from tests.auth.token_server import FakeProvider

    with FakeProvider().running() as provider:
        os.environ["CAIRN_HITL_OAUTH"] = provider.base_url
        yield provider
        os.environ.pop("CAIRN_HITL_OAUTH", None)
