"""An eval case from a stored session: each user turn of its log becomes one invocation.

A turn starts at each event the user wrote: a message, or the answer to a pause (a
long-running tool's result, a tool confirmation, a credential, a workflow's input request).
An answer continues the invocation it answers, under the same invocation id, so the log
is split by user event, not by invocation id: one invocation id may give several turns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.genai import types as genai_types

from cairn.errors import InputValidationError, InvocationNotFoundError
from cairn.events.event import Event
from cairn.events.json_values import copy_json
from cairn.sessions.scopes import apply_to_state, without_temp
from cairn.sessions.session import Session

from .eval_case import EvalCase, Invocation, InvocationEvent, InvocationEvents, SessionInput

_USER = "user"


@dataclass
class _Turn:
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


def _turns(events: Sequence[Event]) -> list[_Turn]:
    turns: list[_Turn] = []
    for position, event in enumerate(events):
        if _starts_turn(event):
            turns.append(_Turn(user_event=event, start=position, end=position + 1))
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


def _invocation(turn: _Turn) -> Invocation:
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


def _copy_state(state: dict[str, Any]) -> dict[str, Any]:
    """A deep copy without ``temp:`` keys."""
    copied: dict[str, Any] = copy_json(without_temp(state))
    return copied


def _state_keys_touched(events: Iterable[Event]) -> set[str]:
    touched: set[str] = set()
    for event in events:
        touched.update(event.actions.state_delta)
        touched.update(event.actions.removed_state_keys or ())
    return touched


def _initial_state(session: Session, initial_state: Mapping[str, Any] | None) -> dict[str, Any]:
    """The state the session was created with: as given, else the keys of its state that no
    event of its log sets or removes (those can only have been there from the start)."""
    if initial_state is not None:
        return _copy_state(dict(initial_state))
    touched = _state_keys_touched(session.events)
    return _copy_state({key: value for key, value in session.state.items() if key not in touched})


def _fold(state: dict[str, Any], events: Iterable[Event]) -> dict[str, Any]:
    folded = dict(state)
    for event in events:
        apply_to_state(folded, event)
    return _copy_state(folded)


def _chosen(
    session: Session, turns: list[_Turn], invocation_ids: Sequence[str] | None
) -> list[_Turn]:
    if invocation_ids is None:
        return turns
    known = list(dict.fromkeys(turn.user_event.invocation_id for turn in turns))
    unknown = [i for i in dict.fromkeys(invocation_ids) if i not in known]
    if unknown:
        raise InvocationNotFoundError(
            f"session {session.id!r} of user {session.user_id!r} in app {session.app_name!r} "
            f"has no user turn in invocation(s) {', '.join(map(repr, unknown))}. Its "
            f"invocations with user turns are: {', '.join(map(repr, known)) or 'none'}.",
            app_name=session.app_name,
            user_id=session.user_id,
            session_id=session.id,
            invocation_id=unknown[0],
        )
    wanted = set(invocation_ids)
    return [turn for turn in turns if turn.user_event.invocation_id in wanted]


def eval_case_from_session(
    session: Session,
    *,
    invocation_ids: Sequence[str] | None = None,
    eval_id: str | None = None,
    initial_state: Mapping[str, Any] | None = None,
) -> EvalCase:
    """An eval case whose static conversation is the session's user turns, as they ran.

    ``invocation_ids`` keeps only the turns of those invocations (all of an invocation's
    turns: its message and the answers to its pauses). ``session_input.state`` is the state
    before the first kept turn and ``final_session_state`` the state after the last one,
    both folded from the log onto ``initial_state`` (the state the session was created with,
    as ``BaseSessionService.get_initial_state`` returns it; when None, the keys of
    ``session.state`` that no event changed). ``temp:`` keys are never kept. The session
    must hold its whole log (not a window of recent events); rewound events do not count.
    """
    events = session.filter_events()
    turns = _chosen(session, _turns(events), invocation_ids)
    if not turns:
        raise InputValidationError(
            f"session {session.id!r} of user {session.user_id!r} in app {session.app_name!r} "
            "has no user turn to make an eval case of (no message nor answer from the user). "
            "Pick a session in which the user said something."
        )
    start = turns[0].start
    base = _initial_state(session, initial_state)
    before = _fold(base, events[:start])
    after = _fold(before, events[start : turns[-1].end])
    return EvalCase(
        eval_id=eval_id or _default_eval_id(session, turns, invocation_ids),
        conversation=[_invocation(turn) for turn in turns],
        session_input=SessionInput(
            app_name=session.app_name, user_id=session.user_id, state=before
        ),
        creation_timestamp=turns[0].user_event.timestamp,
        final_session_state=after,
    )


def _default_eval_id(
    session: Session, turns: list[_Turn], invocation_ids: Sequence[str] | None
) -> str:
    """``session_<id>``; with chosen invocations, also the first one's id (a case per pick)."""
    name = f"session_{session.id}"
    if invocation_ids is not None:
        name += f"_{turns[0].user_event.invocation_id}"
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in name)
