"""``cairn create``: the scaffold's own test passes, and ``cairn run`` talks to it."""

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

REPO = Path(__file__).resolve().parents[2]


def create(*args: str | Path) -> Any:
    return CliRunner().invoke(main, ["create", *map(str, args)])


def test_the_scaffold_has_its_files_and_says_what_next(tmp_path: Path) -> None:
    result = create("weather_bot", "--dir", tmp_path)
    assert result.exit_code == 0, result.output
    project = tmp_path / "weather_bot"
    for name in ("agent.py", "__init__.py", ".env.example", "tests/test_agent.py", "README.md"):
        assert (project / name).is_file(), name
    env = (project / ".env.example").read_text()
    assert "GOOGLE_API_KEY=" in env and "OPENAI_API_KEY" in env and "CAIRN_STORE" in env
    assert 'MODEL = "gemini-2.5-flash"' in (project / "agent.py").read_text()
    assert f"cairn run {project}" in result.output
    assert f"pytest {project}/tests" in result.output


def test_model_option_goes_into_the_agent(tmp_path: Path) -> None:
    assert create("bot", "--dir", tmp_path, "--model", "openai/gpt-4o-mini").exit_code == 0
    assert 'MODEL = "openai/gpt-4o-mini"' in (tmp_path / "bot" / "agent.py").read_text()


def test_the_generated_test_passes_without_an_api_key(tmp_path: Path) -> None:
    assert create("weather_bot", "--dir", tmp_path).exit_code == 0
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "weather_bot/tests", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout


@pytest.mark.parametrize("name", ["1abc", "my-agent", "with space", ""])
def test_names_that_are_not_identifiers_are_refused(tmp_path: Path, name: str) -> None:
    result = create(name, "--dir", tmp_path)
    assert result.exit_code == 2
    assert "not a Python identifier" in result.output
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("name", ["class", "json", "cairn"])
def test_names_that_would_break_imports_are_refused(tmp_path: Path, name: str) -> None:
    result = create(name, "--dir", tmp_path)
    assert result.exit_code == 2
    assert "choose another NAME" in result.output


def test_a_non_empty_directory_is_refused_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "notes.txt").write_text("mine")
    refused = create("bot", "--dir", tmp_path)
    assert refused.exit_code == 2
    assert "not empty" in refused.output and "--force" in refused.output
    assert not (tmp_path / "bot" / "agent.py").exists()
    forced = create("bot", "--dir", tmp_path, "--force")
    assert forced.exit_code == 0, forced.output
    assert (tmp_path / "bot" / "agent.py").is_file()
    assert (tmp_path / "bot" / "notes.txt").read_text() == "mine"


def test_an_empty_directory_is_used(tmp_path: Path) -> None:
    (tmp_path / "bot").mkdir()
    assert create("bot", "--dir", tmp_path).exit_code == 0


def _weather_reply(request: LlmRequest) -> Any:
    """Call get_weather for the city asked about, then answer with its report."""
    last = request.contents[-1].parts[0]
    if last.function_response is not None:
        return f"Weather: {last.function_response.response['report']}."
    return Call("get_weather", city=(last.text or "").rsplit(" ", 1)[-1].rstrip("?"))


class _WeatherLlm(ScriptedLlm):
    """Serves the model string ``scripted-weather``: the scaffold run with no provider."""

    def __init__(self, **data: Any) -> None:
        super().__init__(respond=_weather_reply, **data)

    @classmethod
    def supported_models(cls) -> list[str]:
        return ["scripted-weather"]


@pytest.fixture
def scripted_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setattr(LLMRegistry, "_registered", list(LLMRegistry._registered))
    LLMRegistry.register(_WeatherLlm)
    yield "scripted-weather"


def test_cairn_run_talks_to_the_scaffold(tmp_path: Path, scripted_model: str) -> None:
    assert create("weather_bot", "--dir", tmp_path, "--model", scripted_model).exit_code == 0
    turns = tmp_path / "turns.json"
    turns.write_text(json.dumps({"queries": ["weather in Paris?"]}))
    result = CliRunner().invoke(
        main,
        [
            "run",
            str(tmp_path / "weather_bot"),
            "--store",
            str(tmp_path / "sessions.db"),
            "--replay",
            str(turns),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "→ get_weather(city='Paris')" in result.output
    assert "weather_bot: Weather: sunny, 21 °C." in result.output


def test_the_scaffold_is_lint_and_type_clean(tmp_path: Path) -> None:
    """Users start from clean code: ruff's defaults and mypy --strict pass on it."""
    assert create("weather_bot", "--dir", tmp_path).exit_code == 0
    tools = Path(sys.executable).parent
    for argv in (
        [tools / "ruff", "check", "--isolated", "weather_bot"],
        [tools / "ruff", "format", "--isolated", "--check", "weather_bot"],
        [tools / "mypy", "--strict", "--no-incremental", "weather_bot"],
    ):
        result = subprocess.run(
            argv, cwd=tmp_path, capture_output=True, text=True, timeout=BOUND_SECONDS
        )
        assert result.returncode == 0, f"{argv[1:]}: {result.stdout}{result.stderr}"
