"""What an event does besides carrying content: state changes, control flow, requests."""

from __future__ import annotations

from typing import Any

from google.genai import types
from pydantic import Field

from cairn.events._base import CamelModel

RouteValue = bool | int | str
"""One route label; an event may also carry a list of them."""


class EventCompaction(CamelModel):
    """A summary that replaces the events in [start_timestamp, end_timestamp] in prompts.

    The covered events stay in the log; only what a model is shown changes.
    """

    start_timestamp: float
    end_timestamp: float
    compacted_content: types.Content | None = None


class ToolConfirmation(CamelModel):
    """A request for (or the answer to) a human approval of one tool call."""

    hint: str = ""
    confirmed: bool = False
    payload: Any = None


class EventActions(CamelModel):
    """The side effects an event carries.

    Unknown fields are refused (with the field named) rather than dropped, so a
    typo such as ``stateDelt`` cannot silently lose a state change.
    """

    skip_summarization: bool | None = None
    """After a function response: do not call the model again to summarise it."""

    state_delta: dict[str, Any] = Field(default_factory=dict)
    """Keys to set: plain keys are session state; ``app:``, ``user:``, ``temp:`` are scoped."""

    removed_state_keys: list[str] | None = None
    """Keys to delete (prefixed like ``state_delta``'s). cairn's addition: a rewind writes it
    for keys that did not exist before the rewound invocation. None (left out of JSON) when
    nothing is deleted, so other events serialize exactly as ADK's do."""

    artifact_delta: dict[str, int] = Field(default_factory=dict)
    """Artifact filename -> version saved by this event."""

    transfer_to_agent: str | None = None
    transfer_reason: str | None = None
    escalate: bool | None = None

    requested_auth_configs: dict[str, Any] = Field(default_factory=dict)
    """Function call id -> auth config the call needs before it can run."""

    requested_tool_confirmations: dict[str, ToolConfirmation] = Field(default_factory=dict)
    """Function call id -> confirmation the call needs before it can run."""

    compaction: EventCompaction | None = None
    set_model_response: Any = None
    """The structured answer an agent with ``output_schema`` and tools gave through its
    ``set_model_response`` tool (on that call's function-response event)."""
    end_of_agent: bool | None = None
    agent_state: dict[str, Any] | None = None
    rewind_before_invocation_id: str | None = None
    route: RouteValue | list[RouteValue] | None = None
