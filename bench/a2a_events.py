"""What an agent event says, stripped of what differs between runs and frameworks.

Shared by bench/peer_adk_a2a.py (inside google-adk's venv) and tests/a2a/interop (cairn's
venv), so both sides of an A2A exchange are compared in one form. It imports neither
framework: it works on an event's JSON (``event.model_dump(mode="json", exclude_none=True)``),
with its fields named in snake_case (google-adk's dump) or camelCase (cairn's dump and HTTP
API) alike.

A normalized event is a dict with only the keys that apply:

    author     who wrote it
    text       its non-thought text parts, joined
    calls      [{"name", "args"}] of its function calls
    responses  [{"name", "response"}] of its function responses
    paused     true when one of its calls is long-running (the run waits for an answer)
    error      its error message

Ids, timestamps, invocation ids, A2A metadata and partial (streamed) chunks are dropped;
so are events that say nothing (no text, call, response or error), such as an agent's
end-of-agent marker. Integral numbers are ints (see ``whole``).
"""

from __future__ import annotations

from typing import Any


def field(value: dict[str, Any], name: str) -> Any:
    """``value[name]`` under its snake_case name or its camelCase alias, None when absent."""
    if name in value:
        return value[name]
    head, *rest = name.split("_")
    return value.get(head + "".join(word.title() for word in rest))


def parts_of(event: dict[str, Any]) -> list[dict[str, Any]]:
    return list((event.get("content") or {}).get("parts") or [])


def normalize(event: dict[str, Any]) -> dict[str, Any] | None:
    """The normalized form of one event's JSON, or None when it says nothing."""
    if event.get("partial"):
        return None
    parts = parts_of(event)
    texts = [part["text"] for part in parts if part.get("text") and not part.get("thought")]
    calls = [field(part, "function_call") for part in parts if field(part, "function_call")]
    responses = [
        field(part, "function_response") for part in parts if field(part, "function_response")
    ]
    waiting = set(field(event, "long_running_tool_ids") or ())
    shown: dict[str, Any] = {"author": event.get("author")}
    if texts:
        shown["text"] = "".join(texts)
    if calls:
        shown["calls"] = [
            {"name": c.get("name"), "args": whole(c.get("args") or {})} for c in calls
        ]
    if responses:
        shown["responses"] = [
            {"name": r.get("name"), "response": whole(r.get("response") or {})} for r in responses
        ]
    if any(call.get("id") in waiting for call in calls):
        shown["paused"] = True
    if field(event, "error_message"):
        shown["error"] = field(event, "error_message")
    return shown if len(shown) > 1 else None


def whole(value: Any) -> Any:
    """``value`` with integral floats as ints: A2A's DataPart (a protobuf Struct) carries every
    number as a double, so ``50`` comes back as ``50.0`` on whichever framework reads it."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: whole(item) for key, item in value.items()}
    if isinstance(value, list):
        return [whole(item) for item in value]
    return value


def normalize_all(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The normalized events of a list of event JSONs, in order, silent ones left out."""
    return [shown for shown in map(normalize, events) if shown is not None]


def pending_call(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last long-running function call (its JSON, id included) the user has not answered.

    Only the user's function responses close a long-running call: a tool's interim answer
    carries the same id and leaves it open.
    """
    answered = {
        field(part, "function_response").get("id")
        for event in events
        if event.get("author") == "user"
        for part in parts_of(event)
        if field(part, "function_response")
    }
    for event in reversed(events):
        waiting = set(field(event, "long_running_tool_ids") or ())
        for part in parts_of(event):
            call = field(part, "function_call")
            if call and call.get("id") in waiting and call.get("id") not in answered:
                return dict(call)
    return None
