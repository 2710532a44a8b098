"""The conversation as one agent should see it, built from the session's events."""

from __future__ import annotations

import json
from collections.abc import Sequence

from google.genai import types

from cairn.events.event import Event
from cairn.events.event_actions import EventCompaction


def _in_branch(event_branch: str | None, branch: str | None) -> bool:
    """Events of this branch or of its ancestors are visible; sibling branches are not."""
    if not event_branch or not branch:
        return not event_branch or event_branch == branch
    return branch == event_branch or branch.startswith(event_branch + ".")


def _as_context(event: Event) -> types.Content:
    """Another agent's turn, retold to this agent as user-side context."""
    lines = ["For context:"]
    for part in event.content.parts if event.content and event.content.parts else []:
        if part.text and not part.thought:
            lines.append(f"[{event.author}] said: {part.text}")
        elif part.function_call:
            args = json.dumps(part.function_call.args or {}, ensure_ascii=False)
            lines.append(f"[{event.author}] called tool `{part.function_call.name}` with {args}")
        elif part.function_response:
            result = json.dumps(part.function_response.response or {}, ensure_ascii=False)
            name = part.function_response.name
            lines.append(f"[{event.author}] tool `{name}` returned: {result}")
    return types.Content(role="user", parts=[types.Part(text="\n".join(lines))])


def _summary(compaction: EventCompaction) -> types.Content | None:
    parts = compaction.compacted_content.parts if compaction.compacted_content else None
    if not parts:
        return None
    text = "".join(p.text or "" for p in parts)
    return types.Content(
        role="user", parts=[types.Part(text=f"Summary of the earlier conversation:\n{text}")]
    )


def build_contents(
    events: Sequence[Event],
    *,
    agent_name: str,
    branch: str | None,
    invocation_id: str | None = None,
) -> list[types.Content]:
    """Contents for a model call: the user's and this agent's turns as they were, other
    agents' turns as context, other branches left out. With ``invocation_id`` only that
    invocation's events count (``include_contents='none'``). A compaction's summary stands
    in for the events it covers (the log keeps them).

    One pass from the newest event back: a compaction always comes after the events it
    covers, so its range is known before they are reached.
    """
    covered: list[tuple[float, float]] = []
    picked: list[types.Content] = []
    own = ("user", agent_name)
    for event in reversed(events):
        compaction = event.actions.compaction
        if compaction is not None:
            covered.append((compaction.start_timestamp, compaction.end_timestamp))
            summary = _summary(compaction)
            if summary is not None:
                picked.append(summary)
            continue
        content = event.content
        if content is None or not content.parts or event.partial:
            continue
        if invocation_id is not None and event.invocation_id != invocation_id:
            continue
        if event.branch is not None and not _in_branch(event.branch, branch):
            continue
        if covered and any(start <= event.timestamp <= end for start, end in covered):
            continue
        picked.append(content if event.author in own else _as_context(event))
    picked.reverse()
    return picked
