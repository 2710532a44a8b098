"""``cairn run --replay FILE``: scripted turns in ADK's format or as lines, answers included."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.cli.harness import Cli, session_id

from cairn.sessions.sqlite_session_service import SqliteSessionService


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def stored_state(store: str, app: str, session: str) -> dict[str, object]:
    async def read() -> dict[str, object]:
        async with SqliteSessionService(store) as service:
            found = await service.get_session(app_name=app, user_id="user", session_id=session)
            assert found is not None
            return dict(found.state)

    return asyncio.run(read())


def test_adk_format_with_state_and_an_answer_by_call_id(cli: Cli, tmp_path: Path) -> None:
    replay = {
        "state": {"customer": "Ann"},
        "queries": [
            "hello",
            "refund please",
            {"answer": {"id": "call-refund", "response": True}},
        ],
    }
    result = cli.run("shop.py", "--replay", write(tmp_path, "turns.json", json.dumps(replay)))
    assert result.exit_code == 0, result.output
    assert "you> hello" in result.output and "clerk: you said: hello" in result.output
    assert "answer confirmation-" in result.output and '{"confirmed": true}' in result.output
    assert 'results: {"refund": {"refunded": 50}}' in result.output
    assert cli.runs() == {"refund": 1}
    assert stored_state(cli.store, "shop", session_id(result.output)) == {"customer": "Ann"}


def test_lines_of_text_and_json_with_an_answer_without_id(cli: Cli, tmp_path: Path) -> None:
    lines = ['{"state": {"k": 1}}', "ask the manager", "", '{"answer": {"response": "tomorrow"}}']
    result = cli.run("shop.py", "--replay", write(tmp_path, "turns.jsonl", "\n".join(lines)))
    assert result.exit_code == 0, result.output
    assert 'results: {"ask_manager": {"result": "tomorrow"}}' in result.output
    assert stored_state(cli.store, "shop", session_id(result.output)) == {"k": 1}


def test_a_replay_answers_an_input_request_and_several_at_once(cli: Cli, tmp_path: Path) -> None:
    verdict = {"answer": {"id": "review-1", "response": {"verdict": "hold", "note": "wait"}}}
    replay = write(tmp_path, "review.json", json.dumps({"queries": ["the memo", verdict]}))
    result = cli.run("review", "--replay", replay)
    assert result.exit_code == 0, result.output
    assert "review@1/send@1 → hold: wait" in result.output
    both = [
        {"id": "call-manager", "response": {"ok": True}},
        {"id": "call-finance", "response": 9},
    ]
    replay = write(tmp_path, "both.json", json.dumps(["both", {"answer": both}]))
    result = cli.run("shop.py", "--replay", replay)
    assert result.exit_code == 0, result.output
    assert '"ask_finance": {"result": 9}, "ask_manager": {"ok": true}' in result.output


def test_a_replay_continues_an_interrupted_invocation(cli: Cli, tmp_path: Path) -> None:
    turns = ["pay", '{"continue": true}', '{"answer": {"id": "call-charge", "response": "rerun"}}']
    result = cli.run("doubt.py", "--replay", write(tmp_path, "turns.jsonl", "\n".join(turns)))
    assert result.exit_code == 0, result.output
    assert 'cashier: charge: {"charged": 30}' in result.output and cli.runs() == {"charge": 1}


def test_a_replay_leaves_unanswered_interrupts_pending(cli: Cli, tmp_path: Path) -> None:
    result = cli.run("shop.py", "--replay", write(tmp_path, "turns.txt", "refund please\n"))
    assert result.exit_code == 0, result.output
    assert "⏸ confirmation" in result.output and "they stay pending" in result.output
    sid = session_id(result.output)
    answer = '{"answer": {"id": "call-refund", "response": {"confirmed": true}}}\n'
    done = cli.run("shop.py", "--session", sid, "--replay", write(tmp_path, "more.txt", answer))
    assert done.exit_code == 0, done.output
    assert "⏸ confirmation" in done.output.split("answer confirmation-")[0]  # shown first
    assert cli.runs() == {"refund": 1}


def test_an_answer_to_nothing_pending_exits_2(cli: Cli, tmp_path: Path) -> None:
    turns = ["hello", '{"answer": {"id": "call-nothing", "response": true}}', "never sent"]
    result = cli.run("shop.py", "--replay", write(tmp_path, "turns.txt", "\n".join(turns)))
    assert result.exit_code == 2
    assert "'call-nothing', which is not pending" in result.stderr
    assert "never sent" not in result.output


def test_an_answer_the_runner_refuses_exits_2(cli: Cli, tmp_path: Path) -> None:
    wrong = {"answer": {"id": "review-1", "response": {"verdict": "maybe"}}}
    replay = write(tmp_path, "turns.json", json.dumps({"queries": ["memo", wrong, "never"]}))
    result = cli.run("review", "--replay", replay)
    assert result.exit_code == 2
    assert "was refused" in result.output and "'maybe' is not one of" in result.output
    assert cli.runs() == {"draft": 1, "review": 1}


def test_an_agent_that_raises_exits_3(cli: Cli, tmp_path: Path) -> None:
    agent = tmp_path / "crashing.py"
    agent.write_text(
        "from cairn import BaseAgent\n\n"
        "class Crashing(BaseAgent):\n"
        "    async def _run_async_impl(self, ctx):\n"
        "        raise RuntimeError('a bug in the agent')\n"
        "        yield\n\n"
        "root_agent = Crashing(name='crashing')\n"
    )
    result = cli("run", agent, "--replay", write(tmp_path, "turns.txt", "hi\n"))
    assert result.exit_code == 3
    assert "the agent failed: RuntimeError: a bug in the agent" in result.output


def test_a_missing_replay_file_exits_1_and_a_malformed_one_2(cli: Cli, tmp_path: Path) -> None:
    missing = cli.run("shop.py", "--replay", str(tmp_path / "nope.json"))
    assert missing.exit_code == 1 and "does not exist" in missing.stderr
    for text, reason in [
        ('{"queries": "hello"}', "queries must be a list"),
        ('{"queries": [], "extra": 1}', "unknown keys ['extra']"),
        ('["hi", {"answer": {"id": "x"}}]', 'each answer is {"id"'),
        ('["hi", {"what": 1}]', "expected a message"),
        ('hello\n{"state": {}}\n', "a state line must be the first line"),
    ]:
        result = cli.run("shop.py", "--replay", write(tmp_path, "bad.json", text))
        assert result.exit_code == 2, text
        assert reason in result.stderr, result.stderr
    assert cli.runs() == {}
