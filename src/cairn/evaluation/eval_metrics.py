"""Metrics, their criteria (thresholds and options), and their results."""

from __future__ import annotations

import abc
from enum import Enum
from typing import TypeAlias

from google.genai import types as genai_types
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializeAsAny,
    alias_generators,
    field_validator,
)
from pydantic.json_schema import SkipJsonSchema

from .common import EvalBaseModel
from .eval_case import Invocation
from .eval_rubrics import Rubric as Rubric
from .eval_rubrics import RubricScore as RubricScore


class EvalStatus(Enum):
    """The verdict of a metric on an invocation or a case."""

    PASSED = 1
    FAILED = 2
    NOT_EVALUATED = 3
    INFORMATIONAL = 4
    """A value was reported, but the metric neither passes nor fails (efficiency metrics)."""


class PrebuiltMetrics(Enum):
    """The names of the metrics that come with the evaluation."""

    TOOL_TRAJECTORY_AVG_SCORE = "tool_trajectory_avg_score"
    RESPONSE_EVALUATION_SCORE = "response_evaluation_score"
    RESPONSE_MATCH_SCORE = "response_match_score"
    SAFETY_V1 = "safety_v1"
    FINAL_RESPONSE_MATCH_V2 = "final_response_match_v2"
    RUBRIC_BASED_FINAL_RESPONSE_QUALITY_V1 = "rubric_based_final_response_quality_v1"
    HALLUCINATIONS_V1 = "hallucinations_v1"
    RUBRIC_BASED_TOOL_USE_QUALITY_V1 = "rubric_based_tool_use_quality_v1"
    PER_TURN_USER_SIMULATOR_QUALITY_V1 = "per_turn_user_simulator_quality_v1"
    MULTI_TURN_TASK_SUCCESS_V1 = "multi_turn_task_success_v1"
    MULTI_TURN_TRAJECTORY_QUALITY_V1 = "multi_turn_trajectory_quality_v1"
    MULTI_TURN_TOOL_USE_QUALITY_V1 = "multi_turn_tool_use_quality_v1"
    RUBRIC_BASED_MULTI_TURN_TRAJECTORY_QUALITY_V1 = "rubric_based_multi_turn_trajectory_quality_v1"
    # Informational efficiency metrics (lower is better; they never fail a case).
    TOOL_CALL_COUNT_V1 = "tool_call_count_v1"
    INFERENCE_CALL_COUNT_V1 = "inference_call_count_v1"
    TOKEN_USAGE_V1 = "token_usage_v1"
    INVOCATION_DURATION_V1 = "invocation_duration_v1"


MetricName: TypeAlias = str | PrebuiltMetrics
Threshold: TypeAlias = float


class JudgeModelOptions(EvalBaseModel):
    """The model that judges, and how often it is asked."""

    judge_model: str = Field(default="gemini-2.5-flash", description="The judge model's name.")
    judge_model_config: SkipJsonSchema[genai_types.GenerateContentConfig | None] = Field(
        default=None, description="Generation settings for the judge model."
    )
    num_samples: int = Field(
        default=5,
        ge=1,
        description="How many times the judge is asked per invocation; the answers are "
        "aggregated, which evens out a judge's variance.",
    )
    parallelism_limit: int = Field(
        default=1, ge=1, description="At most this many judge calls run at once."
    )


class BaseCriterion(BaseModel):
    """A metric's criterion: its threshold, plus whatever options the metric reads."""

    model_config = ConfigDict(
        alias_generator=alias_generators.to_camel, populate_by_name=True, extra="allow"
    )

    threshold: Threshold = Field(description="The score a case must reach to pass.")
    include_intermediate_responses_in_final: bool = Field(
        default=False,
        description="Judge the agent's intermediate texts (e.g. before tool calls) together "
        "with its final response, not the final response alone.",
    )


class LlmAsAJudgeCriterion(BaseCriterion):
    """The criterion of a metric a model judges."""

    judge_model_options: JudgeModelOptions = Field(
        default_factory=JudgeModelOptions, description="The judge model and its options."
    )


class RubricsBasedCriterion(BaseCriterion):
    """The criterion of a rubric-based metric."""

    judge_model_options: JudgeModelOptions = Field(
        default_factory=JudgeModelOptions, description="The judge model and its options."
    )
    rubrics: list[Rubric] = Field(
        default_factory=list,
        description="The rubrics the judge checks (metrics that do not use rubrics ignore "
        "them; rubric-based metrics require them).",
    )


class HallucinationsCriterion(BaseCriterion):
    """The criterion of the hallucinations metric."""

    judge_model_options: JudgeModelOptions = Field(
        default_factory=JudgeModelOptions, description="The judge model and its options."
    )
    evaluate_intermediate_nl_responses: bool = Field(
        default=False,
        description="Check the agent's intermediate texts as well as its final response.",
    )


class ToolTrajectoryCriterion(BaseCriterion):
    """The criterion of ``tool_trajectory_avg_score``: how actual tool calls must match."""

    class MatchType(Enum):
        """How the actual tool calls must match the expected ones."""

        EXACT = 0
        """The same calls in the same order, nothing missing and nothing extra."""
        IN_ORDER = 1
        """Every expected call, in the expected order; other calls may come between."""
        ANY_ORDER = 2
        """Every expected call, in any order; other calls may come between."""

    match_type: MatchType = Field(
        default=MatchType.EXACT, description="How actual calls must match expected ones."
    )
    ignore_args: bool = Field(
        default=False, description="Compare tool names only, not their arguments."
    )

    @field_validator("match_type", mode="before")
    @classmethod
    def _match_type_by_name(cls, value: object) -> object:
        # "in_order", "IN-ORDER" and "in order" all name IN_ORDER.
        if isinstance(value, str):
            key = value.strip().upper().replace("-", "_").replace(" ", "_")
            if key in cls.MatchType.__members__:
                return cls.MatchType[key]
        return value


