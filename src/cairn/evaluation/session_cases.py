"""An eval case from a stored session: each user turn of its log becomes one invocation.

A turn starts at each event the user wrote: a message, or the answer to a pause (a
long-running tool's result, a tool confirmation, a credential, a workflow's input request).
An answer continues the invocation it answers, under the same invocation id, so the log
is split by user event, not by invocation id: one invocation id may give several turns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cairn.errors import InputValidationError, InvocationNotFoundError
from cairn.events.event import Event
from cairn.events.json_values import copy_json
from cairn.sessions.scopes import apply_to_state, without_temp
from cairn.sessions.session import Session

from ._turns import Turn, split_turns, turn_invocation
from .eval_case import EvalCase, SessionInput


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
    session: Session, turns: list[Turn], invocation_ids: Sequence[str] | None
) -> list[Turn]:
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
    turns = _chosen(session, split_turns(events), invocation_ids)
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
        conversation=[turn_invocation(turn) for turn in turns],
        session_input=SessionInput(
            app_name=session.app_name, user_id=session.user_id, state=before
        ),
        creation_timestamp=turns[0].user_event.timestamp,
        final_session_state=after,
    )


def _default_eval_id(
    session: Session, turns: list[Turn], invocation_ids: Sequence[str] | None
) -> str:
    """``session_<id>``; with chosen invocations, also the first one's id (a case per pick)."""
    name = f"session_{session.id}"
    if invocation_ids is not None:
        name += f"_{turns[0].user_event.invocation_id}"
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in name)
