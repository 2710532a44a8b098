"""A composed Agent Config app (tests/agent_config/apps/cfg_desk): a root LlmAgent with
sub-agents by path and by code, tools by name, by reference and from a factory with args,
an AgentTool by path, and callbacks by reference. Run through the Runner on memory and
SQLite, through ``cairn run --replay`` (and resumed by another process), and served by the
API server, all loading the folder the same way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from google.genai import types
from tests.server.harness import asgi_client, run_body
from tests.support.waiting import BOUND_SECONDS

from cairn import Runner
from cairn.agents import LlmAgent, SequentialAgent
from cairn.agents.agent_tool import AgentTool
from cairn.agents.config_agent_utils import from_config
from cairn.cli import main
from cairn.events.event import Event
from cairn.sessions import BaseSessionService
from cairn.tools.function_tool import FunctionTool

APPS = Path(__file__).resolve().parent / "apps"
DESK = APPS / "cfg_desk"
RUNS_ENV = "CAIRN_CFG_DESK_RUNS"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def desk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> LlmAgent:
    monkeypatch.syspath_prepend(str(APPS))
    monkeypatch.setenv(RUNS_ENV, str(tmp_path / "runs.txt"))
    for name in [n for n in sys.modules if n == "cfg_desk" or n.startswith("cfg_desk.")]:
        monkeypatch.delitem(sys.modules, name)  # its agent objects are fresh for each load
    agent = from_config(DESK / "root_agent.yaml")
    assert isinstance(agent, LlmAgent)
    return agent


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def texts(events: list[Event]) -> list[tuple[str, str]]:
    return [
        (e.author, part.text)
        for e in events
        if e.content and e.content.parts
        for part in e.content.parts
        if part.text
    ]


def runs(tmp_path: Path) -> list[str]:
    path = tmp_path / "runs.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_the_tree_the_yaml_declares(desk: LlmAgent) -> None:
    planner, greeter = desk.sub_agents
    assert isinstance(planner, SequentialAgent) and planner.name == "planner"
    assert [a.name for a in planner.sub_agents] == ["drafter", "reviewer"]
    assert greeter.name == "greeter" and greeter.parent_agent is desk
    lookup, refund, count, translator = desk.tools
    assert callable(lookup) and lookup.__name__ == "lookup"
    assert isinstance(refund, FunctionTool) and refund.require_confirmation is True
    assert isinstance(count, FunctionTool) and count.name == "count"
    assert isinstance(translator, AgentTool) and translator.agent.name == "translator"
    assert translator.skip_summarization is True
    assert [c.__name__ for c in desk.before_agent_callback] == ["greet"]  # type: ignore[union-attr]
    assert desk.description.startswith("Answers questions")


async def test_the_app_runs_on_each_store(
    desk: LlmAgent, service: BaseSessionService, tmp_path: Path
) -> None:
    runner = Runner(app_name="cfg_desk", agent=desk, session_service=service)
    await service.create_session(app_name="cfg_desk", user_id="u", session_id="s")

    async def turn(message: types.Content) -> list[Event]:
        return [e async for e in runner.run_async(user_id="u", session_id="s", new_message=message)]

    hours = await turn(said("opening hours?"))
    assert texts(hours)[-1] == (
        "desk",
        'results: {"lookup": {"checked": true, "city": "Paris", "hours": "9-17"}}',
    )
    translated = await turn(said("in spanish"))  # skip_summarization: the reply ends the turn
    assert [r.response for e in translated for r in e.get_function_responses()] == [
        {"result": "gracias"}
    ]
    assert translated[-1].get_function_responses() and translated[-1].is_final_response()
    await turn(said("count me"))
    planned = await turn(said("plan my day"))
    assert texts(planned)[-2:] == [
        ("drafter", "Museum at 9."),
        ("reviewer", "Reviewed: Museum at 9."),
    ]

    paused = await turn(said("a refund please"))
    assert [c.name for e in paused for c in e.get_function_calls()][-1] == (
        "adk_request_confirmation"
    )
    assert runs(tmp_path) == ["lookup"]  # the refund waits for its confirmation
    confirm = next(
        c for e in paused for c in e.get_function_calls() if c.name == "adk_request_confirmation"
    )
    answer = types.Part(
        function_response=types.FunctionResponse(
            id=confirm.id, name="adk_request_confirmation", response={"confirmed": True}
        )
    )
    done = await turn(types.Content(role="user", parts=[answer]))
    assert texts(done)[-1] == ("desk", 'results: {"refund": {"refunded": 30}}')
    assert runs(tmp_path) == ["lookup", "refund"]
    assert texts(await turn(said("hello")))[-1] == ("greeter", "Hello from the greeter.")

    stored = await service.get_session(app_name="cfg_desk", user_id="u", session_id="s")
    assert stored is not None
    assert stored.state["visitor"] == "Ada"  # before_agent_callbacks
    assert stored.state["visits"] == 1  # the factory-made tool
    assert stored.state["draft"] == "Museum at 9."  # a sub-agent's output_key
    assert stored.state["model_calls"] >= 6  # before_model_callbacks, once per model call


def replay_file(tmp_path: Path, name: str, queries: list[Any]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"queries": queries}))
    return str(path)


def test_cairn_run_replays_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RUNS_ENV, str(tmp_path / "runs.txt"))
    turns = ["opening hours?", "plan my day", "a refund please"]
    turns.append({"answer": {"id": "call-refund", "response": {"confirmed": True}}})
    result = CliRunner().invoke(
        main,
        [
            "run",
            str(DESK),
            "--store",
            str(tmp_path / "s.db"),
            "--replay",
            replay_file(tmp_path, "t.json", turns),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "app 'cfg_desk'" in result.output
    assert "→ lookup(city='Paris')" in result.output
    assert "reviewer: Reviewed: Museum at 9." in result.output
    assert 'desk: results: {"refund": {"refunded": 30}}' in result.output
    assert runs(tmp_path) == ["lookup", "refund"]


def cairn(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, RUNS_ENV: str(tmp_path / "runs.txt")}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [sys.executable, "-m", "cairn.cli", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
    )


def test_a_paused_config_app_resumes_in_another_process(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    first = cairn(
        "run",
        str(DESK),
        "--store",
        store,
        "--replay",
        replay_file(tmp_path, "a.json", ["a refund please"]),
        tmp_path=tmp_path,
    )
    assert first.returncode == 0, first.stdout + first.stderr
    assert "⏸ confirmation" in first.stdout and runs(tmp_path) == []
    session = first.stdout.split("new session ")[1].split()[0]
    answer = {"answer": {"id": "call-refund", "response": {"confirmed": True}}}
    second = cairn(
        "run",
        str(DESK),
        "--store",
        store,
        "--session",
        session,
        "--replay",
        replay_file(tmp_path, "b.json", [answer]),
        tmp_path=tmp_path,
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert 'desk: results: {"refund": {"refunded": 30}}' in second.stdout
    assert runs(tmp_path) == ["refund"]  # run once, by the second process


async def test_the_api_server_serves_config_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(RUNS_ENV, str(tmp_path / "runs.txt"))
    async with asgi_client(agents_dir=APPS) as api:
        assert "cfg_desk" in (await api.get("/list-apps")).json()
        await api.post("/apps/cfg_desk/users/ada/sessions", json={"sessionId": "s"})
        response = await api.post("/run", json=run_body("cfg_desk", "s", "opening hours?"))
        assert response.status_code == 200, response.text
        last = response.json()[-1]
        assert last["author"] == "desk" and "9-17" in last["content"]["parts"][0]["text"]
        # A broken config is the server's fault: a 500 to the client, the located error in
        # the server's log.
        await api.post("/apps/cfg_broken/users/ada/sessions", json={"sessionId": "s"})
        reply = await api.post("/run", json=run_body("cfg_broken", "s", "hi"))
        assert reply.status_code == 500
        assert (
            "cfg_broken/root_agent.yaml:3: instructions: not a key of this schema; did you "
            "mean `instruction`?" in caplog.text
        )


async def test_a_config_folder_served_alone_is_one_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RUNS_ENV, str(tmp_path / "runs.txt"))
    async with asgi_client(agents_dir=DESK) as api:  # as `cairn web path/to/cfg_desk` serves it
        assert (await api.get("/list-apps")).json() == ["cfg_desk"]


def test_cairn_run_takes_the_yaml_file_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RUNS_ENV, str(tmp_path / "runs.txt"))
    argv = ["run", str(DESK / "root_agent.yaml"), "--store", str(tmp_path / "s.db")]
    result = CliRunner().invoke(main, [*argv, "--replay", replay_file(tmp_path, "t.json", ["hi"])])
    assert result.exit_code == 0, result.output
    assert "app 'cfg_desk'" in result.output and "desk: How can I help?" in result.output
