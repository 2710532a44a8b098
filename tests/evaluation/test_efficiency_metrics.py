"""The informational efficiency metrics: hand-computed values, n/a rules, ADK's numbers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from cairn.evaluation.eval_case import (
    IntermediateData,
    Invocation,
    InvocationEvent,
    InvocationEvents,
)
from cairn.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
from cairn.evaluation.eval_metrics import DurationDetails, EvalMetric, EvalStatus, TokenUsageDetails
from cairn.evaluation.evaluator import EvaluationResult
from cairn.evaluation.metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY

ADK_PYTHON = Path(__file__).resolve().parents[2] / "bench" / ".peers" / "adk" / "bin" / "python"
USER = types.Content(role="user", parts=[types.Part.from_text(text="q")])


def run(metric: str, invocations: list[Invocation]) -> EvaluationResult:
    evaluator = DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(EvalMetric(metric_name=metric))
    result = evaluator.evaluate_invocations(invocations)
    assert isinstance(result, EvaluationResult)
    return result


def model_event(
    usage: dict[str, int] | None = None, calls: int = 0, version: str | None = None
) -> InvocationEvent:
    parts = [types.Part(function_call=types.FunctionCall(name=f"t{i}")) for i in range(calls)]
    return InvocationEvent(
        author="agent",
        content=types.Content(role="model", parts=parts or [types.Part.from_text(text="hi")]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(**usage) if usage else None,
        model_version=version,
    )


def events(*items: InvocationEvent, **timing: float) -> Invocation:
    return Invocation(
        user_content=USER,
        intermediate_data=InvocationEvents(invocation_events=list(items)),
        **timing,
    )


TURN_1 = events(
    model_event(
        {"prompt_token_count": 100, "candidates_token_count": 10, "thoughts_token_count": 5},
        calls=2,
    ),
    InvocationEvent(
        author="agent",
        content=types.Content(role="user", parts=[types.Part.from_text(text="tool said")]),
    ),
    model_event(
        {"prompt_token_count": 130, "candidates_token_count": 20, "cached_content_token_count": 90}
    ),
    duration=2.0,
    model_duration=1.5,
    tool_duration=0.25,
)
TURN_2 = events(
    model_event({"prompt_token_count": 50, "candidates_token_count": 30}, version="m-1"),
    duration=1.0,
)
HAND_WRITTEN = Invocation(
    user_content=USER,
    intermediate_data=IntermediateData(tool_uses=[types.FunctionCall(name="a")]),
)


def test_tool_calls_and_model_calls_per_invocation() -> None:
    tools = run("tool_call_count_v1", [TURN_1, TURN_2, HAND_WRITTEN])
    assert [r.score for r in tools.per_invocation_results] == [2.0, 0.0, 1.0]
    assert tools.overall_score == 1.0
    assert tools.overall_eval_status is EvalStatus.INFORMATIONAL
    assert {r.eval_status for r in tools.per_invocation_results} == {EvalStatus.INFORMATIONAL}
    models = run("inference_call_count_v1", [TURN_1, TURN_2, HAND_WRITTEN])
    # The tool-response event has neither usage nor a model version; the lists shape is n/a.
    assert [r.score for r in models.per_invocation_results] == [2.0, 1.0, None]
    assert models.overall_score == 1.5  # n/a is left out of the mean


def test_token_usage_totals_nest_and_average_over_every_invocation() -> None:
    result = run("token_usage_v1", [TURN_1, TURN_2])
    first = result.per_invocation_results[0].token_usage_details
    # input 100 + 130; output (10 + 5) + 20; total 265.
    assert first == TokenUsageDetails(
        total_tokens=265,
        input_tokens=230,
        prompt_tokens=230,
        cached_tokens=90,
        output_tokens=35,
        candidates_tokens=30,
        reasoning_tokens=5,
    )
    assert [r.score for r in result.per_invocation_results] == [265, 80]
    # A count one invocation lacks counts as 0 in the mean (cached 90 / 2); tool-use tokens
    # nobody reported stay n/a.
    assert result.overall_token_usage_details == TokenUsageDetails(
        total_tokens=172.5,
        input_tokens=140,
        prompt_tokens=140,
        cached_tokens=45,
        output_tokens=32.5,
        candidates_tokens=30,
        reasoning_tokens=2.5,
    )
    assert result.overall_score == 172.5
    assert run("token_usage_v1", [HAND_WRITTEN]).overall_score is None


def test_duration_splits_into_model_tool_and_framework_time() -> None:
    result = run("invocation_duration_v1", [TURN_1, TURN_2, HAND_WRITTEN])
    details = [r.duration_details for r in result.per_invocation_results]
    assert details[0] == DurationDetails(
        total_seconds=2.0, model_seconds=1.5, tool_seconds=0.25, framework_seconds=0.25
    )
    # Without the model/tool split the framework share is unknown, not the whole turn.
    assert details[1] == DurationDetails(total_seconds=1.0)
    assert details[2] == DurationDetails()  # not timed by the eval: n/a, not zero
    assert result.overall_duration_details == DurationDetails(
        total_seconds=1.5, model_seconds=1.5, tool_seconds=0.25, framework_seconds=0.25
    )
    assert result.overall_score == 1.5


@pytest.mark.parametrize(
    "metric",
    ["tool_call_count_v1", "inference_call_count_v1", "token_usage_v1", "invocation_duration_v1"],
)
def test_an_efficiency_metric_refuses_a_threshold_and_reports_nothing_for_no_invocations(
    metric: str,
) -> None:
    [named] = [
        m
        for m in get_eval_metrics_from_config(EvalConfig(criteria={metric: 1.0}))
        if m.metric_name == metric
    ]
    with pytest.raises(ValueError, match="takes no threshold; remove it"):
        DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(named)
    empty = run(metric, [])
    assert (empty.overall_score, empty.overall_eval_status) == (None, EvalStatus.INFORMATIONAL)


def test_adks_efficiency_metrics_give_the_same_numbers() -> None:
    if not ADK_PYTHON.exists():
        pytest.skip(f"google-adk's venv is missing ({ADK_PYTHON}); make it with bench/peers.py")
    invocations = [TURN_1, TURN_2, HAND_WRITTEN]
    metrics = [
        "tool_call_count_v1",
        "inference_call_count_v1",
        "token_usage_v1",
        "invocation_duration_v1",
    ]
    requests = [
        {
            "metric": m,
            "invocations": [i.model_dump(mode="json", exclude_none=True) for i in invocations],
        }
        for m in metrics
    ]
    ours: list[dict[str, Any]] = []
    for metric in metrics:
        result = run(metric, invocations)
        details = result.overall_token_usage_details or result.overall_duration_details
        ours.append(
            {
                "scores": [r.score for r in result.per_invocation_results],
                "overall": result.overall_score,
                "status": result.overall_eval_status.name,
                "details": details.model_dump() if details else None,
            }
        )
    done = subprocess.run(
        [str(ADK_PYTHON), str(Path(__file__).with_name("adk_efficiency.py"))],
        input=json.dumps(requests),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ours
