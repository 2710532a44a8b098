"""The eval service interface: run an agent on eval cases (inference), then score the runs."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field, alias_generators

from .constants import DEFAULT_LIVE_TIMEOUT_SECONDS
from .eval_case import Invocation
from .eval_metrics import EvalMetric
from .eval_result import EvalCaseResult

_CAMEL = ConfigDict(alias_generator=alias_generators.to_camel, populate_by_name=True)


class EvaluateConfig(BaseModel):
    """How to score inferences."""

    model_config = _CAMEL

    eval_metrics: list[EvalMetric] = Field(description="The metrics to compute.")
    parallelism: int = Field(
        default=4,
        description="How many cases are scored at once. Judge-model metrics spend model "
        "quota: a high value can hit the provider's rate limits.",
    )


class InferenceConfig(BaseModel):
    """How to run the agent on the eval cases."""

    model_config = _CAMEL

    labels: dict[str, str] | None = Field(
        default=None, description="Labels attached to the run (for billing break-downs)."
    )
    parallelism: int = Field(
        default=4,
        description="How many cases run at once, each on its own session. The agent's "
        "model and tools see that many concurrent users.",
    )
    use_live: bool = Field(
        default=False, description="Run through the bidirectional-streaming (live) API."
    )
    live_timeout_seconds: int = Field(
        default=DEFAULT_LIVE_TIMEOUT_SECONDS,
        description="In live mode, how long to wait for the model to finish its turn.",
    )


class InferenceRequest(BaseModel):
    """Run the agent on (some of) the cases of an eval set."""

    model_config = _CAMEL

    app_name: str = Field(description="The app the eval set belongs to.")
    eval_set_id: str = Field(description="The eval set.")
    eval_case_ids: list[str] | None = Field(
        default=None, description="The cases to run; all of the set's when empty or absent."
    )
    inference_config: InferenceConfig = Field(description="How to run them.")


class InferenceStatus(Enum):
    """Whether the agent could be run on a case."""

    UNKNOWN = 0
    SUCCESS = 1
    FAILURE = 2


class InferenceResult(BaseModel):
    """The invocations the agent produced on one eval case."""

    model_config = _CAMEL

    app_name: str = Field(description="The app the eval case belongs to.")
    eval_set_id: str = Field(description="The eval set.")
    eval_case_id: str = Field(description="The eval case.")
    inferences: list[Invocation] | None = Field(
        default=None, description="The agent's invocations on the case."
    )
    session_id: str | None = Field(description="The session the case ran in.")
    status: InferenceStatus = Field(
        default=InferenceStatus.UNKNOWN, description="Whether the run succeeded."
    )
    error_message: str | None = Field(default=None, description="Why the run failed.")


class EvaluateRequest(BaseModel):
    """Score these inferences with this config."""

    model_config = _CAMEL

    inference_results: list[InferenceResult] = Field(description="The runs to score.")
    evaluate_config: EvaluateConfig = Field(description="How to score them.")


class BaseEvalService(ABC):
    """Runs evals for an agent."""

    @abstractmethod
    def perform_inference(
        self, inference_request: InferenceRequest
    ) -> AsyncGenerator[InferenceResult, None]:
        """Each case's inference result, as soon as it is ready."""

    @abstractmethod
    def evaluate(self, evaluate_request: EvaluateRequest) -> AsyncGenerator[EvalCaseResult, None]:
        """Each case's result, as soon as it is scored."""
