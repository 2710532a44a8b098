"""A log's user turns: each event the user wrote starts one, with the agent's events up to the
next; and each turn as an eval ``Invocation``.

A turn starts at a user's message or at a user's answer to a pause (a long-running tool's
result, a tool confirmation, a credential, a workflow's input request). An answer continues
the invocation it answers, under the same invocation id, so a log is split by user event,
not by invocation id: one invocation id may give several turns. Both a stored session
(``session_cases``) and an eval run (``evaluation_generator``) are read this way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from google.genai import types as genai_types

from cairn.events.event import Event

from .eval_case import Invocation, InvocationEvent, InvocationEvents

_USER = "user"


@dataclass
class Turn:
    """One user event and the agent's events up to the next user turn."""

    user_event: Event
    start: int
    """Position of ``user_event`` in the live log."""
    events: list[Event] = field(default_factory=list)
    end: int = 0
    """Position in the live log just after the turn's last event."""


def _starts_turn(event: Event) -> bool:
    """A user's message, or a user's answer to a pause (function responses).

    A workflow node's input is written with author ``user`` on the node's path; it is the
    agent's own doing, not a turn.
    """
    if event.author != _USER or event.partial or event.content is None:
        return False
    if event.get_function_responses():
        return True
    return not event.node_info.path and bool(event.content.parts)


def split_turns(events: Sequence[Event]) -> list[Turn]:
    turns: list[Turn] = []
    for position, event in enumerate(events):
        if _starts_turn(event):
            turns.append(Turn(user_event=event, start=position, end=position + 1))
        elif turns:
            if not event.partial and event.author != _USER:
                turns[-1].events.append(event)
            turns[-1].end = position + 1
    return turns


def _has_text(content: genai_types.Content | None) -> bool:
    return content is not None and any(part.text for part in content.parts or [])


def _worth_keeping(event: Event) -> bool:
    """Evaluation reads tool calls and responses, texts, inline data and grounding."""
    if event.grounding_metadata is not None:
        return True
    parts = event.content.parts if event.content is not None else None
    return any(
        p.function_call or p.function_response or p.text or p.inline_data for p in parts or []
    )


def _is_answer(event: Event) -> bool:
    return event.content is not None and bool(event.content.parts) and event.is_final_response()


def _replaces(final_event: Event | None, event: Event) -> bool:
    """Once a final response has text, only another with text replaces it."""
    return final_event is None or not _has_text(final_event.content) or _has_text(event.content)


def turn_invocation(turn: Turn) -> Invocation:
    final_event: Event | None = None
    kept: list[Event] = []
    for event in turn.events:
        if _is_answer(event) and _replaces(final_event, event):
            final_event = event
        if _worth_keeping(event):
            kept.append(event)
    invocation_events = [
        InvocationEvent(
            author=event.author,
            # The final response is on ``final_response``; its calls (a pause) stay here.
            content=(
                None if event is final_event and not event.get_function_calls() else event.content
            ),
            grounding_metadata=event.grounding_metadata,
            usage_metadata=event.usage_metadata,
            model_version=event.model_version,
        )
        for event in kept
    ]
    user = turn.user_event
    return Invocation(
        invocation_id=user.invocation_id,
        user_content=user.content or genai_types.Content(parts=[]),
        final_response=final_event.content if final_event is not None else None,
        intermediate_data=InvocationEvents(invocation_events=invocation_events),
        creation_timestamp=user.timestamp,
    )
