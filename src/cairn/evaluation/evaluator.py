"""The interface every metric's evaluator implements, and the results it returns."""

from __future__ import annotations

from abc import ABC
from collections.abc import Awaitable
from typing import ClassVar

from pydantic import BaseModel, Field

from .eval_case import ConversationScenario, Invocation
from .eval_metrics import BaseCriterion, DurationDetails, TokenUsageDetails
from .eval_metrics import EvalStatus as EvalStatus
from .eval_rubrics import RubricScore


def _validate_invocation_lengths(
    actual_invocations: list[Invocation], expected_invocations: list[Invocation] | None
) -> None:
    """ValueError unless actual and expected invocations pair up one to one."""
    if expected_invocations is not None and len(actual_invocations) != len(expected_invocations):
        raise ValueError(
            f"The agent ran {len(actual_invocations)} invocations but the case expects "
            f"{len(expected_invocations)}; actual and expected invocations must pair up."
        )


class PerInvocationResult(BaseModel):
    """A metric's score and verdict on one invocation."""

    actual_invocation: Invocation
    expected_invocation: Invocation | None = None
    score: float | None = None
    eval_status: EvalStatus = EvalStatus.NOT_EVALUATED
    rubric_scores: list[RubricScore] | None = None
    token_usage_details: TokenUsageDetails | None = None
    duration_details: DurationDetails | None = None


class EvaluationResult(BaseModel):
    """A metric's overall score and verdict on a case, and its per-invocation results."""

    overall_score: float | None = None
    overall_eval_status: EvalStatus = EvalStatus.NOT_EVALUATED
    per_invocation_results: list[PerInvocationResult] = Field(default=[])
    overall_rubric_scores: list[RubricScore] | None = None
    overall_token_usage_details: TokenUsageDetails | None = None
    overall_duration_details: DurationDetails | None = None


class Evaluator(ABC):  # noqa: B024 (ADK: subclasses override, nothing is abstract)
    """Evaluates one metric over a case's invocations (sync, or async returning an awaitable)."""

    criterion_type: ClassVar[type[BaseCriterion]] = BaseCriterion

    def evaluate_invocations(
        self,
        actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> EvaluationResult | Awaitable[EvaluationResult]:
        """Scores the agent's invocations, against expected ones when the metric needs them."""
        raise NotImplementedError(f"{type(self).__name__} must implement evaluate_invocations")
