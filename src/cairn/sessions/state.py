"""Scoped session state as the running code sees it: stored value overlaid by pending writes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from cairn.errors import CairnError
from cairn.events.json_values import copy_json

_MUTABLE = (dict, list)
_ABSENT = object()


class StateSchemaError(CairnError, TypeError):
    """State does not fit the ``state_schema`` declared for it (ADK's ``StateSchemaError``,
    a ``TypeError``): the message names the key, the schema and what is wrong. Nothing of
    the failing step is stored."""


class State:
    """A dict-like view of state: ``value`` (the session's) overlaid by ``delta`` (pending writes).

    A write goes to ``delta``, which is what the event carrying it commits: state becomes
    durable only through that event's ``state_delta``. As in ADK, the write is also visible
    at once in ``value`` (the invocation's own ``ctx.session.state``, which apps read), and
    ``discard()`` takes it back out of there if its event will never be stored (a failed
    attempt that is retried), so the invocation goes on as if from the log.

    In-place edits of a dict or list read from the stored value (``state["items"].append(x)``)
    are kept on a private copy and recorded into ``delta`` (and ``value``) by ``has_delta()`` /
    ``flush_in_place_edits()``, so they are not lost.

    ``del state[key]`` / ``state.pop(key)`` delete a key: it is gone from the view and from
    ``value`` at once, ``delta`` holds ``None`` for it (ADK's tombstone) and ``removed_keys()``
    names it, so the owner of ``delta`` can commit the deletion (``removed_state_keys``).

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
        self._replaced: dict[str, Any] = {}
        """The value each key written had in ``value`` before (``_ABSENT``: none)."""
        self._removed: set[str] = set()
        """Keys deleted since and not set again: absent from the view."""

    def __getitem__(self, key: str) -> Any:
        if key in self._removed:
            raise KeyError(key)
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
        self._removed.discard(key)
        self._write(key, value)

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self._read_copies.pop(key, None)
        if key not in self._replaced:
            self._replaced[key] = self._value.get(key, _ABSENT)
        self._value.pop(key, None)
        self._delta[key] = None
        self._removed.add(key)

    def pop(self, key: str, default: Any = _ABSENT) -> Any:
        """Delete ``key`` and return its value; ``default`` (else ``KeyError``) if it is not set."""
        if key not in self:
            if default is _ABSENT:
                raise KeyError(key)
            return default
        value = self[key]
        del self[key]
        return value

    def removed_keys(self) -> set[str]:
        """The keys deleted (and not set again) since the last ``discard()``."""
        return set(self._removed)

    def _write(self, key: str, value: Any) -> None:
        if key not in self._replaced:
            self._replaced[key] = self._value.get(key, _ABSENT)
        self._delta[key] = value
        self._value[key] = value

    def __contains__(self, key: object) -> bool:
        if key in self._removed:
            return False
        return key in self._delta or key in self._value

    def __iter__(self) -> Iterator[str]:
        yield from self.to_dict()

    def __len__(self) -> int:
        return len((self._value.keys() | self._delta.keys()) - self._removed)

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
                self._write(key, working)
                del self._read_copies[key]

    def discard(self) -> None:
        """Forget the pending writes: ``value`` gets back what it had for each key written
        (unless something else wrote the key since), and ``delta`` is emptied."""
        for key, before in self._replaced.items():
            if key in self._removed and key not in self._value:
                if before is not _ABSENT:
                    self._value[key] = before
            elif key in self._delta and self._value.get(key, _ABSENT) is self._delta[key]:
                if before is _ABSENT:
                    self._value.pop(key, None)
                else:
                    self._value[key] = before
        self._replaced.clear()
        self._read_copies.clear()
        self._removed.clear()
        self._delta.clear()

    def has_delta(self) -> bool:
        """True if anything was written or deleted (in-place edits of values read included)."""
        self.flush_in_place_edits()
        return bool(self._delta) or bool(self._removed)

    def to_dict(self) -> dict[str, Any]:
        """A plain dict of the current view (stored value overlaid by pending writes)."""
        self.flush_in_place_edits()
        result = dict(self._value)
        result.update(self._delta)
        for key in self._removed:
            result.pop(key, None)
        return result
