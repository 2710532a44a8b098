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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.a2a.interop import harness
from tests.a2a.interop.conversations import APPROVED, APPROVER_KEPT, PAUSED
from tests.server.harness import free_port

SERVERS: dict[str, Callable[..., contextlib.AbstractContextManager[harness.Server]]] = {
    "to_a2a": harness.cairn_server,
    "api-server": harness.cairn_api_server,
}


@dataclass
class Restarted:
    asked: list[dict[str, Any]]  # what google-adk's client saw before the restart
    answered: list[dict[str, Any]]  # ... and after it
    kept: list[list[dict[str, Any]]]  # the cairn server's log, by session
    runs: list[Any]  # its run rows


@pytest.fixture(scope="module", params=sorted(SERVERS))
def restarted(
    request: pytest.FixtureRequest, adk: Path, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    home = tmp_path_factory.mktemp(f"restart-{request.param}")
    store, client, port = home / "cairn.db", home / "adk.db", free_port()
    serve = SERVERS[request.param]
    with serve("approver", store, home, port) as server:
        asked = harness.adk_turn(adk, server.card, client, "s1", say="refund 50, please")
        server.process.kill()
        server.process.wait()
    with serve("approver", store, home, port) as server:
        answered = harness.adk_turn(adk, server.card, client, "s1", answer={"approved": True})
    kept = asyncio.run(harness.cairn_server_view(store, "approver"))
    return Restarted(asked, answered, kept, asyncio.run(harness.cairn_runs(store, "approver")))


def test_the_answer_finishes_the_paused_run_once(restarted: Restarted) -> None:
    assert restarted.asked[-1] == PAUSED
    assert restarted.answered[-1] == APPROVED
    assert restarted.kept == [APPROVER_KEPT]
    # One run: it paused, the restarted server continued it with the answer, it is done.
    assert [run.status for run in restarted.runs] == ["done"], restarted.runs


def test_the_client_sees_the_answer_alone(restarted: Restarted) -> None:
    assert restarted.answered == [APPROVED]
