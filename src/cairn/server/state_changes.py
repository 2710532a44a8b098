"""The state changes each event made, per scope, before and after: a fold at a cursor.

The dev UI shows, for an event, each key it set or removed with the value it had just
before. The server computes this for the events of one timeline page without folding the
whole log: walking back from the page, it reads older events only until it has found, for
every key the page changes, the last earlier write of that key (or the start of the log,
where the session's initial state answers). Shared ``app:`` and ``user:`` keys the session
had not written (nor been created with) have an unknown ``before``: other sessions may
have set them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from cairn.events.event import Event
from cairn.events.json_values import copy_json
from cairn.server.log_window import PAGE, LogWindow
from cairn.sessions.scopes import scope_of

Key = tuple[str, str]  # (scope, key without prefix)
_ABSENT = object()


@dataclass(frozen=True)
class Write:
    """One key an event set (``value``) or removed."""

    scope: str
    key: str
    value: Any
    removed: bool


def writes_of(event: Event) -> list[Write]:
    """The event's state writes in the order they apply: its delta, then its removals."""
    found = []
    for full, value in event.actions.state_delta.items():
        owner = scope_of(full)
        if owner is not None:
            found.append(Write(owner[0], owner[1], value, removed=False))
    for full in event.actions.removed_state_keys or ():
        owner = scope_of(full)
        if owner is not None:
            found.append(Write(owner[0], owner[1], None, removed=True))
    return found


@dataclass(frozen=True)
class Before:
    """A key's value just before an event: ``value`` is ``_ABSENT`` when it had none;
    ``known`` is False for a shared key this session had not written."""

    value: Any
    known: bool


def change_json(write: Write, before: Before) -> dict[str, Any]:
    """One change as the timeline route answers it (model.js's shape: no ``before`` when
    the key had no value, no ``after`` when it was removed)."""
    had = before.value is not _ABSENT
    data: dict[str, Any] = {
        "scope": write.scope,
        "key": write.key,
        "known": before.known,
        "had": had,
        "removed": write.removed,
    }
    if had:
        data["before"] = copy_json(before.value)
    if not write.removed:
        data["after"] = copy_json(write.value)
    return data


async def state_changes(
    window: LogWindow, positions: Iterable[int], initial_state: dict[str, Any]
) -> dict[str, list[dict[str, Any]]]:
    """Event id -> its state changes, for the events of ``window`` at ``positions``.

    Cost: the events between the newest and the oldest of ``positions`` (already in the
    window when they are one page), plus the older events back to the last earlier write
    of each key those events change, read in pages that double (64 to 1,000 events). A
    key the page writes for the first time makes the walk reach the start of the log: the
    worst case reads every event older than the page once.
    """
    wanted = sorted({p for p in positions if writes_of(window.at(p))}, reverse=True)
    if not wanted:
        return {}
    befores: dict[tuple[int, Key], Before] = {}
    pending: dict[Key, list[int]] = {}
    remaining = set(wanted)
    position = wanted[0]
    while remaining or pending:
        # Older pages double in size: a few events back usually answer every key.
        if position < window.low and not await window.older(min(PAGE, max(64, window.read))):
            break  # the start of the log: the initial state answers the rest
        event = window.at(position)
        latest: dict[Key, Write] = {}
        for write in writes_of(event):
            latest[(write.scope, write.key)] = write
        for key, write in latest.items():
            value = _ABSENT if write.removed else write.value
            for waiting in pending.pop(key, ()):
                befores[(waiting, key)] = Before(value, known=True)
        if position in remaining:
            remaining.discard(position)
            for key in latest:
                pending.setdefault(key, []).append(position)
        position -= 1
    initial = _scoped(initial_state)
    for key, unresolved in pending.items():
        value = initial.get(key, _ABSENT)
        before = Before(value, known=key[0] == "session" or value is not _ABSENT)
        for at in unresolved:
            befores[(at, key)] = before
    return {window.at(p).id: _changes(window.at(p), p, befores) for p in wanted}


def _scoped(state: dict[str, Any]) -> dict[Key, Any]:
    found: dict[Key, Any] = {}
    for full, value in state.items():
        owner = scope_of(full)
        if owner is not None:
            found[owner] = value
    return found


def _changes(event: Event, position: int, befores: dict[tuple[int, Key], Before]) -> list[Any]:
    """The event's writes in order, each with the value just before it (an event that
    writes a key twice sees its own first write)."""
    current: dict[Key, Before] = {}
    result = []
    for write in writes_of(event):
        key = (write.scope, write.key)
        before = current.get(key) or befores[(position, key)]
        result.append(change_json(write, before))
        current[key] = Before(_ABSENT if write.removed else write.value, known=True)
    return result
