"""``cairn create``: the scaffold's own test passes, and ``cairn run`` talks to it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.scripted_chat_server import scripted_chat_server
from tests.support.waiting import BOUND_SECONDS

from cairn import __version__
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
    names = ("agent.py", "__init__.py", "pyproject.toml", ".env.example", ".gitignore")
    for name in (*names, "tests/test_agent.py", "README.md"):
        assert (project / name).is_file(), name
    assert 'MODEL = "gemini-2.5-flash"' in (project / "agent.py").read_text()
    assert ".env" in (project / ".gitignore").read_text().splitlines()
    assert f"pip install -e '{project}[test]'" in result.output
    assert f"cp {project}/.env.example {project}/.env" in result.output
    assert f"cairn run {project}" in result.output
    assert f"pytest {project}/tests" in result.output


def test_the_pyproject_names_cairn_and_the_test_tools(tmp_path: Path) -> None:
    assert create("weather_bot", "--dir", tmp_path).exit_code == 0
    pyproject = tomllib.loads((tmp_path / "weather_bot" / "pyproject.toml").read_text())
    project = pyproject["project"]
    assert project["name"] == "weather_bot"
    assert project["dependencies"] == [f"cairn>={__version__}"]
    tools = project["optional-dependencies"]["test"]
    assert [t.split(">=")[0] for t in tools] == ["pytest", "pytest-asyncio"]
    # The folder is the package (ADK's layout): installed, `import weather_bot` is this folder.
    assert pyproject["tool"]["setuptools"]["package-dir"] == {"weather_bot": "."}
    assert pyproject["tool"]["pytest"]["ini_options"]["asyncio_mode"] == "auto"


@pytest.mark.parametrize(
    ("model", "requirement", "variables"),
    [
        ("gemini-2.5-flash", "cairn", ["GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"]),
        ("openai/gpt-4o-mini", "cairn[openai]", ["OPENAI_API_KEY", "# OPENAI_BASE_URL"]),
        ("gpt-4o", "cairn[openai]", ["OPENAI_API_KEY", "# OPENAI_BASE_URL"]),
        ("anthropic/claude-sonnet-4-5", "cairn[anthropic]", ["ANTHROPIC_API_KEY"]),
        ("claude-sonnet-4-5", "cairn[anthropic]", ["ANTHROPIC_API_KEY"]),
        ("groq/llama-3.3-70b-versatile", "cairn[litellm]", ["# GROQ_API_KEY"]),
    ],
)
def test_the_provider_of_the_model_chooses_the_extra_and_the_env_example(
    tmp_path: Path, model: str, requirement: str, variables: list[str]
) -> None:
    result = create("bot", "--dir", tmp_path, "--model", model)
    assert result.exit_code == 0, result.output
    project = tmp_path / "bot"
    pyproject = tomllib.loads((project / "pyproject.toml").read_text())
    assert pyproject["project"]["dependencies"] == [f"{requirement}>={__version__}"]
    lines = (project / ".env.example").read_text().splitlines()
    for variable in variables:
        assert any(line.startswith(f"{variable}=") for line in lines), variable
    # One provider's file: no other provider's key to fill in.
    keys = {"GOOGLE_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"} - {v for v in variables}
    assert not any(line.split("=")[0] in keys for line in lines)
    assert "# CAIRN_STORE=.cairn/sessions.db" in lines


def test_the_env_example_reaches_a_local_openai_compatible_server(tmp_path: Path) -> None:
    """The .env.example's OPENAI_BASE_URL line, filled in, is all a local server needs: no
    key, `cairn run` reads the agent folder's .env."""
    assert create("local_bot", "--dir", tmp_path, "--model", "openai/scripted").exit_code == 0
    project = tmp_path / "local_bot"
    with scripted_chat_server() as server:
        example = (project / ".env.example").read_text()
        line = next(x for x in example.splitlines() if x.startswith("# OPENAI_BASE_URL="))
        url = line.removeprefix("# OPENAI_BASE_URL=").split()[0]
        (project / ".env").write_text(example.replace(line, f"OPENAI_BASE_URL={server.base_url}"))
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        function = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
        call = {"id": "call_1", "type": "function", "function": function}
        server.script(
            {"completion": {"choices": [_choice(tool_calls=[call])]}},
            {"completion": {"choices": [_choice(content="Sunny in Paris.")]}},
        )
        turns = tmp_path / "turns.json"
        turns.write_text(json.dumps({"queries": ["weather in Paris?"]}))
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        command = [sys.executable, "-m", "cairn.cli", "run", str(project), "--no-stream"]
        command += ["--store", str(tmp_path / "sessions.db"), "--replay", str(turns)]
        result = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=BOUND_SECONDS
        )
        bodies = server.bodies()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "local_bot: Sunny in Paris." in result.stdout
    assert [body["model"] for body in bodies] == ["scripted", "scripted"]


