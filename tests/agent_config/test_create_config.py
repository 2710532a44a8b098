"""``cairn create NAME --type=config``: an Agent Config folder whose own test passes and that
``cairn run`` talks to."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.waiting import BOUND_SECONDS

from cairn.cli import main
from cairn.models import LLMRegistry, LlmRequest
from cairn.testing import Call, ScriptedLlm


def create(*args: str | Path) -> Any:
    return CliRunner().invoke(main, ["create", *map(str, args)])


def test_the_config_scaffold_has_its_files(tmp_path: Path) -> None:
    result = create("faq_bot", "--type=config", "--dir", tmp_path, "--model", "openai/gpt-4o-mini")
    assert result.exit_code == 0, result.output
    folder = tmp_path / "faq_bot"
    for name in ("root_agent.yaml", "tools.py", ".env.example", "tests/test_agent.py", "README.md"):
        assert (folder / name).is_file(), name
    assert not (folder / "agent.py").exists() and not (folder / "__init__.py").exists()
    yaml_text = (folder / "root_agent.yaml").read_text()
    assert "model: openai/gpt-4o-mini" in yaml_text
    assert "- name: faq_bot.tools.get_weather" in yaml_text
    assert "root_agent.yaml, tools.py" in result.output


def test_the_generated_test_passes_without_an_api_key(tmp_path: Path) -> None:
    assert create("faq_bot", "--type=config", "--dir", tmp_path).exit_code == 0
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("PYTHONPATH", None)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "faq_bot/tests", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def _weather_reply(request: LlmRequest) -> Any:
    last = request.contents[-1].parts or []
    if any(p.function_response for p in last):
        return "Sunny."
    return Call("get_weather", city="Paris")


class _WeatherLlm(ScriptedLlm):
    def __init__(self, **data: Any) -> None:
        super().__init__(respond=_weather_reply, **data)

    @classmethod
    def supported_models(cls) -> list[str]:
        return ["scripted-config-weather"]


@pytest.fixture
def scripted_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setattr(LLMRegistry, "_registered", list(LLMRegistry._registered))
    LLMRegistry.register(_WeatherLlm)
    yield "scripted-config-weather"


def test_cairn_run_talks_to_the_config_scaffold(tmp_path: Path, scripted_model: str) -> None:
    created = create("faq_bot", "--type=config", "--dir", tmp_path, "--model", scripted_model)
    assert created.exit_code == 0
    turns = tmp_path / "turns.json"
    turns.write_text(json.dumps({"queries": ["weather in Paris?"]}))
    folder = tmp_path / "faq_bot"
    argv = ["run", str(folder), "--store", str(tmp_path / "s.db"), "--replay", str(turns)]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 0, result.output
    assert "→ get_weather(city='Paris')" in result.output
    assert "faq_bot: Sunny." in result.output


def test_the_config_scaffold_is_lint_and_type_clean(tmp_path: Path) -> None:
    assert create("faq_bot", "--type=config", "--dir", tmp_path).exit_code == 0
    tools = Path(sys.executable).parent
    for argv in (
        [tools / "ruff", "check", "--isolated", "faq_bot"],
        [tools / "ruff", "format", "--isolated", "--check", "faq_bot"],
        [tools / "mypy", "--strict", "--no-incremental", "faq_bot/tools.py"],
    ):
        result = subprocess.run(
            argv, cwd=tmp_path, capture_output=True, text=True, timeout=BOUND_SECONDS
        )
        assert result.returncode == 0, f"{argv[1:]}: {result.stdout}{result.stderr}"
