"""State as the fold of the log: what a session's state must be, computed from its events.

Every state change is carried by an event (``state_delta`` sets keys,
``removed_state_keys`` deletes them), so a session's own state is its initial
state with each of its events applied in order. Rewinds and forks keep this
true: a rewind event carries the changes that restore the earlier state, and a
fork's history is a prefix of another log.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cairn.events.event import Event
from cairn.events.json_values import copy_json
from cairn.sessions.scopes import event_scopes, split_by_scope


def session_state_of(initial_state: dict[str, Any], events: Iterable[Event]) -> dict[str, Any]:
    """The session-scope state (no ``app:``/``user:``/``temp:`` keys) after ``events``."""
    state: dict[str, Any] = copy_json(split_by_scope(initial_state).session)
    for event in events:
        scoped = event_scopes(event)
        state.update(scoped.session)
        for name in scoped.removed_from("session"):
            state.pop(name, None)
    return state


def artifact_versions_of(events: Iterable[Event]) -> dict[str, int]:
    """Filename -> the version the events last recorded for it (``artifact_delta``)."""
    versions: dict[str, int] = {}
    for event in events:
        versions.update(event.actions.artifact_delta)
    return versions
