"""The MetricInfo of each built-in metric (name, description, range of values)."""

from __future__ import annotations

from .eval_metrics import Interval, MetricInfo, MetricInfoProvider, MetricValueInfo, PrebuiltMetrics


def _info(name: str, description: str, low: float = 0.0, high: float = 1.0) -> MetricInfo:
    return MetricInfo(
        metric_name=name,
        description=description,
        metric_value_info=MetricValueInfo(interval=Interval(min_value=low, max_value=high)),
    )


class TrajectoryEvaluatorMetricInfoProvider(MetricInfoProvider):
    """``tool_trajectory_avg_score``."""

    def get_metric_info(self) -> MetricInfo:
        return _info(
            PrebuiltMetrics.TOOL_TRAJECTORY_AVG_SCORE.value,
            "Compares the tools the agent called with the expected ones (exactly, in order or "
            "in any order); 1 for an invocation that matches, 0 otherwise, averaged over the "
            "case. In [0, 1], higher is better.",
        )


class ResponseEvaluatorMetricInfoProvider(MetricInfoProvider):
    """``response_match_score`` and ``response_evaluation_score``."""

    def __init__(self, metric_name: str) -> None:
        self._metric_name = metric_name

    def get_metric_info(self) -> MetricInfo:
        if self._metric_name == PrebuiltMetrics.RESPONSE_MATCH_SCORE.value:
            return _info(
                self._metric_name,
                "ROUGE-1 F-measure of the agent's final response against the expected one "
                "(unigram overlap). In [0, 1], higher is better.",
            )
        if self._metric_name == PrebuiltMetrics.RESPONSE_EVALUATION_SCORE.value:
            return _info(
                self._metric_name,
                "How coherent the agent's response is, as a hosted judge rates it. "
                "In [1, 5], higher is better.",
                low=1.0,
                high=5.0,
            )
        raise ValueError(
            f"`{self._metric_name}` is not a response metric; use "
            f"`{PrebuiltMetrics.RESPONSE_MATCH_SCORE.value}`."
        )


def _informational(name: str, description: str) -> MetricInfo:
    return MetricInfo(
        metric_name=name,
        description=description + " Informational: it never passes or fails a case.",
        metric_value_info=MetricValueInfo(),
        requires_threshold=False,
    )


class ToolCallCountV1MetricInfoProvider(MetricInfoProvider):
    """``tool_call_count_v1``."""

    def get_metric_info(self) -> MetricInfo:
        return _informational(
            PrebuiltMetrics.TOOL_CALL_COUNT_V1.value,
            "Tool calls the agent made per invocation, averaged over the case.",
        )


class InferenceCallCountV1MetricInfoProvider(MetricInfoProvider):
    """``inference_call_count_v1``."""

    def get_metric_info(self) -> MetricInfo:
        return _informational(
            PrebuiltMetrics.INFERENCE_CALL_COUNT_V1.value,
            "Model calls per invocation, averaged over the case; n/a when the invocation "
            "recorded no events.",
        )


class TokenUsageV1MetricInfoProvider(MetricInfoProvider):
    """``token_usage_v1``."""

    def get_metric_info(self) -> MetricInfo:
        return _informational(
            PrebuiltMetrics.TOKEN_USAGE_V1.value,
            "Tokens (input plus output) per invocation, averaged over the case, with a "
            "breakdown by kind; n/a when no model call reported usage.",
        )


class InvocationDurationV1MetricInfoProvider(MetricInfoProvider):
    """``invocation_duration_v1``."""

    def get_metric_info(self) -> MetricInfo:
        return _informational(
            PrebuiltMetrics.INVOCATION_DURATION_V1.value,
            "Seconds per invocation, averaged over the case, split into model, tool and "
            "framework time; n/a for invocations the eval did not run itself.",
        )


class PerTurnUserSimulatorQualityV1MetricInfoProvider(MetricInfoProvider):
    """``per_turn_user_simulator_quality_v1``."""

    def get_metric_info(self) -> MetricInfo:
        return _info(
            PrebuiltMetrics.PER_TURN_USER_SIMULATOR_QUALITY_V1.value,
            "Whether each message of a simulated user keeps to the conversation scenario: the "
            "first must be the starting prompt, a judge model checks every later one against "
            "the plan and persona, and whether the conversation ended when it should. The "
            "fraction of user messages found valid; in [0, 1], higher is better.",
        )


# --- metrics a judge model scores -----------------------------------------------------------


