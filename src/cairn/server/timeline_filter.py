"""Which timeline events a search keeps: by author, kind, text and node path.

``event_kind`` names an event as the dev UI's timeline does (static/model.js
``eventKind``), so a kind chosen in the UI's filter finds the rows it shows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, get_args

from google.genai import types

from cairn.events.event import Event

Kind = Literal[
    "rewind",
    "error",
    "interrupt",
    "tool call",
    "answer",
    "tool result",
    "message",
    "reply",
    "node output",
    "compaction",
    "transfer",
    "state",
    "end",
    "event",
]
KINDS: tuple[str, ...] = get_args(Kind)


def _parts(event: Event) -> list[types.Part]:
    return list(event.content.parts) if event.content and event.content.parts else []


def _text(event: Event) -> str:
    return "".join(p.text for p in _parts(event) if isinstance(p.text, str) and not p.thought)


def event_kind(event: Event) -> str:
    """A short kind: message, reply, tool call, tool result, interrupt, answer, ..."""
    actions = event.actions
    if actions.rewind_before_invocation_id:
        return "rewind"
    if event.error_message or event.error_code:
        return "error"
    if event.long_running_tool_ids:
        return "interrupt"
    parts = _parts(event)
    if any(p.function_call for p in parts):
        return "tool call"
    if any(p.function_response for p in parts):
        return "answer" if event.author == "user" else "tool result"
    if _text(event):
        return "message" if event.author == "user" else "reply"
    if (actions.end_of_agent or event.node_info.output_for) and event.output is not None:
        return "node output"
    if actions.compaction:
        return "compaction"
    if actions.transfer_to_agent:
        return "transfer"
    if actions.state_delta or actions.removed_state_keys:
        return "state"
    if actions.end_of_agent:
        return "end"
    return "event"


def _dumps(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def searchable_text(event: Event) -> str:
    """The text a search looks in: the event's text, its calls (name and arguments), its
    results (name and response), its output and its error message."""
    pieces = [_text(event)]
    for part in _parts(event):
        if part.function_call:
            pieces += [part.function_call.name or "", _dumps(part.function_call.args or {})]
        if part.function_response:
            pieces += [part.function_response.name or "", _dumps(part.function_response.response)]
    if event.output is not None:
        pieces.append(_dumps(event.output))
    pieces.append(event.error_message or "")
    return "\n".join(pieces)


@dataclass(frozen=True)
class TimelineFilter:
    """Keep the events by ``author`` (exact), of ``kind`` (one of ``KINDS``), whose
    searchable text contains ``text`` (case-insensitive) and whose node path contains
    ``node``. Empty fields keep everything."""

    author: str = ""
    kind: str = ""
    text: str = ""
    node: str = ""

    def __post_init__(self) -> None:
        if self.kind and self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {self.kind!r}")

    @property
    def active(self) -> bool:
        return bool(self.author or self.kind or self.text or self.node)

    def keeps(self, event: Event) -> bool:
        if self.author and event.author != self.author:
            return False
        if self.kind and event_kind(event) != self.kind:
            return False
        if self.node and self.node not in event.node_info.path:
            return False
        return not self.text or self.text.casefold() in searchable_text(event).casefold()
