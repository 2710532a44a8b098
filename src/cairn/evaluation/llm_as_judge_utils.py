"""Helpers shared by the model-judged metrics: verdict labels, the text a judge is shown, and
the settings of a judge request."""

from __future__ import annotations

import enum
import statistics
from contextlib import aclosing
from typing import Any

from google.genai import types as genai_types

from cairn.models.base_llm import BaseLlm
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.models.registry import LLMRegistry

from .app_details import AppDetails
from .common import EvalBaseModel
from .errors import JudgeModelError
from .eval_case import (
    IntermediateData,
    IntermediateDataType,
    Invocation,
    InvocationEvents,
    get_all_tool_calls_with_responses,
)
from .eval_metrics import JudgeModelOptions, RubricScore
from .evaluator import EvalStatus, EvaluationResult, PerInvocationResult


@enum.unique
class Label(enum.Enum):
    """The verdict words a judge may answer with (a member may have several spellings)."""

    TRUE = "true"
    INVALID = "invalid"
    VALID = "valid"
    PARTIALLY_VALID = "partially_valid", "partially valid", "partially"
    ALMOST = "almost"
    FALSE = "false"
    NOT_FOUND = "label field not found"


def get_text_from_content(
    content: genai_types.Content | Invocation | None,
    *,
    include_intermediate_responses_in_final: bool = False,
) -> str | None:
    """The text of a Content (its text parts, one per line), or of an Invocation's final
    response; with ``include_intermediate_responses_in_final``, an invocation's intermediate
    texts come first, in order, then the final response. None when there is no text."""
    if isinstance(content, Invocation):
        final_text = get_text_from_content(content.final_response)
        if not include_intermediate_responses_in_final:
            return final_text
        texts = [*_intermediate_texts(content.intermediate_data)]
        if final_text:
            texts.append(final_text)
        return "\n".join(texts) if texts else None
    if content is None or not content.parts:
        return None
    return "\n".join(part.text for part in content.parts if part.text)


def _intermediate_texts(data: IntermediateDataType | None) -> list[str]:
    contents: list[genai_types.Content | None] = []
    if isinstance(data, InvocationEvents):
        contents = [event.content for event in data.invocation_events]
    elif isinstance(data, IntermediateData):
        contents = [genai_types.Content(parts=parts) for _, parts in data.intermediate_responses]
    texts = [get_text_from_content(content) for content in contents]
    return [text for text in texts if text]


def get_eval_status(score: float | None, threshold: float) -> EvalStatus:
    """PASSED at or above the threshold, FAILED below it, NOT_EVALUATED without a score."""
    if score is None:
        return EvalStatus.NOT_EVALUATED
    return EvalStatus.PASSED if score >= threshold else EvalStatus.FAILED


def build_judge_request_config(
    user_config: genai_types.GenerateContentConfig | None,
) -> genai_types.GenerateContentConfig:
    """A copy of the user's judge config (or an empty one) with automatic function calling
    off: a judge is never given tools, whatever else the config sets."""
    config = (
        user_config.model_copy(deep=True)
        if user_config is not None
        else genai_types.GenerateContentConfig()
    )
    config.automatic_function_calling = genai_types.AutomaticFunctionCallingConfig(disable=True)
    return config


def get_average_rubric_score(rubric_scores: list[RubricScore]) -> float | None:
    """The mean of the rubric scores that have a score; None when none has."""
    scores = [r.score for r in rubric_scores if r.score is not None]
    return statistics.mean(scores) if scores else None


class _ToolDeclarations(EvalBaseModel):
    tool_declarations: dict[str, list[Any]]


def get_tool_declarations_as_json_str(app_details: AppDetails) -> str:
    """Each agent's tool declarations as indented JSON, for a judge prompt."""
    return _ToolDeclarations(
        tool_declarations=app_details.get_tools_by_agent_name()
    ).model_dump_json(indent=2, exclude_unset=True, exclude_defaults=True, exclude_none=True)


class _ToolCallAndResponse(EvalBaseModel):
    step: int
    tool_call: genai_types.FunctionCall
    tool_response: genai_types.FunctionResponse | str