def _choice(**message: Any) -> dict[str, Any]:
    finish = "tool_calls" if "tool_calls" in message else "stop"
    return {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}


@pytest.mark.parametrize("kind", ["code", "config"])
def test_the_project_builds_into_an_installable_package(tmp_path: Path, kind: str) -> None:
    """`pip install -e NAME[test]` builds the folder as the package NAME, its tests left out."""
    assert create("weather_bot", "--dir", tmp_path, f"--type={kind}").exit_code == 0
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    command += ["-w", str(tmp_path / "dist"), str(tmp_path / "weather_bot")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=BOUND_SECONDS)
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = (tmp_path / "dist").glob("weather_bot-0.1.0-*.whl")
    files = {n for n in zipfile.ZipFile(wheel).namelist() if not n.startswith("weather_bot-0")}
    expected = {"tools.py", "root_agent.yaml"} if kind == "config" else {"agent.py", "__init__.py"}
    assert files == {f"weather_bot/{name}" for name in expected}


def test_model_option_goes_into_the_agent(tmp_path: Path) -> None:
    assert create("bot", "--dir", tmp_path, "--model", "openai/gpt-4o-mini").exit_code == 0
    assert 'MODEL = "openai/gpt-4o-mini"' in (tmp_path / "bot" / "agent.py").read_text()


@pytest.mark.parametrize(("where", "target"), [("above", "weather_bot/tests"), ("inside", "")])
def test_the_generated_test_passes_without_an_api_key(
    tmp_path: Path, where: str, target: str
) -> None:
    """From the folder above (as the next steps say) or inside the project (pytest's settings
    in its pyproject.toml), with this venv's python and no key."""
    assert create("weather_bot", "--dir", tmp_path).exit_code == 0
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("PYTHONPATH", None)
    cwd = tmp_path if where == "above" else tmp_path / "weather_bot"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    result = subprocess.run(
        command + ([target] if target else []),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout
    assert "warning" not in result.stdout.lower()


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


GUIDE = REPO / "docs" / "getting-started.md"


def _guide_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.DOTALL)


def test_the_getting_started_guide_shows_what_cairn_create_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/getting-started.md's `cairn create` and its printed next steps, as they are."""
    monkeypatch.chdir(tmp_path)
    result = create("weather_bot", "--model", "openai/gpt-4o-mini")
    assert result.exit_code == 0, result.output
    shown = next(b for b in _guide_blocks("text") if b.startswith("created weather_bot/"))
    assert result.output == shown


def test_the_getting_started_guides_create_commands_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every `cairn create` line of the guide (code blocks and tables) makes a project whose
    .env.example lists the variable the guide says to fill in."""
    text = GUIDE.read_text(encoding="utf-8")
    commands = set(re.findall(r"cairn create weather_bot[^`\n]*", text))
    commands = {c.split("  #")[0].strip() for c in commands if "<" not in c}
    assert len(commands) >= 4, commands
    for command in sorted(commands):
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        folder.mkdir()
        monkeypatch.chdir(folder)
        result = create(*command.split()[2:])
        assert result.exit_code == 0, f"{command}: {result.output}"
        model = command.partition("--model ")[2] or "gemini-2.5-flash"
        variable = next(v for prefix, v in _FILLED_IN.items() if model.startswith(prefix))
        lines = (folder / "weather_bot" / ".env.example").read_text().splitlines()
        assert f"{variable}=" in lines, command


# The variable the guide says to fill in, by model prefix.
_FILLED_IN = {"openai/": "OPENAI_API_KEY", "anthropic/": "ANTHROPIC_API_KEY", "": "GOOGLE_API_KEY"}
