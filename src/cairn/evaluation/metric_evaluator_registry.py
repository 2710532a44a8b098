"""Which evaluator computes each metric, by metric name.

Every registry starts with the built-in metrics. A built-in metric is listed in
``_STANDARD_METRICS`` by the module of its evaluator and the MetricInfo provider in
``metric_info_providers``; a listed metric whose module (or provider) is not part of this
cairn yet is left out, so adding the module is all it takes to register the metric.
"""

from __future__ import annotations

import copy
import importlib
import logging
from typing import Any, NamedTuple, cast

from cairn.errors import CairnError

from .errors import UnknownMetricError
from .eval_config import EvalConfig
from .eval_metrics import EvalMetric, Interval, MetricInfo, MetricValueInfo, PrebuiltMetrics
from .evaluator import Evaluator

logger = logging.getLogger(__name__)

_PACKAGE = "cairn.evaluation"
_CUSTOM_METRIC_EVALUATOR = ("custom_metric_evaluator", "_CustomMetricEvaluator")


class _StandardMetric(NamedTuple):
    metric: PrebuiltMetrics
    module: str  # under cairn.evaluation
    evaluator: str
    info_provider: str  # a class of cairn.evaluation.metric_info_providers
    provider_takes_metric_name: bool = False


_M = PrebuiltMetrics
_STANDARD_METRICS: tuple[_StandardMetric, ...] = (
    _StandardMetric(
        _M.TOOL_TRAJECTORY_AVG_SCORE,
        "trajectory_evaluator",
        "TrajectoryEvaluator",
        "TrajectoryEvaluatorMetricInfoProvider",
    ),
    _StandardMetric(
        _M.RESPONSE_EVALUATION_SCORE,
        "response_evaluator",
        "ResponseEvaluator",
        "ResponseEvaluatorMetricInfoProvider",
        provider_takes_metric_name=True,
    ),
    _StandardMetric(
        _M.RESPONSE_MATCH_SCORE,
        "response_evaluator",
        "ResponseEvaluator",
        "ResponseEvaluatorMetricInfoProvider",
        provider_takes_metric_name=True,
    ),
    _StandardMetric(
        _M.SAFETY_V1, "safety_evaluator", "SafetyEvaluatorV1", "SafetyEvaluatorV1MetricInfoProvider"
    ),
    _StandardMetric(
        _M.MULTI_TURN_TASK_SUCCESS_V1,
        "multi_turn_task_success_evaluator",
        "MultiTurnTaskSuccessV1Evaluator",
        "MultiTurnTaskSuccessV1MetricInfoProvider",
    ),
    _StandardMetric(
        _M.MULTI_TURN_TRAJECTORY_QUALITY_V1,
        "multi_turn_trajectory_quality_evaluator",
        "MultiTurnTrajectoryQualityV1Evaluator",
        "MultiTurnTrajectoryQualityV1MetricInfoProvider",
    ),
    _StandardMetric(
        _M.MULTI_TURN_TOOL_USE_QUALITY_V1,
        "multi_turn_tool_use_quality_evaluator",
        "MultiTurnToolUseQualityV1Evaluator",
        "MultiTurnToolUseQualityV1MetricInfoProvider",
    ),
    _StandardMetric(
        _M.FINAL_RESPONSE_MATCH_V2,
        "final_response_match_v2",
        "FinalResponseMatchV2Evaluator",
        "FinalResponseMatchV2EvaluatorMetricInfoProvider",
    ),
    _StandardMetric(
        _M.RUBRIC_BASED_FINAL_RESPONSE_QUALITY_V1,
        "rubric_based_final_response_quality_v1",
        "RubricBasedFinalResponseQualityV1Evaluator",
        "RubricBasedFinalResponseQualityV1EvaluatorMetricInfoProvider",
    ),
    _StandardMetric(
        _M.HALLUCINATIONS_V1,
        "hallucinations_v1",
        "HallucinationsV1Evaluator",
        "HallucinationsV1EvaluatorMetricInfoProvider",
    ),
    _StandardMetric(
        _M.RUBRIC_BASED_TOOL_USE_QUALITY_V1,
        "rubric_based_tool_use_quality_v1",
        "RubricBasedToolUseV1Evaluator",
        "RubricBasedToolUseV1EvaluatorMetricInfoProvider",
    ),
    _StandardMetric(
        _M.PER_TURN_USER_SIMULATOR_QUALITY_V1,
        "simulation.per_turn_user_simulator_quality_v1",
        "PerTurnUserSimulatorQualityV1",
        "PerTurnUserSimulatorQualityV1MetricInfoProvider",
    ),
    _StandardMetric(
        _M.RUBRIC_BASED_MULTI_TURN_TRAJECTORY_QUALITY_V1,
        "rubric_based_multi_turn_trajectory_evaluator",
        "RubricBasedMultiTurnTrajectoryEvaluator",
        "RubricBasedMultiTurnTrajectoryMetricInfoProvider",
    ),
    _StandardMetric(
        _M.TOOL_CALL_COUNT_V1,
        "_efficiency_evaluators",
        "_ToolCallCountV1Evaluator",
        "ToolCallCountV1MetricInfoProvider",
    ),
    _StandardMetric(
        _M.INFERENCE_CALL_COUNT_V1,
        "_efficiency_evaluators",
        "_InferenceCallCountV1Evaluator",
        "InferenceCallCountV1MetricInfoProvider",
    ),
    _StandardMetric(
        _M.TOKEN_USAGE_V1,
        "_efficiency_evaluators",
        "_TokenUsageV1Evaluator",
        "TokenUsageV1MetricInfoProvider",
    ),
    _StandardMetric(
        _M.INVOCATION_DURATION_V1,
        "_efficiency_evaluators",
        "_InvocationDurationV1Evaluator",
        "InvocationDurationV1MetricInfoProvider",
    ),
)


