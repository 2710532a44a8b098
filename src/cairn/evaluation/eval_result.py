"""The results of running an eval set: per case, and for the whole set (ADK's result JSON)."""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    alias_generators,
    field_serializer,
)

from cairn.sessions.session import Session

from .divergence import Divergence
from .eval_metrics import EvalMetric, EvalMetricResult, EvalMetricResultPerInvocation
from .evaluator import EvalStatus


class EvalCaseResult(BaseModel):
    """The result of one eval case."""

    model_config = ConfigDict(alias_generator=alias_generators.to_camel, populate_by_name=True)

    eval_set_file: str | None = Field(
        deprecated=True, default=None, description="Deprecated: use eval_set_id."
    )
    eval_set_id: str = ""
    eval_id: str = ""
    final_eval_status: EvalStatus
    eval_metric_results: list[tuple[EvalMetric, EvalMetricResult]] | None = Field(
        deprecated=True, default=None, description="Deprecated: use overall_eval_metric_results."
    )
    overall_eval_metric_results: list[EvalMetricResult]
    """Each metric's result for the whole case."""
    eval_metric_result_per_invocation: list[EvalMetricResultPerInvocation]
    """Each metric's result per invocation."""
    session_id: str
    """The session the case ran in."""
    session_details: Session | None = None
    user_id: str | None = None
    divergence: Divergence | None = None
    """cairn: where the run first departed from the case's written conversation (the first
    differing tool call or final response), or None when it did not or the case is a
    scenario. ADK reads a result file with it and ignores it."""

    @field_serializer("session_details")
    def _session_as_adk_reads_it(
        self, session: Session | None, info: SerializationInfo
    ) -> dict[str, Any] | None:
        # A result file is read by ADK too, whose Session refuses fields it does not have:
        # the store's revision counter is left out.
        if session is None:
            return None
        return session.model_dump(
            mode=info.mode,
            by_alias=bool(info.by_alias),
            exclude_none=info.exclude_none,
            exclude={"revision"},
        )


class EvalSetResult(BaseModel):
    """The results of one run of an eval set."""

    model_config = ConfigDict(alias_generator=alias_generators.to_camel, populate_by_name=True)

    eval_set_result_id: str
    eval_set_result_name: str | None = None
    eval_set_id: str
    eval_case_results: list[EvalCaseResult] = Field(default_factory=list)
    creation_timestamp: float = 0.0
