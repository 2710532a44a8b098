"""The metadata keys cairn and google-adk put on A2A objects, and the proto values they hold.

ADK prefixes every key it adds to A2A metadata with ``adk_`` (``adk_type``, ``adk_thought``,
``adk_app_name``, ...); cairn writes and reads the same keys so that either side reads the
other's parts and messages.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format, struct_pb2

ADK_METADATA_KEY_PREFIX = "adk_"
_EXACT_INTEGERS = 2**53


def adk_metadata_key(key: str) -> str:
    """The A2A metadata key ADK uses for ``key``: ``type`` -> ``adk_type``."""
    if not key:
        raise ValueError("an A2A metadata key needs a name: pass a non-empty key")
    return ADK_METADATA_KEY_PREFIX + key


def plain_json(value: Any) -> Any:
    """A value read from a protobuf Struct, with whole numbers as ints again.

    A protobuf ``Value`` stores every number as a double, so a function call's ``{"n": 3}``
    arrives as ``3.0``; JSON itself does not tell the two apart, and a tool declared with an
    ``int`` parameter expects ``3``. Whole numbers within the exact range of a double come
    back as ints; other numbers stay floats.
    """
    if isinstance(value, float) and value.is_integer() and abs(value) <= _EXACT_INTEGERS:
        return int(value)
    if isinstance(value, dict):
        return {key: plain_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_json(item) for item in value]
    return value


def struct_to_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A protobuf Struct (A2A metadata) as a plain dict."""
    result: dict[str, Any] = plain_json(json_format.MessageToDict(struct))
    return result


def update_struct(struct: struct_pb2.Struct, values: dict[str, Any]) -> None:
    """``struct.update(values)``, at half the cost for the str values most metadata holds:
    ``Struct.update`` checks each value's type in Python (None? bool? str?) before it sets
    a str as the ``string_value`` that this sets at once. Other values go through it."""
    fields = struct.fields
    for key, value in values.items():
        if type(value) is str:
            fields[key].string_value = value
        else:
            struct[key] = value


def dict_to_struct(values: dict[str, Any]) -> struct_pb2.Struct:
    """A plain JSON dict as a protobuf Struct (A2A metadata)."""
    struct = struct_pb2.Struct()
    update_struct(struct, values)  # the well-known type's own filling: no JSON parser
    return struct


def value_to_python(value: struct_pb2.Value) -> Any:
    """A protobuf Value (an A2A data part's content) as plain JSON."""
    return plain_json(json_format.MessageToDict(value))


def python_to_value(data: Any) -> struct_pb2.Value:
    """Plain JSON as a protobuf Value (an A2A data part's content)."""
    holder = struct_pb2.Struct()
    holder.update({"value": data})
    return holder.fields["value"]