def _optional_attribute(module: str, name: str) -> Any:
    """``module.name``, or None when that module is not part of this cairn (yet)."""
    path = f"{_PACKAGE}.{module}"
    try:
        loaded = importlib.import_module(path)
    except ModuleNotFoundError as error:
        if error.name == path:
            return None
        raise
    return getattr(loaded, name, None)


class MetricEvaluatorRegistry:
    """Metric name -> (evaluator class, MetricInfo). Each instance owns its entries."""

    def __init__(self) -> None:
        self._registry: dict[str, tuple[type[Evaluator], MetricInfo]] = {}
        # The custom function behind a custom metric, by metric name; only an eval config
        # (register_custom_metrics_from_config) writes here.
        self._custom_function_paths: dict[str, str] = {}
        self._custom_metrics: set[str] = set()
        _register_standard_metrics(self)

    def get_evaluator(self, eval_metric: EvalMetric) -> Evaluator:
        """A new evaluator for the metric; UnknownMetricError (a NotFoundError) for a name
        nothing is registered under."""
        entry = self._registry.get(eval_metric.metric_name)
        if entry is None:
            raise UnknownMetricError(
                metric_name=eval_metric.metric_name, known=list(self._registry)
            )
        evaluator_type = cast(Any, entry[0])
        if eval_metric.metric_name in self._custom_metrics:
            path = self._custom_function_path(eval_metric)
            if path is None:
                raise UnknownMetricError(
                    metric_name=f"{eval_metric.metric_name} (no custom function is named for it "
                    "in the eval config's custom_metrics)",
                    known=list(self._registry),
                )
            return cast(
                Evaluator, evaluator_type(eval_metric=eval_metric, custom_function_path=path)
            )
        return cast(Evaluator, evaluator_type(eval_metric=eval_metric))

    def _custom_function_path(self, eval_metric: EvalMetric) -> str | None:
        # Only paths that came from an eval config count; a metric's public
        # custom_function_path field could have been set by anyone.
        return self._custom_function_paths.get(
            eval_metric.metric_name, eval_metric._config_custom_function_path
        )

    def register_evaluator(self, metric_info: MetricInfo, evaluator: type[Evaluator]) -> None:
        """Registers (or replaces) the evaluator of ``metric_info.metric_name``."""
        self._register(metric_info, evaluator, custom_function_path=None)

    def _register(
        self,
        metric_info: MetricInfo,
        evaluator: type[Evaluator],
        custom_function_path: str | None,
    ) -> None:
        name = str(metric_info.metric_name)
        if name in self._registry:
            logger.info("Replacing the evaluator of metric %s with %s", name, evaluator)
        self._registry[name] = (evaluator, metric_info)
        if custom_function_path is not None:
            self._custom_function_paths[name] = custom_function_path
            self._custom_metrics.add(name)

    def get_registered_metrics(self) -> list[MetricInfo]:
        """Copies of the MetricInfo of every registered metric."""
        return [info.model_copy(deep=True) for _, info in self._registry.values()]

    def fork(self) -> MetricEvaluatorRegistry:
        """A copy with the same entries; later registrations on either do not reach the other."""
        forked = copy.copy(self)
        forked._registry = dict(self._registry)
        forked._custom_function_paths = dict(self._custom_function_paths)
        forked._custom_metrics = set(self._custom_metrics)
        return forked


def _register_standard_metrics(registry: MetricEvaluatorRegistry) -> None:
    for standard in _STANDARD_METRICS:
        evaluator = _optional_attribute(standard.module, standard.evaluator)
        provider = _optional_attribute("metric_info_providers", standard.info_provider)
        if evaluator is None or provider is None:
            continue
        instance = (
            provider(standard.metric.value) if standard.provider_takes_metric_name else provider()
        )
        registry.register_evaluator(metric_info=instance.get_metric_info(), evaluator=evaluator)


DEFAULT_METRIC_EVALUATOR_REGISTRY = MetricEvaluatorRegistry()


def _get_default_metric_info(metric_name: str, description: str = "") -> MetricInfo:
    return MetricInfo(
        metric_name=metric_name,
        description=description,
        metric_value_info=MetricValueInfo(interval=Interval(min_value=0.0, max_value=1.0)),
    )


def register_custom_metrics_from_config(
    eval_config: EvalConfig, metric_evaluator_registry: MetricEvaluatorRegistry | None = None
) -> MetricEvaluatorRegistry:
    """Registers the config's ``custom_metrics`` (a metric without ``metric_info`` gets values
    in [0, 1]) in the registry given, else in DEFAULT_METRIC_EVALUATOR_REGISTRY."""
    registry = metric_evaluator_registry or DEFAULT_METRIC_EVALUATOR_REGISTRY
    if not eval_config.custom_metrics:
        return registry
    evaluator = _optional_attribute(*_CUSTOM_METRIC_EVALUATOR)
    if evaluator is None:
        raise CairnError(
            f"The eval config declares custom metrics ({', '.join(eval_config.custom_metrics)}), "
            "but this cairn cannot run custom metric functions yet; remove them from "
            "`custom_metrics` and `criteria`."
        )
    for metric_name, config in eval_config.custom_metrics.items():
        if config.metric_info is not None:
            info = config.metric_info.model_copy()
            info.metric_name = metric_name
        else:
            info = _get_default_metric_info(metric_name, config.description)
        registry._register(info, evaluator, config.code_config.name)
    return registry
