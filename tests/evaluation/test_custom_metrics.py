"""Custom metrics: the user's function, named in the eval config's custom_metrics, computes the
metric (sync or async), as ADK calls it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from google.genai import types

from cairn.errors import CairnError
from cairn.evaluation.custom_metric_evaluator import _CustomMetricEvaluator
from cairn.evaluation.errors import CustomMetricFunctionError
from cairn.evaluation.eval_case import Invocation
from cairn.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
from cairn.evaluation.eval_metrics import EvalMetric, EvalStatus
from cairn.evaluation.metric_evaluator_registry import (
    MetricEvaluatorRegistry,
    register_custom_metrics_from_config,
)

METRICS_MODULE = '''
    from cairn.evaluation.evaluator import EvalStatus, EvaluationResult, PerInvocationResult

    SEEN = []


    def says_paris(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
        """1 for each final response that mentions Paris."""
        SEEN.append((eval_metric.threshold, eval_metric.criterion.threshold, expected_invocations))
        results = []
        for invocation in actual_invocations:
            text = "".join(p.text or "" for p in invocation.final_response.parts)
            score = 1.0 if "Paris" in text else 0.0
            status = (
                EvalStatus.PASSED if score >= eval_metric.criterion.threshold else EvalStatus.FAILED
            )
            results.append(
                PerInvocationResult(actual_invocation=invocation, score=score, eval_status=status)
            )
        overall = sum(r.score for r in results) / len(results)
        return EvaluationResult(
            overall_score=overall,
            overall_eval_status=(
                EvalStatus.PASSED if overall >= eval_metric.criterion.threshold
                else EvalStatus.FAILED
            ),
            per_invocation_results=results,
        )


    async def answer_count(eval_metric, actual_invocations, expected_invocations, scenario):
        return EvaluationResult(
            overall_score=float(len(actual_invocations)),
            overall_eval_status=EvalStatus.PASSED,
        )


    NOT_A_FUNCTION = 3
'''


@pytest.fixture
def metrics_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = "user_metrics_for_cairn_tests"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(METRICS_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, name, raising=False)
    return name


def turn(answer: str) -> Invocation:
    return Invocation(
        user_content=types.Content(role="user", parts=[types.Part(text="Capital of France?")]),
        final_response=types.Content(role="model", parts=[types.Part(text=answer)]),
    )


def config(path: str, threshold: float = 0.5) -> EvalConfig:
    return EvalConfig.model_validate(
        {
            "criteria": {"says_paris": threshold},
            "custom_metrics": {"says_paris": {"code_config": {"name": path}}},
        }
    )


async def test_a_custom_metric_from_the_eval_config_runs_the_users_function(
    metrics_module: str,
) -> None:
    eval_config = config(f"{metrics_module}.says_paris", threshold=0.6)
    registry = register_custom_metrics_from_config(eval_config, MetricEvaluatorRegistry())
    metric = get_eval_metrics_from_config(eval_config)[0]
    evaluator = registry.get_evaluator(metric)
    assert isinstance(evaluator, _CustomMetricEvaluator)

    result = await evaluator.evaluate_invocations(
        [turn("Paris."), turn("Lyon, I think.")], None, None
    )
    assert [r.score for r in result.per_invocation_results] == [1.0, 0.0]
    assert result.overall_score == 0.5 and result.overall_eval_status == EvalStatus.FAILED
    # The function gets a copy whose old threshold field is cleared; the criterion keeps it.
    seen = __import__(metrics_module).SEEN
    assert seen == [(None, 0.6, None)]
    assert metric.threshold == 0.6  # the caller's metric is untouched


async def test_an_async_custom_metric_is_awaited(metrics_module: str) -> None:
    evaluator = _CustomMetricEvaluator(
        EvalMetric(metric_name="answer_count", threshold=1.0),
        custom_function_path=f"{metrics_module}.answer_count",
    )
    result = await evaluator.evaluate_invocations([turn("a"), turn("b"), turn("c")])
    assert result.overall_score == 3.0


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("no_such_module_anywhere.metric", "module `no_such_module_anywhere` does not import"),
        ("{module}.missing", "has no `missing`"),
        ("{module}.NOT_A_FUNCTION", "`NOT_A_FUNCTION` is not a function"),
        ("just_a_name", "not a dotted path"),
    ],
)
def test_a_custom_metric_function_that_cannot_be_found_is_a_typed_error(
    metrics_module: str, path: str, problem: str
) -> None:
    path = path.format(module=metrics_module)
    with pytest.raises(CustomMetricFunctionError, match=problem) as raised:
        _CustomMetricEvaluator(
            EvalMetric(metric_name="m", threshold=1.0), custom_function_path=path
        )
    assert isinstance(raised.value, ImportError) and isinstance(raised.value, CairnError)
    assert f"`{path}`" in str(raised.value) and "custom_metrics" in str(raised.value)
