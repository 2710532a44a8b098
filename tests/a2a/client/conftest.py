"""Scripted A2A servers (tests/support/a2a_scripted_server.py), one process per kind and test
module, reset before each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.support.a2a_scripted_server import ScriptedA2aServer, a2a_scripted_server


@pytest.fixture(scope="module")
def streaming_server() -> Iterator[ScriptedA2aServer]:
    with a2a_scripted_server() as server:
        yield server


@pytest.fixture(scope="module")
def plain_server() -> Iterator[ScriptedA2aServer]:
    """A remote whose card declares no streaming: each message is one blocking call."""
    with a2a_scripted_server("--no-streaming") as server:
        yield server


@pytest.fixture(params=["streaming", "plain"])
def server(request: pytest.FixtureRequest) -> ScriptedA2aServer:
    """Each test runs against a streaming remote and a non-streaming one."""
    found: ScriptedA2aServer = request.getfixturevalue(f"{request.param}_server")
    found.reset()
    return found
