"""The response metrics: ``response_match_score`` (ROUGE-1, computed here) and
``response_evaluation_score`` (coherence rated by Vertex AI's hosted evaluation, which cairn
does not call)."""

from __future__ import annotations

from typing_extensions import override

from .eval_case import ConversationScenario, Invocation
from .eval_metrics import EvalMetric, PrebuiltMetrics, _get_metric_threshold
from .evaluator import EvaluationResult, Evaluator
from .final_response_match_v1 import RougeEvaluator

_MATCH = PrebuiltMetrics.RESPONSE_MATCH_SCORE.value
_COHERENCE = PrebuiltMetrics.RESPONSE_EVALUATION_SCORE.value


class ResponseEvaluator(Evaluator):
    """Evaluates the agent's final responses; give ``eval_metric``, or threshold and name."""

    def __init__(
        self,
        threshold: float | None = None,
        metric_name: str | None = None,
        eval_metric: EvalMetric | None = None,
    ) -> None:
        if eval_metric is not None and (threshold is not None or metric_name is not None):
            raise ValueError(
                "Give ResponseEvaluator either eval_metric, or threshold and metric_name."
            )
        if eval_metric is not None:
            threshold = _get_metric_threshold(eval_metric)
            metric_name = eval_metric.metric_name
        if threshold is None:
            raise ValueError("ResponseEvaluator needs a threshold (or an eval_metric).")
        if metric_name == _COHERENCE:
            raise ValueError(
                f"`{_COHERENCE}` is rated by Vertex AI's hosted evaluation service, which cairn "
                f"does not call; use `{_MATCH}` (ROUGE-1 against the expected response) or an "
                "LLM-judged metric such as `final_response_match_v2`."
            )
        if metric_name != _MATCH:
            raise ValueError(f"ResponseEvaluator computes `{_MATCH}`, not `{metric_name}`.")
        self._metric_name = metric_name
        self._threshold = threshold

    @override
    def evaluate_invocations(
        self,
        actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> EvaluationResult:
        rouge = RougeEvaluator(EvalMetric(metric_name=self._metric_name, threshold=self._threshold))
        return rouge.evaluate_invocations(
            actual_invocations, expected_invocations, conversation_scenario
        )
