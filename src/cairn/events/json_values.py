"""Plain-JSON values: the only kind of value cairn stores in state.

A state value must survive a JSON round trip unchanged (guarantee 10), so
tuples, sets, bytes, datetimes, NaN and arbitrary objects are refused up front
with an error naming the key, instead of being coerced and silently changed.
So are strings containing U+0000, which PostgreSQL's JSONB cannot store.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from cairn.errors import InvalidStateValueError

JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]


def _find_non_json(value: Any, path: str) -> tuple[str, str] | None:
    """Return (path, type name) of the first non-JSON part of `value`, or None."""
    kind = type(value)
    if kind is str:
        # Valid JSON, but PostgreSQL's JSONB cannot hold it: refused everywhere, so every store
        # behaves alike.
        return (path, "a string containing the NUL character (U+0000)") if "\x00" in value else None
    if value is None or kind is bool or kind is int:
        return None
    if kind is float:
        return None if math.isfinite(value) else (path, f"the non-finite float {value!r}")
    if kind is dict:
        for k, v in value.items():
            if type(k) is not str:
                return (path, f"a dict with the non-str key {k!r}")
            found = _find_non_json(v, f"{path}[{k!r}]")
            if found is not None:
                return found
        return None
    if kind is list:
        for i, v in enumerate(value):
            found = _find_non_json(v, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    return (path, f"a {kind.__module__}.{kind.__qualname__}")


def check_json_state(state: Mapping[str, Any], *, where: str) -> None:
    """Raise InvalidStateValueError naming the first key whose value is not plain JSON."""
    for key, value in state.items():
        if type(key) is not str:
            raise InvalidStateValueError(
                key=repr(key), path="", value_type="a non-str key", where=where
            )
        found = _find_non_json(value, "")
        if found is not None:
            raise InvalidStateValueError(key=key, path=found[0], value_type=found[1], where=where)


def copy_json(value: Any) -> Any:
    """Deep-copy a plain-JSON value (much faster than copy.deepcopy for this shape)."""
    kind = type(value)
    if kind is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if kind is list:
        return [copy_json(v) for v in value]
    return value
