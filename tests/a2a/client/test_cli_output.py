"""``cairn run`` with a remote A2A agent prints the remote's answer and not the records of the
call, live or in the transcript it shows when a session is continued; ``cairn sessions show``
(a read of the log) lists them."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner
from tests.support.a2a_scripted_server import ScriptedA2aServer

from cairn.cli import main

AGENTS = Path(__file__).resolve().parent / "agents"


def test_cairn_run_prints_the_answer_and_sessions_show_lists_the_records(
    streaming_server: ScriptedA2aServer, tmp_path: Path
) -> None:
    server = streaming_server
    server.reset()
    server.script({"answer": "echo: {input}"}, {"answer": "echo: {input}"})
    turns = tmp_path / "turns.txt"
    turns.write_text("hello\n", encoding="utf-8")
    store = str(tmp_path / "sessions.db")
    env = {"SCRIPTED_A2A_CARD": server.card_url}
    cli = CliRunner()
    ran = cli.invoke(
        main, ["run", str(AGENTS / "remote_helper"), "--replay", str(turns), "--store", store],
        env=env,
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert "echo: hello" in ran.output
    assert "cairn_a2a_" not in ran.output  # as google-adk's `adk run` prints it
    found = re.search(r"new session (\S+)", ran.output)
    assert found, ran.output
    shown = cli.invoke(
        main, ["sessions", "show", found.group(1), "--app", "remote_helper", "--store", store],
        env=env,
    )  # fmt: skip
    assert shown.exit_code == 0, shown.output
    assert "cairn_a2a_send_message" in shown.output  # the log keeps them
    turns.write_text("again\n", encoding="utf-8")
    continued = cli.invoke(
        main, ["run", str(AGENTS / "remote_helper"), "--session", found.group(1), "--replay",
               str(turns), "--store", store],
        env=env,
    )  # fmt: skip
    assert continued.exit_code == 0, continued.output
    transcript = continued.output.split("(end of the transcript)")[0]
    assert "echo: hello" in transcript and "cairn_a2a_" not in transcript
    assert "echo: again" in continued.output and "cairn_a2a_" not in continued.output
