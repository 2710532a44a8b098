"""Events: the unit of a session's append-only log."""

from cairn.events.event import Event
from cairn.events.event_actions import EventActions, EventCompaction, ToolConfirmation
from cairn.events.interrupts import (
    REQUEST_CONFIRMATION_FUNCTION,
    REQUEST_CREDENTIAL_FUNCTION,
    RESOLVE_IN_DOUBT_FUNCTION,
    Interrupt,
    pending_interrupts,
)
from cairn.events.llm_response_fields import LlmResponseFields
from cairn.events.node_info import NodeInfo
from cairn.events.request_input import REQUEST_INPUT_FUNCTION, RequestInput

__all__ = [
    "REQUEST_CONFIRMATION_FUNCTION",
    "REQUEST_CREDENTIAL_FUNCTION",
    "REQUEST_INPUT_FUNCTION",
    "RESOLVE_IN_DOUBT_FUNCTION",
    "Event",
    "EventActions",
    "EventCompaction",
    "Interrupt",
    "LlmResponseFields",
    "NodeInfo",
    "RequestInput",
    "ToolConfirmation",
    "pending_interrupts",
]
