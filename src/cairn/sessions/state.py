"""Scoped session state as the running code sees it: stored value overlaid by pending writes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from cairn.events.json_values import copy_json

_MUTABLE = (dict, list)


class State:
    """A dict-like view of state: ``value`` (the session's) overlaid by ``delta`` (pending writes).

    Writes go to ``delta`` only; they are visible to reads through this view at
    once and become part of the session when the event carrying ``delta`` is
    appended. The session's own state is never changed early, so an event that
    is never stored leaves no trace.

    In-place edits of a dict or list read from the stored value (``state["items"].append(x)``)
    are kept on a private copy and recorded into ``delta`` by ``has_delta()`` /
    ``flush_in_place_edits()``, so they are neither lost nor leaked into the
    session before they are committed.

    Key prefixes choose the scope: ``app:`` (whole app), ``user:`` (all of one
    user's sessions), ``temp:`` (this invocation only, never stored), none (this session).
    """

    APP_PREFIX = "app:"
    USER_PREFIX = "user:"
    TEMP_PREFIX = "temp:"

    def __init__(self, value: dict[str, Any], delta: dict[str, Any]) -> None:
        self._value = value
        self._delta = delta
        self._read_copies: dict[str, tuple[Any, Any]] = {}

    def __getitem__(self, key: str) -> Any:
        if key in self._delta:
            return self._delta[key]
        if key in self._read_copies:
            return self._read_copies[key][1]
        stored = self._value[key]
        if isinstance(stored, _MUTABLE):
            working = copy_json(stored)
            self._read_copies[key] = (stored, working)
            return working
        return stored

    def __setitem__(self, key: str, value: Any) -> None:
        self._read_copies.pop(key, None)
        self._delta[key] = value

    def __contains__(self, key: object) -> bool:
        return key in self._delta or key in self._value

    def __iter__(self) -> Iterator[str]:
        yield from self.to_dict()

    def __len__(self) -> int:
        return len(self._value.keys() | self._delta.keys())

    def __repr__(self) -> str:
        return f"State({self.to_dict()!r})"

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when it is not set."""
        if key in self:
            return self[key]
        return default

    def setdefault(self, key: str, default: Any = None) -> Any:
        """Return ``state[key]``, first setting it to ``default`` if it is not set."""
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, other: Mapping[str, Any]) -> None:
        """Set every key of ``other``."""
        for key, value in other.items():
            self[key] = value

    def flush_in_place_edits(self) -> None:
        """Record into ``delta`` every dict/list read earlier and changed in place since."""
        for key, (original, working) in list(self._read_copies.items()):
            if working != original:
                self._delta[key] = working
                del self._read_copies[key]

    def has_delta(self) -> bool:
        """True if anything was written (including in-place edits of values read earlier)."""
        self.flush_in_place_edits()
        return bool(self._delta)

    def to_dict(self) -> dict[str, Any]:
        """A plain dict of the current view (stored value overlaid by pending writes)."""
        self.flush_in_place_edits()
        result = dict(self._value)
        result.update(self._delta)
        return result
