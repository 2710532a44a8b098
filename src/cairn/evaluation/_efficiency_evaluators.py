"""The informational efficiency metrics, reported on every eval (lower is better).

- ``tool_call_count_v1``: tool calls per invocation.
- ``inference_call_count_v1``: model calls per invocation (events shape only).
- ``token_usage_v1``: tokens per invocation, with a breakdown by kind.
- ``invocation_duration_v1``: seconds per invocation, split into model, tool and framework.

Each reports a value per invocation and their mean for the case, with status INFORMATIONAL:
they never pass or fail, so a threshold for one is an error. None means not available (the
invocation carries no such data), never zero.
"""

from __future__ import annotations

from google.genai import types as genai_types
from typing_extensions import override

from .eval_case import (
    ConversationScenario,
    Invocation,
    InvocationEvents,
    get_all_tool_calls,
    get_all_usage_metadata,
)
from .eval_metrics import DurationDetails, EvalMetric, TokenUsageDetails
from .evaluator import EvalStatus, EvaluationResult, Evaluator, PerInvocationResult

_INFORMATIONAL = EvalStatus.INFORMATIONAL


def _refuse_threshold(eval_metric: EvalMetric | None) -> None:
    if eval_metric is None or (eval_metric.threshold is None and eval_metric.criterion is None):
        return
    raise ValueError(
        f"`{eval_metric.metric_name}` reports a value and never passes or fails, so it takes "
        "no threshold; remove it from the eval config's `criteria` (it is reported on every "
        "eval anyway)."
    )


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


