"""How a flat, prefixed state map splits into its storage scopes and merges back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cairn.events.event import Event
from cairn.sessions.state import State

APP_PREFIX = State.APP_PREFIX
USER_PREFIX = State.USER_PREFIX
TEMP_PREFIX = State.TEMP_PREFIX


@dataclass
class ScopedDelta:
    """A state delta split by scope; keys carry no prefix. ``temp:`` keys are dropped."""

    app: dict[str, Any] = field(default_factory=dict)
    user: dict[str, Any] = field(default_factory=dict)
    session: dict[str, Any] = field(default_factory=dict)


def split_by_scope(delta: dict[str, Any]) -> ScopedDelta:
    """Split a prefixed state map into app, user and session parts (``temp:`` dropped)."""
    scoped = ScopedDelta()
    for key, value in delta.items():
        if key.startswith(APP_PREFIX):
            scoped.app[key[len(APP_PREFIX) :]] = value
        elif key.startswith(USER_PREFIX):
            scoped.user[key[len(USER_PREFIX) :]] = value
        elif not key.startswith(TEMP_PREFIX):
            scoped.session[key] = value
    return scoped


def merge_scopes(
    app: dict[str, Any], user: dict[str, Any], session: dict[str, Any]
) -> dict[str, Any]:
    """The flat view a session sees: session keys, then ``app:`` and ``user:`` keys re-prefixed."""
    merged = dict(session)
    for key, value in app.items():
        merged[APP_PREFIX + key] = value
    for key, value in user.items():
        merged[USER_PREFIX + key] = value
    return merged


def without_temp(state: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``state`` without ``temp:`` keys (the same dict if it has none)."""
    if not any(key.startswith(TEMP_PREFIX) for key in state):
        return state
    return {k: v for k, v in state.items() if not k.startswith(TEMP_PREFIX)}


def stored_form(event: Event) -> Event:
    """The event as it is stored: ``temp:`` keys removed from its state delta.

    The caller's event object is left untouched, so whoever receives it still
    sees what the invocation wrote.
    """
    delta = event.actions.state_delta
    kept = without_temp(delta)
    if kept is delta:
        return event
    actions = event.actions.model_copy(update={"state_delta": kept})
    return event.model_copy(update={"actions": actions})
