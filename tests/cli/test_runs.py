"""``cairn runs``: list, show and cancel a session's runs in a store that an executor (as a
server would) is running them from, through the real CLI."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from tests.runs.agents import Gate, text

from cairn import Runner
from cairn.cli import main
from cairn.runs.in_process import InProcessExecutor
from cairn.runs.service import Runs
from cairn.sessions.run_store import RunStatus, run_store_for
from cairn.sessions.sqlite_session_service import SqliteSessionService

APP, USER, SESSION = "demo", "ann", "s1"


def cairn(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(arg) for arg in args], env={"COLUMNS": "200"})


async def cli(*args: str | Path) -> Result:
    """The command in a thread of its own (it runs its own event loop)."""
    return await asyncio.to_thread(cairn, *args)


class Server:
    """A store and an executor running a Gate agent from it, as a server process would."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.service = SqliteSessionService(str(store))
        self.agent = Gate(name="gate", release=asyncio.Event(), holding=asyncio.Event())
        self.runner = Runner(agent=self.agent, app_name=APP, session_service=self.service)
        rows = run_store_for(self.service)
        self.executor = InProcessExecutor(rows, self.service, self.runner_for, cancel_poll=0.05)
        self.runs = Runs(rows, self.service, self.executor, self.runner_for)

    async def runner_for(self, app_name: str) -> Runner:
        return self.runner


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    made = Server(tmp_path / "sessions.db")
    await made.service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    yield made
    made.agent.release.set()
    await made.executor.close()
    await made.service.close()


async def listed(store: Path, *args: str) -> list[dict[str, Any]]:
    result = await cli("runs", "list", SESSION, "--store", store, "--json", *args)
    assert result.exit_code == 0, result.output
    runs: list[dict[str, Any]] = json.loads(result.output)["runs"]
    return runs


async def test_runs_are_listed_shown_and_cancelled_pending_and_running(server: Server) -> None:
    held = await server.runs.create(APP, USER, SESSION, new_message=text("hold"))
    queued = await server.runs.create(APP, USER, SESSION, new_message=text("never"))
    await server.agent.holding.wait()

    runs = await listed(server.store)
    assert [(r["runId"], r["status"]) for r in runs] == [
        (queued.run_id, "pending"),
        (held.run_id, "running"),
    ]
    assert runs[1]["request"]["newMessage"]["parts"] == [{"text": "hold"}]
    table = await cli("runs", "list", SESSION, "--store", server.store)
    assert table.exit_code == 0, table.output
    assert "pending" in table.output and "running" in table.output and "enqueue" in table.output
    only = await listed(server.store, "--status", "running")
    assert [r["runId"] for r in only] == [held.run_id]

    # The queued one is cancelled unstarted; the running one stops, what it said stays.
    cancelled = await cli("runs", "cancel", SESSION, queued.run_id, "--store", server.store)
    assert cancelled.exit_code == 0, cancelled.output
    assert "cancelled" in cancelled.output
    stopped = await cli(
        "runs", "cancel", SESSION, held.run_id, "--store", server.store, "--wait", "--json"
    )
    assert stopped.exit_code == 0, stopped.output
    assert json.loads(stopped.output)["status"] == "cancelled"
    session = await server.service.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    assert session is not None
    said = [e.content.parts[0].text for e in session.events if e.content and e.content.parts]
    assert said == ["hold", "holding"]

    shown = await cli("runs", "show", SESSION, queued.run_id, "--store", server.store, "--json")
    assert shown.exit_code == 0, shown.output
    row = json.loads(shown.output)
    assert row["status"] == "cancelled" and row["startedAt"] is None and row["endedAt"]
    text_view = await cli("runs", "show", SESSION, held.run_id, "--store", server.store)
    assert held.run_id in text_view.output and "started" in text_view.output

    # The session goes on: a new run is done.
    after = await server.runs.wait(
        await server.runs.create(APP, USER, SESSION, new_message=text("x"))
    )
    assert after.status is RunStatus.DONE
    again = await cli("runs", "cancel", SESSION, after.run_id, "--store", server.store, "--json")
    assert json.loads(again.output)["status"] == "done"  # an ended run is left as it was


async def test_a_run_or_session_that_does_not_exist_is_not_found(server: Server) -> None:
    missing = await cli("runs", "show", SESSION, "e-nope", "--store", server.store)
    assert missing.exit_code == 1
    assert "has no run 'e-nope'" in missing.output
    nobody = await cli("runs", "list", "s-nope", "--store", server.store)
    assert nobody.exit_code == 1 and "does not exist" in nobody.output


def test_the_users_runs_across_sessions_and_the_usage_without_either(tmp_path: Path) -> None:
    async def populate() -> tuple[str, str]:
        made = Server(tmp_path / "sessions.db")
        made.agent.release.set()
        try:
            ids = []
            for sid in ("a", "b"):
                await made.service.create_session(app_name=APP, user_id=USER, session_id=sid)
                run = await made.runs.create(APP, USER, sid, new_message=text("hold"))
                ids.append((await made.runs.wait(run)).run_id)
            return ids[0], ids[1]
        finally:
            await made.executor.close()
            await made.service.close()

    first, second = asyncio.run(populate())
    result = cairn("runs", "list", "--user", USER, "--store", tmp_path / "sessions.db", "--json")
    assert result.exit_code == 0, result.output
    runs = json.loads(result.output)["runs"]
    assert [(r["sessionId"], r["runId"], r["status"]) for r in runs] == [
        ("b", second, "done"),
        ("a", first, "done"),
    ]
    table = cairn("runs", "list", "--user", USER, "--store", tmp_path / "sessions.db")
    assert "session" in table.output and "done" in table.output
    usage = cairn("runs", "list", "--store", tmp_path / "sessions.db")
    assert usage.exit_code == 2 and "--user" in usage.output
