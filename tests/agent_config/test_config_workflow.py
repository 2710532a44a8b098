"""A workflow declared in YAML (tests/agent_config/apps/cfg_flow, ``agent_class: Workflow``)
in ADK's edge syntax: chains, a fan-out into an inline JoinNode, a routing map with an inline
LlmAgent, an edge mapping, a nested workflow from its own file. Run on memory and SQLite
with its pause answered by a fresh load (as another process would), through ``cairn run``
in two processes, and its mistakes reported at their file, line and edge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from tests.support.waiting import BOUND_SECONDS

from cairn import Runner
from cairn.agents import LlmAgent
from cairn.agents.agent_config_error import AgentConfigError
from cairn.agents.config_agent_utils import from_config
from cairn.workflow import JoinNode, Workflow

APPS = Path(__file__).resolve().parent / "apps"
FLOW = APPS / "cfg_flow"
RUNS_ENV = "CAIRN_CFG_FLOW_RUNS"

WriteConfig = Callable[..., Path]


@pytest.fixture
def load(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[], Workflow]:
    monkeypatch.syspath_prepend(str(APPS))
    monkeypatch.setenv(RUNS_ENV, str(tmp_path / "runs.txt"))

    def fresh() -> Workflow:
        for name in [n for n in sys.modules if n == "cfg_flow" or n.startswith("cfg_flow.")]:
            monkeypatch.delitem(sys.modules, name)
        built = from_config(FLOW / "root_agent.yaml")
        assert isinstance(built, Workflow)
        return built

    return fresh


def runs(tmp_path: Path) -> list[str]:
    path = tmp_path / "runs.txt"
    return path.read_text().splitlines() if path.exists() else []


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def answer(value: str) -> types.Content:
    response = types.FunctionResponse(
        id="review", name="adk_request_input", response={"result": value}
    )
    return types.Content(role="user", parts=[types.Part(function_response=response)])


def test_the_graph_the_yaml_declares(load: Callable[[], Workflow]) -> None:
    flow = load()
    assert flow.name == "flow" and flow.description.startswith("Prices an order")
    assert flow.graph is not None
    nodes = flow.graph.nodes
    assert set(nodes) >= {"intake", "price", "stock", "gather", "ask_review", "decide"}
    assert {"publish", "rewriter", "notifier"} <= set(nodes)
    assert isinstance(nodes["gather"], JoinNode)
    edges = {(e.from_node.name, e.to_node.name, e.route) for e in flow.graph.edges}
    assert ("intake", "price", None) in edges and ("stock", "gather", None) in edges
    assert ("decide", "publish", "approve") in edges and ("decide", "rewriter", "revise") in edges
    assert ("rewriter", "publish", None) in edges and ("publish", "notifier", None) in edges
    rewriter = nodes["rewriter"]
    assert isinstance(getattr(rewriter, "agent", None), LlmAgent)  # an inline LlmAgent
    assert isinstance(getattr(nodes["notifier"], "agent", None), Workflow)  # from notify.yaml


async def _run(runner: Runner, message: types.Content) -> list[Any]:
    return [e async for e in runner.run_async(user_id="u", session_id="s", new_message=message)]


@pytest.mark.parametrize("verdict", ["approve", "revise"])
async def test_it_pauses_and_a_fresh_load_resumes_it(
    load: Callable[[], Workflow], service: Any, tmp_path: Path, verdict: str
) -> None:
    await service.create_session(app_name="flow", user_id="u", session_id="s")
    first = Runner(app_name="flow", agent=load(), session_service=service)
    events = await _run(first, said("two apples"))
    asks = [e for e in events if e.long_running_tool_ids]
    assert len(asks) == 1
    (call,) = asks[0].get_function_calls()
    assert call.args is not None and call.args["payload"] == {"price": 20, "stock": 3}
    assert sorted(runs(tmp_path)) == ["ask_review", "intake", "price", "stock"]

    second = Runner(app_name="flow", agent=load(), session_service=service)  # "another process"
    resumed = await _run(second, answer(verdict))
    outputs = {e.node_info.name: e.output for e in resumed if e.output is not None}
    expected = "approve" if verdict == "approve" else "rewritten"
    assert outputs["publish"] == f"published ({expected})"
    assert outputs["notify"] == f"notified: published ({expected})"
    # Nothing that finished before the pause ran again.
    assert runs(tmp_path)[4:] == ["publish", "notify"]


def test_cairn_run_resumes_it_in_another_process(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")

    def cairn(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, RUNS_ENV: str(tmp_path / "runs.txt")}
        env.pop("PYTHONPATH", None)
        return subprocess.run(
            [sys.executable, "-m", "cairn.cli", "run", str(FLOW), "--store", store, *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=BOUND_SECONDS,
        )

    def replay(name: str, queries: list[Any]) -> str:
        path = tmp_path / name
        path.write_text(json.dumps({"queries": queries}))
        return str(path)

    first = cairn("--replay", replay("a.json", ["three pears"]))
    assert first.returncode == 0, first.stdout + first.stderr
    assert "approve or revise?" in first.stdout
    session = first.stdout.split("new session ")[1].split()[0]
    answered = {"answer": {"id": "review", "response": {"result": "approve"}}}
    second = cairn("--session", session, "--replay", replay("b.json", [answered]))
    assert second.returncode == 0, second.stdout + second.stderr
    assert "notified: published (approve)" in second.stdout
    assert runs(tmp_path).count("intake") == 1 and runs(tmp_path)[-2:] == ["publish", "notify"]


BAD_EDGES = [
    (
        "  - [START, .nodes.intake, later]\n",
        "edges[0][2]",
        "unknown node 'later'",
    ),
    (
        "  - [START, .nodes.missing]\n",
        "edges[0][1]",
        "missing",
    ),
    (
        "  - [START, .nodes.NOT_A_NODE]\n",
        "edges[0][1]",
        "name a function, a node or an agent",
    ),
    (
        "  - [START, {agent_class: FunctionNode, func_code: .nodes.intake, colour: red}]\n",
        "edges[0][1].colour",
        "has no field 'colour'",
    ),
]


@pytest.mark.parametrize(("edges", "where", "problem"), BAD_EDGES)
def test_a_wrong_edge_names_its_file_line_and_place(
    write_config: WriteConfig, edges: str, where: str, problem: str
) -> None:
    path = write_config(
        "agent_class: Workflow\nname: w\nedges:\n" + edges,
        nodes_py="NOT_A_NODE = 3\n\ndef intake(node_input):\n    return node_input\n",
    )
    with pytest.raises(AgentConfigError) as raised:
        from_config(path)
    error = raised.value
    assert error.path == str(path) and error.line == 4, str(error)
    assert error.field == where and problem in error.problem, str(error)
