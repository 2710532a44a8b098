"""A regression suite from the log: a stored session becomes a case (``cairn eval create``),
and ``cairn eval --reuse-tool-results`` replays it with no live tools, pauses answered from
the recording; a changed agent's report names the first event where it departs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.evaluation.session_runs import CONFIRMED, Answer, drive, tool_runs

from cairn.cli import main
from cairn.cli._loading import load_target
from cairn.cli.run import DEFAULT_USER
from cairn.runners import Runner
from cairn.sessions.sqlite_session_service import SqliteSessionService

AGENT_PY = """\
import os
from pathlib import Path

from tests.evaluation.session_runs import clerk, respond
from cairn.testing import Call, ScriptedLlm


def changed(request):
    # The "new version" of the agent: refunds two more than asked.
    reply = respond(request)
    if isinstance(reply, Call) and reply.name == "refund":
        return Call("refund", amount=reply.args["amount"] + 2)
    return reply


model = ScriptedLlm(respond=changed if os.environ.get("CLERK_V2") else respond)
root_agent = clerk(Path(__file__).parent, model=model)
"""
TURNS: list[str | Answer] = ["weather Paris", "refund 5", CONFIRMED, "thanks"]


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    (folder / "agent.py").write_text(AGENT_PY, encoding="utf-8")
    return folder


async def _record(agent_dir: Path, store: Path) -> str:
    target = load_target(agent_dir)
    service = SqliteSessionService(store)
    try:
        runner = Runner(app_name=target.name, agent=target.agent, session_service=service)
        session = await service.create_session(app_name=target.name, user_id=DEFAULT_USER)
        await drive(runner, DEFAULT_USER, session.id, TURNS)
        await runner.close()
    finally:
        await service.close()
    return session.id


def cairn(*args: str | Path) -> tuple[int, str]:
    # A wide console, so that a report line is not folded into the table's column.
    result = CliRunner(env={"COLUMNS": "300"}).invoke(
        main, [str(a) for a in args], catch_exceptions=False
    )
    return result.exit_code, result.output


def test_a_recorded_session_replays_with_no_live_tools_and_reports_a_change(
    shop: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "sessions.db"
    session_id = asyncio.run(_record(shop, store))
    assert tool_runs(shop) == ["get_weather:Paris", "refund:5"]
    (shop / "tool_calls.txt").unlink()
    suite = shop / "regressions.evalset.json"
    code, out = cairn(
        "eval",
        "create",
        shop,
        suite,
        "--from-session",
        session_id,
        "--store",
        store,
        "--eval-id",
        "refund_flow",
    )
    assert code == 0, out

    # The same agent, replayed: every result comes from the recording, the confirmation is
    # asked again and answered by the recorded turn, and the case passes.
    code, out = cairn("eval", shop, suite, "--reuse-tool-results", "--config", _exact(tmp_path))
    assert code == 0, out
    assert "1 of 1 cases passed" in out
    assert tool_runs(shop) == []

    # The changed agent: the report names the first call that differs, and from there the
    # live tool runs (after the recorded confirmation).
    monkeypatch.setenv("CLERK_V2", "1")
    code, out = cairn("eval", shop, suite, "--reuse-tool-results", "--config", _exact(tmp_path))
    assert code == 1, out
    assert "invocation 2, event 1: expected refund(amount=5), got refund(amount=7)" in out
    assert tool_runs(shop) == ["refund:7"]


def _exact(tmp_path: Path) -> Path:
    config = tmp_path / "exact.json"
    config.write_text(
        '{"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}'
    )
    return config
