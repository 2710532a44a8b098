"""Events: the unit of a session's append-only log."""

from cairn.events.event import Event
from cairn.events.event_actions import EventActions, EventCompaction, ToolConfirmation
from cairn.events.llm_response_fields import LlmResponseFields
from cairn.events.node_info import NodeInfo
from cairn.events.request_input import REQUEST_INPUT_FUNCTION, RequestInput

__all__ = [
    "REQUEST_INPUT_FUNCTION",
    "Event",
    "EventActions",
    "EventCompaction",
    "LlmResponseFields",
    "NodeInfo",
    "RequestInput",
    "ToolConfirmation",
]
