"""Eval cases: the conversation (or scenario) an agent is run on, and what it should do.

An invocation's intermediate data comes in two shapes: ``IntermediateData`` (tool calls,
tool responses and sub-agent texts as separate lists, the shape hand-written files use) and
``InvocationEvents`` (the events of the invocation, the shape recorded runs use). The
``get_all_*`` helpers read both.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import pydantic
from google.genai import types as genai_types
from pydantic import Field, model_validator

from cairn.events.interrupts import PROTOCOL_FUNCTIONS
from cairn.events.request_input import REQUEST_INPUT_FUNCTION

from .app_details import AppDetails
from .common import EvalBaseModel
from .conversation_scenarios import ConversationScenario as ConversationScenario
from .eval_rubrics import Rubric


class IntermediateData(EvalBaseModel):
    """What an agent produced on its way to the final response, as separate lists."""

    tool_uses: list[genai_types.FunctionCall] = Field(default=[])
    """Tool calls, in the order they were made."""

    tool_responses: list[genai_types.FunctionResponse] = Field(default=[])
    """Tool responses, in the order they arrived."""

    intermediate_responses: list[tuple[str, list[genai_types.Part]]] = Field(default=[])
    """Texts sub-agents produced before the final response: (author, parts) pairs."""


class InvocationEvent(EvalBaseModel):
    """One event of an invocation, projected to what evaluation reads."""

    # Editors may attach display-only keys to events; they are not part of the case.
    model_config = pydantic.ConfigDict(extra="ignore")

    author: str
    content: genai_types.Content | None = None
    grounding_metadata: genai_types.GroundingMetadata | None = None
    usage_metadata: genai_types.GenerateContentResponseUsageMetadata | None = None
    model_version: str | None = None


class InvocationEvents(EvalBaseModel):
    """The events of one invocation, in order."""

    invocation_events: list[InvocationEvent] = Field(default_factory=list)


IntermediateDataType: TypeAlias = IntermediateData | InvocationEvents


class Invocation(EvalBaseModel):
    """One user turn: what the user said, what the agent did, and what it answered."""

    invocation_id: str = ""
    user_content: genai_types.Content
    final_response: genai_types.Content | None = None
    intermediate_data: IntermediateDataType | None = None
    creation_timestamp: float = 0.0
    duration: float | None = None
    """Seconds the invocation took, when the evaluation ran it (None otherwise)."""
    model_duration: float | None = None
    """Of ``duration``, the seconds with a model call in flight."""
    tool_duration: float | None = None
    """Of ``duration``, the seconds inside tools and not awaiting a model."""
    rubrics: list[Rubric] | None = Field(default=None)
    """Rubrics for this invocation only."""
    app_details: AppDetails | None = Field(default=None)


SessionState: TypeAlias = dict[str, Any]
"""A session's state."""


class SessionInput(EvalBaseModel):
    """How to start the session a case runs in."""

    model_config = pydantic.ConfigDict(extra="allow")

    app_name: str
    user_id: str
    session_id: str | None = None
    """A fixed session id (reused as is when the session exists); a new id when None."""
    state: SessionState = Field(default_factory=dict)


StaticConversation: TypeAlias = list[Invocation]
"""A conversation whose user turns are written out in advance."""


class EvalCase(EvalBaseModel):
    """One eval case: a static ``conversation`` or a ``conversation_scenario``, not both."""

    model_config = pydantic.ConfigDict(extra="allow")

    eval_id: str
    conversation: StaticConversation | None = None
    conversation_scenario: ConversationScenario | None = None
    session_input: SessionInput | None = None
    creation_timestamp: float = 0.0
    rubrics: list[Rubric] | None = Field(default=None)
    """Rubrics for every invocation of the case."""
    final_session_state: SessionState | None = Field(default_factory=dict)
    """The session state expected when the conversation ends."""

    @model_validator(mode="after")
    def _one_kind_of_conversation(self) -> EvalCase:
        if (self.conversation is None) == (self.conversation_scenario is None):
            raise ValueError(
                f"Eval case `{self.eval_id}` needs exactly one of `conversation` (the user "
                "turns written out) and `conversation_scenario` (a simulated user)."
            )
        return self


def _event_parts(intermediate_data: InvocationEvents) -> list[genai_types.Part]:
    return [
        part
        for event in intermediate_data.invocation_events
        if event.content is not None and event.content.parts
        for part in event.content.parts
    ]


def _require_known_shape(intermediate_data: object) -> None:
    if not isinstance(intermediate_data, IntermediateData | InvocationEvents):
        raise ValueError(
            f"intermediate_data must be IntermediateData or InvocationEvents, "
            f"not {type(intermediate_data).__name__}."
        )


def get_all_tool_calls(
    intermediate_data: IntermediateDataType | None,
) -> list[genai_types.FunctionCall]:
    """The tool calls of an invocation, in order, from either shape of intermediate data."""
    if not intermediate_data:
        return []
    _require_known_shape(intermediate_data)
    if isinstance(intermediate_data, IntermediateData):
        return intermediate_data.tool_uses
    return [p.function_call for p in _event_parts(intermediate_data) if p.function_call]


def get_all_tool_responses(
    intermediate_data: IntermediateDataType | None,
) -> list[genai_types.FunctionResponse]:
    """The tool responses of an invocation, in order, from either shape of intermediate data."""
    if not intermediate_data:
        return []
    _require_known_shape(intermediate_data)
    if isinstance(intermediate_data, IntermediateData):
        return intermediate_data.tool_responses
    return [p.function_response for p in _event_parts(intermediate_data) if p.function_response]


FRAMEWORK_PAUSE_CALLS = PROTOCOL_FUNCTIONS | {REQUEST_INPUT_FUNCTION}
"""Calls the framework makes to pause (a confirmation, a credential, an input request): not
the agent's tool choices, and their arguments carry the run's own call ids, so trajectories
and divergences leave them out (the pause shows as the next turn: its answer)."""


def get_agent_tool_calls(
    intermediate_data: IntermediateDataType | None,
) -> list[genai_types.FunctionCall]:
    """``get_all_tool_calls`` without the framework's pause calls (FRAMEWORK_PAUSE_CALLS)."""
    return [
        call
        for call in get_all_tool_calls(intermediate_data)
        if call.name not in FRAMEWORK_PAUSE_CALLS
    ]


ToolCallAndResponse: TypeAlias = tuple[
    genai_types.FunctionCall, genai_types.FunctionResponse | None
]
"""A tool call and its response (None when no response has the call's id)."""


def get_all_tool_calls_with_responses(
    intermediate_data: IntermediateDataType | None,
) -> list[ToolCallAndResponse]:
    """Each tool call with the response of the same id (the last one, if several share it)."""
    responses = {response.id: response for response in get_all_tool_responses(intermediate_data)}
    return [(call, responses.get(call.id)) for call in get_all_tool_calls(intermediate_data)]


def get_all_usage_metadata(
    invocation: Invocation,
) -> list[genai_types.GenerateContentResponseUsageMetadata]:
    """The token usage each event of the invocation reported (events shape only)."""
    data = invocation.intermediate_data
    if not isinstance(data, InvocationEvents):
        return []
    return [e.usage_metadata for e in data.invocation_events if e.usage_metadata is not None]