class _ToolCallsAndResponses(EvalBaseModel):
    tool_calls_and_response: list[_ToolCallAndResponse]


def get_tool_calls_and_responses_as_json_str(
    intermediate_data: IntermediateDataType | None,
) -> str:
    """The invocation's tool calls, numbered from 0, each with its response ("None" when it
    has none), as indented JSON for a judge prompt; a sentence saying so when there are none."""
    pairs = get_all_tool_calls_with_responses(intermediate_data)
    if not pairs:
        return "No intermediate steps were taken."
    steps = [
        _ToolCallAndResponse(step=index, tool_call=call, tool_response=response or "None")
        for index, (call, response) in enumerate(pairs)
    ]
    return _ToolCallsAndResponses(tool_calls_and_response=steps).model_dump_json(
        indent=2, exclude_unset=True, exclude_defaults=True, exclude_none=True
    )


class _GroundingMetadataEntry(EvalBaseModel):
    step: int
    author: str | None = None
    grounding_metadata: genai_types.GroundingMetadata


class _GroundingMetadataEntries(EvalBaseModel):
    grounding_metadata: list[_GroundingMetadataEntry]


_NO_GROUNDING_METADATA = "No grounding metadata was provided."


def get_grounding_metadata_as_json_str(intermediate_data: IntermediateDataType | None) -> str:
    """The grounding metadata of the invocation's events (by event index and author) as
    indented JSON for a judge prompt; a sentence saying so when there is none."""
    if not isinstance(intermediate_data, InvocationEvents):
        return _NO_GROUNDING_METADATA
    entries = [
        _GroundingMetadataEntry(
            step=index, author=event.author, grounding_metadata=event.grounding_metadata
        )
        for index, event in enumerate(intermediate_data.invocation_events)
        if event.grounding_metadata
    ]
    if not entries:
        return _NO_GROUNDING_METADATA
    return _GroundingMetadataEntries(grounding_metadata=entries).model_dump_json(
        indent=2, exclude_unset=True, exclude_defaults=True, exclude_none=True
    )


# --- asking the judge (cairn's own helpers) -------------------------------------------------


def _new_judge_model(options: JudgeModelOptions) -> BaseLlm:
    """The judge model named in the options, from cairn's model registry (an
    UnknownModelError names the patterns it knows when no model class serves the name)."""
    return LLMRegistry.new_llm(options.judge_model)


def _judge_request(
    options: JudgeModelOptions, config: genai_types.GenerateContentConfig, prompt: str
) -> LlmRequest:
    """A one-message request that shows the judge ``prompt``."""
    return LlmRequest(
        model=options.judge_model,
        contents=[genai_types.Content(role="user", parts=[genai_types.Part(text=prompt)])],
        config=config.model_copy(deep=True),
    )


async def _ask_judge(judge: BaseLlm, request: LlmRequest) -> LlmResponse:
    """The judge's (non-streamed) response to the request."""
    async with aclosing(judge.generate_content_async(request)) as responses:
        async for response in responses:
            return response
    raise JudgeModelError(
        judge_model=request.model or "",
        problem="it returned no response",
        fix="Check the model name and that the model answers plain text prompts.",
    )


def _majority_verdict(samples: list[PerInvocationResult]) -> PerInvocationResult:
    """Of samples scored 1 or 0 (None: not judged): the first 1 when the 1s are the majority
    of the judged samples, else the first 0 (a tie is 0); the first sample when none was
    judged."""
    yes = [r for r in samples if r.score == 1.0]
    no = [r for r in samples if r.score == 0.0]
    if not yes and not no:
        return samples[0]
    return yes[0] if len(yes) > len(no) else no[0]


def _mean_of_judged(results: list[PerInvocationResult], threshold: float) -> EvaluationResult:
    """The mean score of the judged invocations, and its status against ``threshold``
    (NOT_EVALUATED with no score when none was judged)."""
    scores = [
        r.score
        for r in results
        if r.score is not None and r.eval_status != EvalStatus.NOT_EVALUATED
    ]
    overall = sum(scores) / len(scores) if scores else None
    return EvaluationResult(
        overall_score=overall,
        overall_eval_status=get_eval_status(overall, threshold),
        per_invocation_results=results,
    )
