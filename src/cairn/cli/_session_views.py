"""How ``cairn sessions`` shows sessions and events: one-line kinds and summaries, times."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from cairn.cli._render import call_summary, compact
from cairn.events.event import Event

SUMMARY_LIMIT = 80


def local_time(timestamp: float) -> str:
    """``2026-11-30 12:48:03`` in local time (empty for 0, a session never updated)."""
    if not timestamp:
        return ""
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S")


def event_kind(event: Event) -> str:
    """What the event is, in a word: error, rewind, compaction, transfer, call, result,
    message, output, state or event."""
    actions = event.actions
    parts = event.content.parts if event.content and event.content.parts else []
    if event.error_code or event.error_message:
        return "error"
    if actions.rewind_before_invocation_id:
        return "rewind"
    if actions.compaction is not None:
        return "compaction"
    if actions.transfer_to_agent:
        return "transfer"
    if any(p.function_call is not None for p in parts):
        return "call"
    if any(p.function_response is not None for p in parts):
        return "result"
    if any(p.text or p.inline_data or p.file_data for p in parts):
        return "message"
    if event.output is not None:
        return "output"
    if actions.state_delta or actions.removed_state_keys:
        return "state"
    return "event"


def event_summary(event: Event, limit: int = SUMMARY_LIMIT) -> str:
    """The event's gist on one line, cut to ``limit`` characters."""
    actions = event.actions
    parts = event.content.parts if event.content and event.content.parts else []
    pieces: list[str] = []
    if event.error_code or event.error_message:
        pieces.append(": ".join(p for p in (event.error_code, event.error_message) if p))
    if actions.rewind_before_invocation_id:
        pieces.append(f"rewound to before invocation {actions.rewind_before_invocation_id}")
    if actions.compaction is not None:
        pieces.append("summary of earlier events")
    if actions.transfer_to_agent:
        pieces.append(f"to {actions.transfer_to_agent}")
    for part in parts:
        if part.text:
            pieces.append(part.text)
        elif part.function_call is not None:
            pieces.append(call_summary(part.function_call, limit))
        elif part.function_response is not None:
            response = part.function_response
            pieces.append(f"{response.name}: {compact(response.response, limit)}")
        elif part.inline_data is not None:
            size = len(part.inline_data.data or b"")
            pieces.append(f"[{part.inline_data.mime_type or 'data'}, {size} bytes]")
        elif part.file_data is not None:
            pieces.append(f"[file {part.file_data.file_uri}]")
    if not pieces and event.output is not None:
        pieces.append(compact(event.output, limit))
    changed = [*actions.state_delta, *(f"-{key}" for key in actions.removed_state_keys or ())]
    if changed:
        pieces.append("state " + ", ".join(changed))
    return compact(" · ".join(pieces), limit)


def scoped_state(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A merged state split into ``session``, ``user`` and ``app`` (keys as the session sees
    them, prefixes kept)."""
    scopes: dict[str, dict[str, Any]] = {"session": {}, "user": {}, "app": {}}
    for key, value in sorted(state.items()):
        if key.startswith("user:"):
            scopes["user"][key] = value
        elif key.startswith("app:"):
            scopes["app"][key] = value
        else:
            scopes["session"][key] = value
    return scopes
