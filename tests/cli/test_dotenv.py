"""An agent folder's ``.env`` is read before its code (as ADK does); the shell's values win."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.cli.harness import Cli

AGENT = """
import os

from google.genai import types

from cairn import BaseAgent, Event


class Greeter(BaseAgent):
    async def _run_async_impl(self, ctx):
        text = f"{os.environ['CAIRN_TEST_GREETING']} from {os.environ['CAIRN_TEST_PLACE']}"
        yield Event(message=types.Content(role="model", parts=[types.Part(text=text)]))


root_agent = Greeter(name="greeter")
"""


def test_the_agent_reads_its_dotenv_and_exported_variables_win(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "greeter"
    folder.mkdir()
    (folder / "agent.py").write_text(AGENT)
    (folder / ".env").write_text("CAIRN_TEST_GREETING=hello\nCAIRN_TEST_PLACE=the file\n")
    monkeypatch.delenv("CAIRN_TEST_GREETING", raising=False)
    monkeypatch.setenv("CAIRN_TEST_PLACE", "the shell")
    replay = tmp_path / "turns.json"
    replay.write_text(json.dumps({"queries": ["hi"]}))

    result = cli("run", folder, "--replay", replay)

    assert result.exit_code == 0, result.output
    assert "hello from the shell" in result.output
    assert os.environ["CAIRN_TEST_GREETING"] == "hello"
    os.environ.pop("CAIRN_TEST_GREETING")  # read from the file: not left for other tests