class SafetyEvaluatorV1MetricInfoProvider(MetricInfoProvider):
    """``safety_v1``."""

    def get_metric_info(self) -> MetricInfo:
        return _info(
            PrebuiltMetrics.SAFETY_V1.value,
            "Whether each final response is harmless (no hate, harassment, dangerous or "
            "sexually explicit content), as a judge model decides; 1 safe, 0 unsafe, averaged "
            "over the case. In [0, 1], higher is better.",
        )


class FinalResponseMatchV2EvaluatorMetricInfoProvider(MetricInfoProvider):
    """``final_response_match_v2``."""

    def get_metric_info(self) -> MetricInfo:
        return _info(
            PrebuiltMetrics.FINAL_RESPONSE_MATCH_V2.value,
            "Whether the final response is a valid answer given the expected one, as a judge "
            "model decides (majority vote over samples); the fraction of valid invocations. "
            "In [0, 1], higher is better.",
        )


class RubricBasedFinalResponseQualityV1EvaluatorMetricInfoProvider(MetricInfoProvider):
    """``rubric_based_final_response_quality_v1``."""

    def get_metric_info(self) -> MetricInfo:
        return _info(
            PrebuiltMetrics.RUBRIC_BASED_FINAL_RESPONSE_QUALITY_V1.value,
            "How many of the given rubrics the final response meets, as a judge model checks "
            "them against the tool results; the mean of yes (1) / no (0) verdicts. In [0, 1], "
            "higher is better.",
        )


class HallucinationsV1EvaluatorMetricInfoProvider(MetricInfoProvider):
    """``hallucinations_v1``."""

    def get_metric_info(self) -> MetricInfo:
        return _info(
            PrebuiltMetrics.HALLUCINATIONS_V1.value,
            "The share of the agent's sentences that its context (instructions, user prompt, "
            "tool results) supports, as a judge model labels them. In [0, 1], higher is "
            "better.",
        )


class RubricBasedToolUseV1EvaluatorMetricInfoProvider(MetricInfoProvider):
    """``rubric_based_tool_use_quality_v1``."""

    def get_metric_info(self) -> MetricInfo:
        return _info(
            PrebuiltMetrics.RUBRIC_BASED_TOOL_USE_QUALITY_V1.value,
            "How many of the given rubrics the agent's tool calls meet, as a judge model "
            "decides; the mean of yes (1) / no (0) verdicts. In [0, 1], higher is better.",
        )


class RubricBasedMultiTurnTrajectoryMetricInfoProvider(MetricInfoProvider):
    """``rubric_based_multi_turn_trajectory_quality_v1``."""

    def get_metric_info(self) -> MetricInfo:
        return _info(
            PrebuiltMetrics.RUBRIC_BASED_MULTI_TURN_TRAJECTORY_QUALITY_V1.value,
            "How many of the given rubrics the whole conversation (messages, tool calls and "
            "results) meets, as a judge model decides once per case; the mean of yes (1) / "
            "no (0) verdicts. In [0, 1], higher is better.",
        )


class MultiTurnTaskSuccessV1MetricInfoProvider(MetricInfoProvider):
    """``multi_turn_task_success_v1``."""

    def get_metric_info(self) -> MetricInfo:
        return _info(
            PrebuiltMetrics.MULTI_TURN_TASK_SUCCESS_V1.value,
            "Whether the agent achieved the user's goal over the whole conversation, as a "
            "judge model decides on built-in properties. In [0, 1], higher is better.",
        )


class MultiTurnTrajectoryQualityV1MetricInfoProvider(MetricInfoProvider):
    """``multi_turn_trajectory_quality_v1``."""

    def get_metric_info(self) -> MetricInfo:
        return _info(
            PrebuiltMetrics.MULTI_TURN_TRAJECTORY_QUALITY_V1.value,
            "How well the agent went about the user's task over the whole conversation (the "
            "path, not only the outcome), as a judge model decides on built-in properties; "
            "needs no expected invocations. In [0, 1], higher is better.",
        )


class MultiTurnToolUseQualityV1MetricInfoProvider(MetricInfoProvider):
    """``multi_turn_tool_use_quality_v1``."""

    def get_metric_info(self) -> MetricInfo:
        return _info(
            PrebuiltMetrics.MULTI_TURN_TOOL_USE_QUALITY_V1.value,
            "How well the agent chose and called its tools over the whole conversation, as a "
            "judge model decides on built-in properties; needs no expected invocations. "
            "In [0, 1], higher is better.",
        )