class _CountEvaluator(Evaluator):
    """An efficiency metric whose value per invocation is one number (or None)."""

    def __init__(self, eval_metric: EvalMetric | None = None) -> None:
        _refuse_threshold(eval_metric)
        self._eval_metric = eval_metric

    def _value(self, invocation: Invocation) -> float | None:
        raise NotImplementedError

    @override
    def evaluate_invocations(
        self,
        actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> EvaluationResult:
        results = [
            PerInvocationResult(
                actual_invocation=i, score=self._value(i), eval_status=_INFORMATIONAL
            )
            for i in actual_invocations
        ]
        if not results:
            return EvaluationResult(overall_eval_status=_INFORMATIONAL)
        return EvaluationResult(
            overall_score=_mean([r.score for r in results]),
            overall_eval_status=_INFORMATIONAL,
            per_invocation_results=results,
        )


class _ToolCallCountV1Evaluator(_CountEvaluator):
    """Tool calls per invocation."""

    def _value(self, invocation: Invocation) -> float | None:
        return float(len(get_all_tool_calls(invocation.intermediate_data)))


class _InferenceCallCountV1Evaluator(_CountEvaluator):
    """Model calls per invocation: events that carry usage metadata or a model version.

    None for an invocation in the lists shape, which records no model calls.
    """

    def _value(self, invocation: Invocation) -> float | None:
        data = invocation.intermediate_data
        if not isinstance(data, InvocationEvents):
            return None
        return float(
            sum(
                1
                for event in data.invocation_events
                if event.usage_metadata is not None or event.model_version is not None
            )
        )


def _plus(total: float | None, count: int | None) -> float | None:
    """Adds a reported count; an unreported one leaves the total as it is (even None)."""
    return total if count is None else (total or 0) + count


def _either(first: int | None, second: int | None) -> int | None:
    """The sum of two counts, None when neither was reported."""
    return None if first is None and second is None else (first or 0) + (second or 0)


def _add_call(
    totals: TokenUsageDetails, usage: genai_types.GenerateContentResponseUsageMetadata
) -> None:
    # input = prompt + tool-use prompt; output = candidates + thoughts.
    prompt, tool_use = usage.prompt_token_count, usage.tool_use_prompt_token_count
    candidates, thoughts = usage.candidates_token_count, usage.thoughts_token_count
    totals.input_tokens = _plus(totals.input_tokens, _either(prompt, tool_use))
    totals.prompt_tokens = _plus(totals.prompt_tokens, prompt)
    totals.cached_tokens = _plus(totals.cached_tokens, usage.cached_content_token_count)
    totals.tool_use_tokens = _plus(totals.tool_use_tokens, tool_use)
    totals.output_tokens = _plus(totals.output_tokens, _either(candidates, thoughts))
    totals.candidates_tokens = _plus(totals.candidates_tokens, candidates)
    totals.reasoning_tokens = _plus(totals.reasoning_tokens, thoughts)


class _TokenUsageV1Evaluator(Evaluator):
    """Tokens per invocation (input + output), with each kind in TokenUsageDetails."""

    def __init__(self, eval_metric: EvalMetric | None = None) -> None:
        _refuse_threshold(eval_metric)
        self._eval_metric = eval_metric

    @staticmethod
    def _details(invocation: Invocation) -> TokenUsageDetails:
        totals = TokenUsageDetails()
        for usage in get_all_usage_metadata(invocation):
            _add_call(totals, usage)
        if totals.input_tokens is not None or totals.output_tokens is not None:
            totals.total_tokens = (totals.input_tokens or 0) + (totals.output_tokens or 0)
        return totals

    @staticmethod
    def _average(all_details: list[TokenUsageDetails]) -> TokenUsageDetails:
        # A backend leaves out a count a call did not spend (no thinking, no thoughts count),
        # so an invocation without a count that others report counts as 0 in the mean; a
        # count no invocation reports stays None.
        averaged: dict[str, float | None] = {}
        for field in TokenUsageDetails.model_fields:
            values = [getattr(details, field) for details in all_details]
            present = [v for v in values if v is not None]
            averaged[field] = sum(present) / len(values) if present else None
        return TokenUsageDetails(**averaged)

    @override
    def evaluate_invocations(
        self,
        actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> EvaluationResult:
        details = [self._details(i) for i in actual_invocations]
        if not details:
            return EvaluationResult(overall_eval_status=_INFORMATIONAL)
        overall = self._average(details)
        return EvaluationResult(
            overall_score=overall.total_tokens,
            overall_eval_status=_INFORMATIONAL,
            per_invocation_results=[
                PerInvocationResult(
                    actual_invocation=invocation,
                    score=d.total_tokens,
                    eval_status=_INFORMATIONAL,
                    token_usage_details=d,
                )
                for invocation, d in zip(actual_invocations, details, strict=True)
            ],
            overall_token_usage_details=overall,
        )


class _InvocationDurationV1Evaluator(Evaluator):
    """Seconds per invocation, as measured while the eval ran it; None when it did not."""

    def __init__(self, eval_metric: EvalMetric | None = None) -> None:
        _refuse_threshold(eval_metric)
        self._eval_metric = eval_metric

    @staticmethod
    def _details(invocation: Invocation) -> DurationDetails:
        if invocation.duration is None:
            return DurationDetails()
        model, tool = invocation.model_duration, invocation.tool_duration
        # The framework's share is what is left; unknown when a part is unknown.
        framework = (
            None
            if model is None or tool is None
            else round(max(invocation.duration - model - tool, 0.0), 3)
        )
        return DurationDetails(
            total_seconds=invocation.duration,
            model_seconds=model,
            tool_seconds=tool,
            framework_seconds=framework,
        )

    @staticmethod
    def _average(all_details: list[DurationDetails]) -> DurationDetails:
        # Untimed invocations are left out of each mean (they are unknown, not fast).
        averaged: dict[str, float | None] = {}
        for field in DurationDetails.model_fields:
            mean = _mean([getattr(details, field) for details in all_details])
            averaged[field] = None if mean is None else round(mean, 3)
        return DurationDetails(**averaged)

    @override
    def evaluate_invocations(
        self,
        actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> EvaluationResult:
        details = [self._details(i) for i in actual_invocations]
        if not details:
            return EvaluationResult(overall_eval_status=_INFORMATIONAL)
        overall = self._average(details)
        return EvaluationResult(
            overall_score=overall.total_seconds,
            overall_eval_status=_INFORMATIONAL,
            per_invocation_results=[
                PerInvocationResult(
                    actual_invocation=invocation,
                    score=d.total_seconds,
                    eval_status=_INFORMATIONAL,
                    duration_details=d,
                )
                for invocation, d in zip(actual_invocations, details, strict=True)
            ],
            overall_duration_details=overall,
        )
