"""``cairn eval_set``: an eval set saved beside the agent, simulated-user cases added from
scenarios, and ``cairn eval`` running them by id with a model-driven user."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.scripted_judges import ScriptedJudges

from cairn.cli import main
from cairn.evaluation.local_eval_sets_manager import LocalEvalSetsManager
from cairn.models.llm_request import LlmRequest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "weather_eval"


def cairn(*args: str | Path) -> tuple[int, str]:
    result = CliRunner(env={"COLUMNS": "300"}).invoke(
        main, [str(a) for a in args], catch_exceptions=False
    )
    return result.exit_code, result.output


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    copy = tmp_path / "weather_eval"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns(".adk", "__pycache__"))
    return copy


def test_create_then_add_scenarios_then_run_them_with_a_simulated_user(
    agent_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cairn("eval_set", "create", agent_dir, "smoke")[0] == 0
    code, out = cairn("eval_set", "create", agent_dir, "smoke")
    assert code == 2 and "already exists" in out

    scenarios = tmp_path / "scenarios.json"
    scenarios.write_text(
        json.dumps(
            {
                "scenarios": [
                    {
                        "starting_prompt": "What is the weather in Lisbon?",
                        "conversation_plan": "Ask for Lisbon's weather, then for Beijing's.",
                    }
                ]
            }
        )
    )
    session_input = tmp_path / "session_input.json"
    session_input.write_text(json.dumps({"app_name": "weather_eval", "user_id": "sim"}))
    args = ["--scenarios_file", scenarios, "--session_input_file", session_input]
    code, out = cairn("eval_set", "add_eval_case", agent_dir, "smoke", *args)
    assert code == 0 and "added to eval set 'smoke'" in out
    code, out = cairn("eval_set", "add_eval_case", agent_dir, "smoke", *args)
    assert code == 0 and "skipped" in out
    saved = LocalEvalSetsManager(agents_dir=str(agent_dir.parent)).get_eval_set(
        "weather_eval", "smoke"
    )
    assert saved is not None and len(saved.eval_cases) == 1

    # The simulated user: a scripted model that follows the plan, then says it is done.
    judges = ScriptedJudges(monkeypatch)
    seen: list[str] = []

    def user(request: LlmRequest) -> Any:
        prompt = "".join(p.text or "" for c in request.contents for p in c.parts or [])
        seen.append(prompt)
        return "What is the weather in Beijing?" if len(seen) == 1 else "</finished>"

    judges.add("scripted-user", respond=user)
    # A custom metric of the user's: every turn of the agent called a tool.
    (tmp_path / "turn_metrics.py").write_text(
        "from cairn.evaluation.eval_case import get_all_tool_calls\n"
        "from cairn.evaluation.evaluator import EvalStatus, EvaluationResult, "
        "PerInvocationResult\n\n"
        "def every_turn_uses_a_tool(eval_metric, actual, expected, scenario):\n"
        "    scores = [1.0 if get_all_tool_calls(i.intermediate_data) else 0.0 for i in actual]\n"
        "    status = lambda s: EvalStatus.PASSED if s >= eval_metric.criterion.threshold "
        "else EvalStatus.FAILED\n"
        "    overall = sum(scores) / len(scores)\n"
        "    return EvaluationResult(overall_score=overall, overall_eval_status=status(overall),\n"
        "        per_invocation_results=[PerInvocationResult(actual_invocation=i, score=s, "
        "eval_status=status(s)) for i, s in zip(actual, scores)])\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "criteria": {"every_turn_uses_a_tool": 1.0},
                "custom_metrics": {
                    "every_turn_uses_a_tool": {
                        "code_config": {"name": "turn_metrics.every_turn_uses_a_tool"}
                    }
                },
                "user_simulator_config": {"model": "scripted-user", "max_allowed_invocations": 5},
            }
        )
    )
    code, out = cairn("eval", agent_dir, "smoke", "--config", config, "--print-detailed-results")
    assert "What is the weather in Lisbon?" in out and "What is the weather in Beijing?" in out
    assert "It is 12°C in Beijing." in out  # the agent answered the simulated user
    assert "Ask for Lisbon's weather, then for Beijing's." in seen[0]
    assert "It is 19°C in Lisbon." in seen[0]  # the simulator was shown the agent's reply
    assert code == 0, out
    assert "1 of 1 cases passed" in out


def test_adding_to_a_missing_eval_set_is_refused(agent_dir: Path, tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios.json"
    scenarios.write_text('{"scenarios": []}')
    session_input = tmp_path / "session_input.json"
    session_input.write_text('{"app_name": "weather_eval", "user_id": "sim"}')
    code, out = cairn(
        "eval_set",
        "add_eval_case",
        agent_dir,
        "nope",
        "--scenarios_file",
        scenarios,
        "--session_input_file",
        session_input,
    )
    assert code == 2 and "cairn eval_set create" in out