class LlmBackedUserSimulatorCriterion(LlmAsAJudgeCriterion):
    """The criterion of metrics that judge a model-driven simulated user."""

    stop_signal: str = Field(
        default="</finished>",
        description="The text the simulated user sends when its plan is done (it should be "
        "the simulator's own stop signal).",
    )


class TokenUsageDetails(EvalBaseModel):
    """Token counts behind a ``token_usage_v1`` score (None: no model call reported it).

    total = input + output; input contains prompt (which contains cached) and tool-use
    tokens; output contains candidates and reasoning tokens.
    """

    total_tokens: float | None = Field(default=None, description="Input plus output tokens.")
    input_tokens: float | None = Field(default=None, description="Tokens sent to the model.")
    prompt_tokens: float | None = Field(default=None, description="Tokens of the prompt.")
    cached_tokens: float | None = Field(
        default=None, description="Prompt tokens read from the model's cache."
    )
    tool_use_tokens: float | None = Field(
        default=None, description="Input tokens of tool-use prompts."
    )
    output_tokens: float | None = Field(default=None, description="Tokens the model produced.")
    candidates_tokens: float | None = Field(
        default=None, description="Tokens of the response candidates."
    )
    reasoning_tokens: float | None = Field(
        default=None, description="Tokens the model spent thinking."
    )


class DurationDetails(EvalBaseModel):
    """Where the seconds of an invocation went (None: the invocation carries no timing).

    total = model + tool + framework; overlapping intervals count once.
    """

    total_seconds: float | None = Field(default=None, description="The whole invocation.")
    model_seconds: float | None = Field(
        default=None, description="Seconds with at least one model call in flight."
    )
    tool_seconds: float | None = Field(
        default=None, description="Seconds inside tools, not awaiting a model."
    )
    framework_seconds: float | None = Field(
        default=None, description="The rest: neither a model call nor a tool."
    )


class EvalMetric(EvalBaseModel):
    """A metric to evaluate, by name, with its criterion."""

    metric_name: str = Field(description="The metric's name.")
    threshold: float | None = Field(
        default=None,
        description="The older way to give a threshold; prefer `criterion`.",
    )
    criterion: SerializeAsAny[BaseCriterion] | None = Field(
        default=None, description="The metric's criterion."
    )
    custom_function_path: str | None = Field(
        default=None, description="The function behind a custom metric."
    )
    # The custom function named by the eval config this metric came from. Private, so that a
    # metric received from elsewhere cannot name code to run.
    _config_custom_function_path: str | None = PrivateAttr(default=None)


def _get_metric_threshold(eval_metric: EvalMetric) -> float:
    """The metric's threshold: its criterion's, else the older field's."""
    if eval_metric.criterion is not None:
        return eval_metric.criterion.threshold
    if eval_metric.threshold is not None:
        return eval_metric.threshold
    raise ValueError(
        f"Metric `{eval_metric.metric_name}` has no threshold: give it one in the eval "
        f'config, e.g. "criteria": {{"{eval_metric.metric_name}": 0.8}}.'
    )


class EvalMetricResultDetails(EvalBaseModel):
    """Details some metrics report beside their score."""

    rubric_scores: list[RubricScore] | None = Field(default=None)
    token_usage_details: TokenUsageDetails | None = Field(default=None)
    duration_details: DurationDetails | None = Field(default=None)


class EvalMetricResult(EvalMetric):
    """A metric with the score and status it got."""

    score: float | None = Field(default=None, description="None when not evaluated.")
    eval_status: EvalStatus = Field(description="The verdict.")
    details: EvalMetricResultDetails = Field(default_factory=EvalMetricResultDetails)


class EvalMetricResultPerInvocation(EvalBaseModel):
    """The metric results of one invocation, with the actual and expected invocation."""

    actual_invocation: Invocation = Field(description="What the agent did.")
    expected_invocation: Invocation | None = Field(
        default=None, description="What it should have done."
    )
    eval_metric_results: list[EvalMetricResult] = Field(default=[])


class Interval(EvalBaseModel):
    """A range of numbers, each end closed unless marked open, e.g. [0, 1] or (2, 3]."""

    min_value: float = Field(description="The lower end.")
    open_at_min: bool = Field(default=False, description="Whether the lower end is excluded.")
    max_value: float = Field(description="The upper end.")
    open_at_max: bool = Field(default=False, description="Whether the upper end is excluded.")


class MetricValueInfo(EvalBaseModel):
    """The kind of values a metric produces."""

    interval: Interval | None = Field(default=None, description="The range of its values.")


class MetricInfo(EvalBaseModel):
    """What a metric is: its name, a short description and its values."""

    metric_name: str = Field(description="The metric's name.")
    description: str | None = Field(default=None, description="Two or three lines about it.")
    metric_value_info: MetricValueInfo = Field(description="The kind of values it produces.")
    requires_threshold: bool = Field(
        default=True,
        description="False for metrics that only report a value (status INFORMATIONAL).",
    )


class MetricInfoProvider(abc.ABC):
    """Supplies a metric's MetricInfo."""

    @abc.abstractmethod
    def get_metric_info(self) -> MetricInfo:
        """The metric's MetricInfo."""
