"""``cairn eval create``: a session stored by a real run becomes an eval case in an eval set
file that cairn's loader reads back, answer turns included."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from google.genai import types
from tests.evaluation.session_runs import CONFIRMED, Answer, drive

from cairn.cli._loading import load_target
from cairn.cli.eval_create import create
from cairn.cli.run import DEFAULT_USER
from cairn.evaluation.local_eval_sets_manager import load_eval_set_from_file
from cairn.runners import Runner
from cairn.sessions.sqlite_session_service import DEFAULT_PATH, SqliteSessionService

AGENT_PY = """\
from pathlib import Path

from tests.evaluation.session_runs import clerk

root_agent = clerk(Path(__file__).parent)
"""
TURNS: list[str | Answer] = ["refund 5", CONFIRMED, "hello"]


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    (folder / "agent.py").write_text(AGENT_PY, encoding="utf-8")
    return folder


async def _stored_session(agent_dir: Path, store: Path, turns: list[str | Answer]) -> str:
    """Run the agent of ``agent_dir`` as ``cairn run`` would (its name, the default user).

    The tests are plain functions: the command runs its own event loop, as on a terminal.
    """
    target = load_target(agent_dir)
    service = SqliteSessionService(store)
    try:
        runner = Runner(app_name=target.name, agent=target.agent, session_service=service)
        session = await service.create_session(
            app_name=target.name, user_id=DEFAULT_USER, state={"user:tier": "gold"}
        )
        await drive(runner, DEFAULT_USER, session.id, turns)
        await runner.close()
    finally:
        await service.close()
    return session.id


def _create(*args: str | Path) -> Result:
    return CliRunner().invoke(create, [str(arg) for arg in args])


def test_a_session_with_an_answered_pause_becomes_a_case(agent_dir: Path, tmp_path: Path) -> None:
    store = tmp_path / "sessions.db"
    session_id = asyncio.run(_stored_session(agent_dir, store, TURNS))
    eval_file = agent_dir / "refunds.evalset.json"
    result = _create(agent_dir, eval_file, "--from-session", session_id, "--store", store)
    assert result.exit_code == 0, result.output
    assert f"added eval case 'session_{session_id}' (3 turn(s))" in result.stdout

    eval_set = load_eval_set_from_file(str(eval_file), "refunds")
    assert eval_set.eval_set_id == "refunds" and eval_set.name == "refunds"
    [case] = eval_set.eval_cases
    assert case.eval_id == f"session_{session_id}"
    assert case.session_input is not None
    assert (case.session_input.app_name, case.session_input.user_id) == ("shop", "user")
    assert case.session_input.state == {"user:tier": "gold"}
    assert case.conversation is not None
    message, answer, hello = case.conversation
    assert message.user_content.parts and message.user_content.parts[0].text == "refund 5"
    [response] = [p.function_response for p in answer.user_content.parts or []]
    assert response is not None and response.name == "adk_request_confirmation"
    assert response.response == {"confirmed": True}
    assert answer.invocation_id == message.invocation_id
    assert answer.final_response == types.Content(
        role="model", parts=[types.Part(text='results: {"refund": {"refunded": 5}}')]
    )
    assert hello.final_response is not None and hello.final_response.parts
    assert hello.final_response.parts[0].text == "ok: hello"
    # The JSON the eval set managers write (as ADK's): snake_case keys, no null fields.
    raw = json.loads(eval_file.read_text(encoding="utf-8"))
    assert (
        raw["eval_set_id"] == "refunds"
        and "user_content" in raw["eval_cases"][0]["conversation"][0]
    )
    assert "null" not in eval_file.read_text(encoding="utf-8")

    # Another case of the same session's refund invocation only, in the same file.
    result = _create(
        agent_dir, eval_file, "--from-session", session_id, "--store", store,
        "--invocation", message.invocation_id, "--eval-id", "refund_approved",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    eval_set = load_eval_set_from_file(str(eval_file), "refunds")
    assert [c.eval_id for c in eval_set.eval_cases] == [f"session_{session_id}", "refund_approved"]
    chosen = eval_set.eval_cases[1].conversation
    assert chosen is not None and [i.invocation_id for i in chosen] == [message.invocation_id] * 2


def test_a_taken_eval_id_is_refused_and_the_file_kept(agent_dir: Path, tmp_path: Path) -> None:
    store = tmp_path / "sessions.db"
    session_id = asyncio.run(_stored_session(agent_dir, store, ["hello"]))
    eval_file = tmp_path / "sets" / "smoke.evalset.json"
    args = (agent_dir, eval_file, "--from-session", session_id, "--store", store, "--eval-id", "a")
    assert _create(*args).exit_code == 0
    before = eval_file.read_text(encoding="utf-8")
    again = _create(*args)
    assert again.exit_code == 2
    assert f"{eval_file} already has an eval case 'a'; pass another --eval-id" in again.stderr
    assert eval_file.read_text(encoding="utf-8") == before


def test_an_unknown_session_names_the_session_and_the_store(
    agent_dir: Path, tmp_path: Path
) -> None:
    store = tmp_path / "sessions.db"
    asyncio.run(_stored_session(agent_dir, store, ["hello"]))
    eval_file = tmp_path / "smoke.evalset.json"
    result = _create(agent_dir, eval_file, "--from-session", "nope", "--store", store)
    assert result.exit_code == 1
    assert f"session 'nope' does not exist in app 'shop' of store {store}" in result.stderr
    assert not eval_file.exists()


def test_an_unknown_invocation_lists_the_known_ones(agent_dir: Path, tmp_path: Path) -> None:
    store = tmp_path / "sessions.db"
    session_id = asyncio.run(_stored_session(agent_dir, store, ["hello"]))
    eval_file = tmp_path / "smoke.evalset.json"
    result = _create(
        agent_dir, eval_file, "--from-session", session_id, "--store", store,
        "--invocation", "e-missing",
    )  # fmt: skip
    assert result.exit_code == 1
    assert (
        "'e-missing'" in result.stderr and "invocations with user turns are: 'e-" in result.stderr
    )
    assert not eval_file.exists()


def test_an_eval_set_file_must_be_named_like_one(agent_dir: Path, tmp_path: Path) -> None:
    result = _create(agent_dir, tmp_path / "smoke.json", "--from-session", "s")
    assert result.exit_code == 2
    assert "named NAME.evalset.json" in result.stderr and "smoke.evalset.json" in result.stderr


def test_the_default_store_is_the_one_cairn_run_uses(
    agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    DEFAULT_PATH.parent.mkdir()
    session_id = asyncio.run(_stored_session(agent_dir, DEFAULT_PATH, ["hello"]))
    result = _create(agent_dir, "shop/smoke.evalset.json", "--from-session", session_id)
    assert result.exit_code == 0, result.output
    [case] = load_eval_set_from_file(str(agent_dir / "smoke.evalset.json"), "smoke").eval_cases
    assert case.conversation is not None and len(case.conversation) == 1
