"""Plain-JSON values: the only kind of value cairn stores in state.

A state value must survive a JSON round trip unchanged (guarantee 10), so
tuples, sets, bytes, datetimes, NaN and arbitrary objects are refused up front
with an error naming the key, instead of being coerced and silently changed.
So are strings containing U+0000 or a lone surrogate (not UTF-8), integers of
more than ``MAX_INT_DIGITS`` digits (Python will not print them), and values
nested more than ``MAX_DEPTH`` levels deep, or containing themselves (the JSON
parser reading an event back stops at about 200 levels).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from cairn.errors import InvalidStateValueError

JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]

MAX_DEPTH = 100
"""Deepest nesting of lists and dicts in one state value."""

MAX_INT_DIGITS = 4300
"""Most digits of an integer in state (Python's default limit for printing one)."""

_INT_LIMIT = 10**MAX_INT_DIGITS


def _bad_string(value: str) -> str | None:
    """Why ``value`` (a string or dict key) cannot be stored, or None."""
    if "\x00" in value:
        # Valid JSON, but it cannot be an id or key on PostgreSQL, and JSONB (cairn's column
        # type before schema 0005) could not hold it: refused everywhere, so stores agree.
        return "the NUL character (U+0000)"
    if not value.isascii():
        try:
            value.encode()
        except UnicodeEncodeError:
            return "a lone surrogate (it is not valid UTF-8)"
    return None


def _find_non_json(value: Any, path: str, depth: int) -> tuple[str, str] | None:
    """Return (path, type name) of the first non-JSON part of `value`, or None."""
    kind = type(value)
    if kind is str:
        bad = _bad_string(value)
        return None if bad is None else (path, f"a string containing {bad}")
    if value is None or kind is bool:
        return None
    if kind is int:
        if -_INT_LIMIT < value < _INT_LIMIT:
            return None
        return (path, f"an integer of more than {MAX_INT_DIGITS} digits")
    if kind is float:
        return None if math.isfinite(value) else (path, f"the non-finite float {value!r}")
    if kind is dict or kind is list:
        if depth == MAX_DEPTH:
            return (path, f"nested more than {MAX_DEPTH} levels deep")
        items = value.items() if kind is dict else enumerate(value)
        for k, v in items:
            if kind is dict:
                if type(k) is not str:
                    return (path, f"a dict with the non-str key {k!r}")
                bad = _bad_string(k)
                if bad is not None:
                    return (path, f"a dict with a key containing {bad}")
            found = _find_non_json(v, f"{path}[{k!r}]", depth + 1)
            if found is not None:
                return found
        return None
    return (path, f"a {kind.__module__}.{kind.__qualname__}")


def _contains_itself(value: Any, inside: tuple[int, ...] = ()) -> bool:
    """Whether a dict or list within ``MAX_DEPTH`` levels is an element of itself."""
    if type(value) not in (dict, list):
        return False
    if id(value) in inside:
        return True
    if len(inside) == MAX_DEPTH:
        return False
    inside = (*inside, id(value))
    children = value.values() if type(value) is dict else value
    return any(_contains_itself(child, inside) for child in children)


def check_json_state(state: Mapping[str, Any], *, where: str) -> None:
    """Raise InvalidStateValueError naming the first key whose value is not plain JSON."""
    for key, value in state.items():
        if type(key) is not str:
            raise InvalidStateValueError(
                key=repr(key), path="", value_type="a non-str key", where=where
            )
        found = _find_non_json(value, "", 0)
        if found is not None:
            path, problem = found
            if problem.startswith("nested"):
                if _contains_itself(value):
                    path, problem = "", "a dict or list that contains itself"
                else:
                    path = path[:60] + "..."
            raise InvalidStateValueError(key=key, path=path, value_type=problem, where=where)


def copy_json(value: Any) -> Any:
    """Deep-copy a plain-JSON value (much faster than copy.deepcopy for this shape)."""
    kind = type(value)
    if kind is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if kind is list:
        return [copy_json(v) for v in value]
    return value
