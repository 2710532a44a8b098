"""The conversation as one agent should see it, built from the session's events."""

from __future__ import annotations

import json
from collections.abc import Sequence

from google.genai import types

from cairn.events.event import Event


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


def build_contents(
    events: Sequence[Event],
    *,
    agent_name: str,
    branch: str | None,
    invocation_id: str | None = None,
) -> list[types.Content]:
    """Contents for a model call: the user's and this agent's turns as they were, other
    agents' turns as context, other branches left out. With ``invocation_id`` only that
    invocation's events count (``include_contents='none'``)."""
    # A compaction's summary stands in for the events it covers (the log keeps them).
    ranges = [
        (event.actions.compaction.start_timestamp, event.actions.compaction.end_timestamp)
        for event in events
        if event.actions.compaction is not None
    ]

    def covered(event: Event) -> bool:
        return any(start <= event.timestamp <= end for start, end in ranges)

    contents: list[types.Content] = []
    for event in events:
        compaction = event.actions.compaction
        if compaction is not None:
            if compaction.compacted_content and compaction.compacted_content.parts:
                summary = "".join(p.text or "" for p in compaction.compacted_content.parts)
                contents.append(
                    types.Content(
                        role="user",
                        parts=[types.Part(text=f"Summary of the earlier conversation:\n{summary}")],
                    )
                )
            continue
        if event.partial or not event.content or not event.content.parts or covered(event):
            continue
        if invocation_id is not None and event.invocation_id != invocation_id:
            continue
        if not _in_branch(event.branch, branch):
            continue
        if event.author in ("user", agent_name):
            contents.append(event.content)
        else:
            contents.append(_as_context(event))
    return contents
