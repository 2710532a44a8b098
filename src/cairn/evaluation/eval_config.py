"""The eval config (``test_config.json``): which metrics to run, with which criteria."""

from __future__ import annotations

import json
import logging
import os
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SerializeAsAny,
    Tag,
    ValidationError,
    alias_generators,
    model_validator,
)

from cairn.agents.common_configs import CodeConfig

from ._validation_errors import first_error_location
from .constants import DEFAULT_LIVE_TIMEOUT_SECONDS
from .errors import EvalFileError
from .eval_metrics import BaseCriterion, EvalMetric, MetricInfo, PrebuiltMetrics, Threshold
from .simulation.llm_backed_user_simulator import LlmBackedUserSimulatorConfig

logger = logging.getLogger(__name__)

# A user simulator config written before configs carried a `type` is the model-driven one.
_DEFAULT_USER_SIMULATOR_TYPE = "llm_backed"

# `type` value -> the config class it selects. (ADK's audio simulator, "llm_audio", is not in
# cairn yet.) The tag is the class name, so a validation error's location names the field
# inside the config, not the tag.
_USER_SIMULATOR_CONFIG_TYPES: dict[str, type[BaseModel]] = {
    "llm_backed": LlmBackedUserSimulatorConfig,
}


def _user_simulator_config_tag(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    config_type = _USER_SIMULATOR_CONFIG_TYPES.get(kind) if isinstance(kind, str) else None
    return config_type.__name__ if config_type else None


UserSimulatorConfig = Annotated[
    Annotated[LlmBackedUserSimulatorConfig, Tag(LlmBackedUserSimulatorConfig.__name__)],
    Discriminator(
        _user_simulator_config_tag,
        custom_error_type="user_simulator_type",
        custom_error_message="the user simulator config must be an object whose `type` is "
        + " or ".join(f"'{kind}'" for kind in _USER_SIMULATOR_CONFIG_TYPES)
        + f" (no `type` means '{_DEFAULT_USER_SIMULATOR_TYPE}')",
    ),
]
"""A user simulator config, its class chosen by ``type`` (validate with pydantic's
TypeAdapter(UserSimulatorConfig))."""


class CustomMetricConfig(BaseModel):
    """A metric implemented by a function of the user's."""

    model_config = ConfigDict(alias_generator=alias_generators.to_camel, populate_by_name=True)

    code_config: CodeConfig = Field(description="The function, by its fully qualified name.")
    metric_info: MetricInfo | None = Field(default=None, description="The metric's info.")
    description: str = Field(default="", description="The metric's description.")


class LiveModelConfig(BaseModel):
    """Settings for evaluating a bidirectional-streaming (live) model."""

    model_config = ConfigDict(alias_generator=alias_generators.to_camel, populate_by_name=True)

    timeout_seconds: int = Field(
        default=DEFAULT_LIVE_TIMEOUT_SECONDS,
        description="How long to wait for the model to finish its turn.",
    )


class EvalConfig(BaseModel):
    """Which metrics an eval runs, and the criterion of each.

    ``criteria`` maps a metric name to a bare threshold (``"response_match_score": 0.8``) or to
    a criterion object (``{"threshold": 1.0, "match_type": "IN_ORDER"}``).
    """

    model_config = ConfigDict(alias_generator=alias_generators.to_camel, populate_by_name=True)

    criteria: dict[str, Threshold | SerializeAsAny[BaseCriterion]] = Field(
        default_factory=dict, description="Metric name -> threshold or criterion."
    )
    custom_metrics: dict[str, CustomMetricConfig] | None = Field(
        default=None, description="Metric name -> the user's function that computes it."
    )
    user_simulator_config: UserSimulatorConfig | None = Field(
        default=None,
        description="The user simulator's settings; `type` selects the simulator "
        f"(`{_DEFAULT_USER_SIMULATOR_TYPE}` when absent).",
    )
    live_model_config: LiveModelConfig | None = Field(
        default=None, description="Settings for live (bidirectional streaming) models."
    )

    @model_validator(mode="before")
    @classmethod
    def _default_user_simulator_type(cls, values: Any) -> Any:
        if not isinstance(values, dict):
            return values
        for key in ("user_simulator_config", "userSimulatorConfig"):
            inner = values.get(key)
            if isinstance(inner, dict) and inner.get("type") is None:
                values = {**values, key: {**inner, "type": _DEFAULT_USER_SIMULATOR_TYPE}}
        return values


_DEFAULT_EVAL_CONFIG = EvalConfig(
    criteria={"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
)

_DEFAULT_EFFICIENCY_METRICS: tuple[str, ...] = (
    PrebuiltMetrics.TOOL_CALL_COUNT_V1.value,
    PrebuiltMetrics.INFERENCE_CALL_COUNT_V1.value,
    PrebuiltMetrics.TOKEN_USAGE_V1.value,
    PrebuiltMetrics.INVOCATION_DURATION_V1.value,
)


_CRITERIA_FIX = (
    'Write criteria as {"criteria": {"metric_name": 0.8}} or with a criterion object, e.g. '
    '{"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"}}}.'
)
_USER_SIMULATOR_FIX = (
    'Write the user simulator config as e.g. {"user_simulator_config": {"type": "llm_backed", '
    '"model": "gemini-2.5-flash", "max_allowed_invocations": 20}}; its fields are type, model, '
    "model_configuration, max_allowed_invocations, custom_instructions and "
    "include_function_calls."
)


def load_eval_config(path: str) -> EvalConfig:
    """The eval config in the file at ``path``; EvalFileError naming the field when malformed."""
    with open(path, encoding="utf-8") as file:
        content = file.read()
    try:
        return EvalConfig.model_validate_json(content)
    except ValidationError as error:
        try:
            json.loads(content)
        except json.JSONDecodeError as json_error:
            raise EvalFileError(
                path=path,
                field=None,
                problem=f"not valid JSON ({json_error.msg} at line {json_error.lineno})",
                fix="Fix the JSON syntax.",
            ) from error
        field, message = first_error_location(error)
        raise EvalFileError(
            path=path,
            field=field,
            problem=message,
            fix=_USER_SIMULATOR_FIX if field.startswith("user_simulator_config") else _CRITERIA_FIX,
        ) from error


def get_evaluation_criteria_or_default(eval_config_file_path: str | None) -> EvalConfig:
    """The eval config in the file, or the default one when no file is given or it is absent.

    The default runs ``tool_trajectory_avg_score`` (threshold 1.0) and ``response_match_score``
    (threshold 0.8).
    """
    if eval_config_file_path and os.path.exists(eval_config_file_path):
        return load_eval_config(eval_config_file_path)
    logger.info("No eval config file found; using the default criteria.")
    return _DEFAULT_EVAL_CONFIG


def append_default_efficiency_metrics(eval_metrics: list[EvalMetric]) -> list[EvalMetric]:
    """A new list: ``eval_metrics`` then each efficiency metric not already in it."""
    named = {metric.metric_name for metric in eval_metrics}
    return [
        *eval_metrics,
        *(EvalMetric(metric_name=n) for n in _DEFAULT_EFFICIENCY_METRICS if n not in named),
    ]


def get_eval_metrics_from_config(eval_config: EvalConfig) -> list[EvalMetric]:
    """The config's metrics, in its order, then the informational efficiency metrics.

    A bare threshold becomes a BaseCriterion with that threshold; a metric named in
    ``custom_metrics`` carries the path of its function.
    """
    metrics: list[EvalMetric] = []
    for metric_name, criterion in eval_config.criteria.items():
        custom = (eval_config.custom_metrics or {}).get(metric_name)
        function_path = custom.code_config.name if custom else None
        if isinstance(criterion, BaseCriterion):
            metric_criterion = criterion
        elif isinstance(criterion, int | float):
            metric_criterion = BaseCriterion(threshold=float(criterion))
        else:
            raise ValueError(
                f"The criterion of `{metric_name}` is a {type(criterion).__name__}; give a "
                "threshold number or a criterion object."
            )
        metric = EvalMetric(
            metric_name=metric_name,
            threshold=metric_criterion.threshold,
            criterion=metric_criterion,
            custom_function_path=function_path,
        )
        metric._config_custom_function_path = function_path
        metrics.append(metric)
    return append_default_efficiency_metrics(metrics)
