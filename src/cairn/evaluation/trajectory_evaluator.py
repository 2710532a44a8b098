"""``tool_trajectory_avg_score``: did the agent call the expected tools?

Each invocation scores 1.0 when its tool calls match the expected ones under the criterion's
match type, else 0.0; the case's score is the mean. A score passes when it is at least the
threshold.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from google.genai import types as genai_types
from pydantic import ValidationError
from typing_extensions import override

from .eval_case import ConversationScenario, Invocation, get_agent_tool_calls
from .eval_metrics import EvalMetric, ToolTrajectoryCriterion, _get_metric_threshold
from .evaluator import (
    EvalStatus,
    EvaluationResult,
    Evaluator,
    PerInvocationResult,
    _validate_invocation_lengths,
)

MatchType = ToolTrajectoryCriterion.MatchType
Calls = list[genai_types.FunctionCall]


class TrajectoryEvaluator(Evaluator):
    """Scores tool-call trajectories against expected ones (EXACT, IN_ORDER or ANY_ORDER).

    - EXACT: the same calls in the same order, none missing, none extra.
    - IN_ORDER: the expected calls appear in that order; other calls may come between.
    - ANY_ORDER: each expected call appears (a call matches one expected call at most);
      other calls may come between.

    Two calls match when their names are equal and, unless ``ignore_args``, their arguments.
    """

    criterion_type: ClassVar[type[ToolTrajectoryCriterion]] = ToolTrajectoryCriterion

    def __init__(
        self, threshold: float | None = None, eval_metric: EvalMetric | None = None
    ) -> None:
        if threshold is not None and eval_metric is not None:
            raise ValueError("Give TrajectoryEvaluator either eval_metric or threshold, not both.")
        self._match_type = MatchType.EXACT
        self._ignore_args = False
        if eval_metric is not None and eval_metric.criterion is not None:
            try:
                criterion = self.criterion_type.model_validate(eval_metric.criterion.model_dump())
            except ValidationError as error:
                raise ValueError(
                    f"Metric `{eval_metric.metric_name}` needs a criterion like "
                    '{"threshold": 1.0, "match_type": "EXACT" | "IN_ORDER" | "ANY_ORDER", '
                    f'"ignore_args": false}}: {error.errors()[0]["msg"]}'
                ) from error
            self._threshold = criterion.threshold
            self._match_type = criterion.match_type
            self._ignore_args = criterion.ignore_args
        elif eval_metric is not None:
            self._threshold = _get_metric_threshold(eval_metric)
        elif threshold is not None:
            self._threshold = threshold
        else:
            raise ValueError("TrajectoryEvaluator needs a threshold (or an eval_metric).")

    @override
    def evaluate_invocations(
        self,
        actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> EvaluationResult:
        if expected_invocations is None:
            raise ValueError(
                "tool_trajectory_avg_score compares with expected invocations; the case has none "
                "(a conversation_scenario case has no expected tool calls)."
            )
        _validate_invocation_lengths(actual_invocations, expected_invocations)
        results = [
            self._score(actual, expected)
            for actual, expected in zip(actual_invocations, expected_invocations, strict=True)
        ]
        if not results:
            return EvaluationResult()
        overall = sum(r.score or 0.0 for r in results) / len(results)
        return EvaluationResult(
            overall_score=overall,
            overall_eval_status=self._status(overall),
            per_invocation_results=results,
        )

    def _score(self, actual: Invocation, expected: Invocation) -> PerInvocationResult:
        matches = self._matcher()(
            get_agent_tool_calls(actual.intermediate_data),
            get_agent_tool_calls(expected.intermediate_data),
        )
        score = 1.0 if matches else 0.0
        return PerInvocationResult(
            actual_invocation=actual,
            expected_invocation=expected,
            score=score,
            eval_status=self._status(score),
        )

    def _matcher(self) -> Callable[[Calls, Calls], bool]:
        matchers = {
            MatchType.EXACT: self._exact,
            MatchType.IN_ORDER: self._in_order,
            MatchType.ANY_ORDER: self._any_order,
        }
        return matchers[self._match_type]

    def _same(self, actual: genai_types.FunctionCall, expected: genai_types.FunctionCall) -> bool:
        return actual.name == expected.name and (self._ignore_args or actual.args == expected.args)

    def _exact(self, actual: Calls, expected: Calls) -> bool:
        return len(actual) == len(expected) and all(
            self._same(a, e) for a, e in zip(actual, expected, strict=True)
        )

    def _in_order(self, actual: Calls, expected: Calls) -> bool:
        # Walk the actual calls once, advancing through the expected ones as each is seen.
        position = 0
        for call in actual:
            if position < len(expected) and self._same(call, expected[position]):
                position += 1
        return position == len(expected)

    def _any_order(self, actual: Calls, expected: Calls) -> bool:
        unused = list(actual)
        for wanted in expected:
            index = next((i for i, call in enumerate(unused) if self._same(call, wanted)), None)
            if index is None:
                return False
            del unused[index]
        return True

    def _status(self, score: float) -> EvalStatus:
        return EvalStatus.PASSED if score >= self._threshold else EvalStatus.FAILED
