"""A pause answered across a restart of the cairn side (tests/a2a/interop/harness.py).

cairn's server (to_a2a, and ``cairn api-server --a2a``) on a SQLite file serves
``approver``; google-adk 2.13.0's RemoteA2aAgent asks it for a refund and sees the remote
task ``input-required``. The cairn server process is then killed (SIGKILL: nothing runs at
shutdown, the pause is only in the log) and a new one started on the same file and port;
the client's answer goes to the same task, and the run finishes, once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.a2a.interop import harness
from tests.server.harness import free_port

SERVERS: dict[str, Callable[..., contextlib.AbstractContextManager[harness.Server]]] = {
    "to_a2a": harness.cairn_server,
    "api-server": harness.cairn_api_server,
}
CALL = {"name": "ask_approval", "args": {"amount": 50}}


@pytest.fixture(scope="module")
def adk() -> Path:
    return harness.adk_python()


@pytest.mark.xfail(strict=True, reason=f"{harness.REPEATED_ANSWER}; {harness.REPLAYED_PAUSE}")
@pytest.mark.parametrize("kind", sorted(SERVERS))
def test_the_answer_goes_through_after_the_cairn_server_restarts(
    kind: str, adk: Path, tmp_path: Path
) -> None:
    store, client, port = tmp_path / "cairn.db", tmp_path / "adk.db", free_port()
    serve = SERVERS[kind]
    with serve("approver", store, tmp_path, port) as server:
        asked = harness.adk_turn(adk, server.card, client, "s1", say="refund 50, please")
        server.process.kill()
        server.process.wait()
    assert asked[-1] == {"author": "remote", "calls": [CALL], "paused": True}

    with serve("approver", store, tmp_path, port) as server:
        answered = harness.adk_turn(adk, server.card, client, "s1", answer={"approved": True})
    assert answered == [{"author": "remote", "text": "approved"}]

    kept: list[list[dict[str, Any]]] = asyncio.run(harness.cairn_server_view(store, "approver"))
    answer = {"name": "ask_approval", "response": {"approved": True}}
    assert kept == [
        [
            {"author": "user", "text": "refund 50, please"},
            {"author": "approver", "calls": [CALL], "paused": True},
            {"author": "user", "responses": [answer]},
            {"author": "approver", "text": "approved"},
        ]
    ]
    runs = asyncio.run(harness.cairn_runs(store, "approver"))
    assert [run.status for run in runs] == ["done"], runs  # one run: paused, answered, done
