"""CrewaiTool with real CrewAI tools.

CrewAI cannot share cairn's test environment (it pins openai<3, cairn's openai extra needs
3 or later), so it gets a venv of its own, bench/.peers/crewai, made the first time by
bench/peers.py's ``ensure_venv`` (crewai plus cairn's own dependencies, read from
pyproject.toml) and reused after. tests/tools/peer_apps/crewai_app.py runs there with
cairn's source on PYTHONPATH and prints what the agent saw and did.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
from bench import peers
from tests.support.databases import service_unavailable

from cairn.tools.crewai_tool import CrewaiTool

ROOT = Path(__file__).resolve().parents[2]
APP = Path(__file__).resolve().parent / "peer_apps" / "crewai_app.py"
CREWAI = "crewai==1.15.30"


def crewai_python() -> Path:
    cairn_dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "dependencies"
    ]
    peer = peers.Peer("crewai", "CrewAI", "", [CREWAI, *cairn_dependencies])
    try:
        return Path(peers.ensure_venv(peer, install=True))
    except RuntimeError as error:
        service_unavailable(f"no CrewAI venv: {error}")
        raise


@pytest.fixture(scope="module")
def crew_run() -> dict[str, Any]:
    python = crewai_python()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "CREWAI_DISABLE_TELEMETRY": "true"}
    env["OTEL_SDK_DISABLED"] = "true"
    done = subprocess.run(
        [str(python), str(APP)], capture_output=True, text=True, env=env, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_crewai_tools_are_declared_with_their_argument_schema(crew_run: dict[str, Any]) -> None:
    declarations = {d["name"]: d for d in crew_run["declarations"]}
    assert set(declarations) == {"word_counter", "mirror"}
    counter = declarations["word_counter"]
    assert counter["description"] == "Count the words of a text."
    schema = counter["parameters_json_schema"]
    assert schema["required"] == ["text"]
    assert schema["properties"]["text"]["description"] == "the text whose words to count"
    assert declarations["mirror"]["description"] == "Mirror a text."


def test_crewai_tools_run_and_wrong_arguments_come_back_to_the_model(
    crew_run: dict[str, Any],
) -> None:
    counted, mirrored, wrong = crew_run["responses"]
    assert counted == {"result": 4}
    assert mirrored == {"result": "edit"}
    assert "error" in wrong and "text" in json.dumps(wrong)
    assert crew_run["answer"] == "4 words; edit."


def test_something_that_is_not_a_crewai_tool_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match=r"CrewaiTool needs a CrewAI tool.*no run method"):
        CrewaiTool(object(), name="x")
