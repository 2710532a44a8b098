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
    """A state delta split by scope; keys carry no prefix. ``temp:`` keys are dropped.

    ``removed`` holds the keys to delete, as (scope, key) pairs; scope is "app",
    "user" or "session".
    """

    app: dict[str, Any] = field(default_factory=dict)
    user: dict[str, Any] = field(default_factory=dict)
    session: dict[str, Any] = field(default_factory=dict)
    removed: list[tuple[str, str]] = field(default_factory=list)

    def removed_from(self, scope: str) -> list[str]:
        """The keys (without prefix) this delta deletes from ``scope``."""
        return [key for owner, key in self.removed if owner == scope]


def scope_of(key: str) -> tuple[str, str] | None:
    """(scope, key without prefix) of a prefixed key; None for a ``temp:`` key."""
    if key.startswith(APP_PREFIX):
        return "app", key[len(APP_PREFIX) :]
    if key.startswith(USER_PREFIX):
        return "user", key[len(USER_PREFIX) :]
    if key.startswith(TEMP_PREFIX):
        return None
    return "session", key


def split_by_scope(delta: dict[str, Any], removed: list[str] | None = None) -> ScopedDelta:
    """Split a prefixed state map (and keys to delete) into app, user and session parts.

    ``temp:`` keys are dropped.
    """
    scoped = ScopedDelta()
    for key, value in delta.items():
        if key.startswith(APP_PREFIX):
            scoped.app[key[len(APP_PREFIX) :]] = value
        elif key.startswith(USER_PREFIX):
            scoped.user[key[len(USER_PREFIX) :]] = value
        elif not key.startswith(TEMP_PREFIX):
            scoped.session[key] = value
    for key in sorted(set(removed or ())):
        owner = scope_of(key)
        if owner is not None:
            scoped.removed.append(owner)
    return scoped


def event_scopes(event: Event) -> ScopedDelta:
    """The event's state changes split by scope."""
    return split_by_scope(event.actions.state_delta, event.actions.removed_state_keys)


def apply_to_state(state: dict[str, Any], event: Event) -> None:
    """Apply the event's state changes to a flat (prefixed) state map, in place."""
    state.update(event.actions.state_delta)
    for key in event.actions.removed_state_keys or ():
        state.pop(key, None)


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
    removed = event.actions.removed_state_keys
    kept_removed = removed
    if removed is not None and any(key.startswith(TEMP_PREFIX) for key in removed):
        kept_removed = [key for key in removed if not key.startswith(TEMP_PREFIX)] or None
    if kept is delta and kept_removed is removed:
        return event
    actions = event.actions.model_copy(
        update={"state_delta": kept, "removed_state_keys": kept_removed}
    )
    return event.model_copy(update={"actions": actions})
