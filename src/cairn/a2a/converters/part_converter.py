"""A2A message parts <-> ``google.genai`` parts, as google-adk converts them.

Text is text; a file part becomes ``file_data`` (by URL) or ``inline_data`` (by bytes) and
back. What A2A has no part for (function calls and responses, code and its results, tool
calls) travels as a data part whose metadata names the kind under ``adk_type``; ADK uses the
same keys and values, so an ADK client reads what a cairn server sends and the other way
round. A data part of any other kind reaches the model as a ``text/plain`` blob wrapped in
``<a2a_datapart_json>`` tags, and goes back out as the same data part.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
from collections.abc import Callable
from typing import Any

from a2a import types as a2a_types
from google.genai import types as genai_types
from pydantic import BaseModel

from cairn.a2a.converters.utils import (
    adk_metadata_key,
    python_to_value,
    struct_to_dict,
    update_struct,
    value_to_python,
)

logger = logging.getLogger(__name__)

A2A_DATA_PART_METADATA_TYPE_KEY = "type"
A2A_DATA_PART_METADATA_IS_LONG_RUNNING_KEY = "is_long_running"
A2A_DATA_PART_METADATA_TYPE_FUNCTION_CALL = "function_call"
A2A_DATA_PART_METADATA_TYPE_FUNCTION_RESPONSE = "function_response"
A2A_DATA_PART_METADATA_TYPE_CODE_EXECUTION_RESULT = "code_execution_result"
A2A_DATA_PART_METADATA_TYPE_EXECUTABLE_CODE = "executable_code"
A2A_DATA_PART_METADATA_TYPE_TOOL_CALL = "tool_call"
A2A_DATA_PART_METADATA_TYPE_TOOL_RESPONSE = "tool_response"
A2A_DATA_PART_TEXT_MIME_TYPE = "text/plain"
A2A_DATA_PART_START_TAG = b"<a2a_datapart_json>"
A2A_DATA_PART_END_TAG = b"</a2a_datapart_json>"

A2APartToGenAIPartConverter = Callable[
    [a2a_types.Part], genai_types.Part | list[genai_types.Part] | None
]
GenAIPartToA2APartConverter = Callable[
    [genai_types.Part], a2a_types.Part | list[a2a_types.Part] | None
]

# The genai field of each kind a data part carries, by its `adk_type` value.
_DATA_PART_KINDS: dict[str, tuple[str, type[BaseModel]]] = {
    A2A_DATA_PART_METADATA_TYPE_FUNCTION_CALL: ("function_call", genai_types.FunctionCall),
    A2A_DATA_PART_METADATA_TYPE_FUNCTION_RESPONSE: (
        "function_response",
        genai_types.FunctionResponse,
    ),
    A2A_DATA_PART_METADATA_TYPE_CODE_EXECUTION_RESULT: (
        "code_execution_result",
        genai_types.CodeExecutionResult,
    ),
    A2A_DATA_PART_METADATA_TYPE_EXECUTABLE_CODE: (
        "executable_code",
        genai_types.ExecutableCode,
    ),
    A2A_DATA_PART_METADATA_TYPE_TOOL_CALL: ("tool_call", genai_types.ToolCall),
    A2A_DATA_PART_METADATA_TYPE_TOOL_RESPONSE: ("tool_response", genai_types.ToolResponse),
}

# Fields that say how to read a media part (which slice, what resolution): they travel in
# the part's metadata so that a file part keeps them across a hop.
_MEDIA_FIELDS = ("video_metadata", "media_resolution")

# A text part is a copy of a Part with nothing set, its fields filled in (``model_copy``): a
# third of the cost of ``Part(text=..., thought=..., part_metadata=...)``, which runs Part's
# constructor and validators. The result is the same: the values are already of the fields'
# types (a str, a bool, a dict made for this part or None), which validation would keep as
# they are, and the fields set are those the constructor sets (it leaves out a None thought).
_EMPTY_PART = genai_types.Part()

_THOUGHT = adk_metadata_key("thought")
_THOUGHT_SIGNATURE = adk_metadata_key("thought_signature")
_TYPE = adk_metadata_key(A2A_DATA_PART_METADATA_TYPE_KEY)


def _part_metadata_for_model(metadata: dict[str, Any]) -> dict[str, Any] | None:
    """Vertex AI refuses ``part_metadata`` (only the Gemini API takes it): keep it out there."""
    if not metadata:  # None either way: the environment is read only for metadata to keep
        return None
    if os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").strip().lower() in ("true", "1"):
        return None
    return metadata


def _media_fields_from(metadata: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The media fields an A2A part's metadata carries, and the metadata without them."""
    fields: dict[str, Any] = {}
    rest = dict(metadata)
    for name in _MEDIA_FIELDS:
        key = adk_metadata_key(name)
        if name in genai_types.Part.model_fields and rest.get(key) is not None:
            fields[name] = rest.pop(key)
    return fields, rest


def _media_metadata_of(part: genai_types.Part) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    for name in _MEDIA_FIELDS:
        value = getattr(part, name, None)
        if isinstance(value, BaseModel):
            value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
        if value is not None:
            metadata[adk_metadata_key(name)] = value
    return metadata


def _thought_signature(metadata: dict[str, Any]) -> bytes | None:
    value = metadata.get(_THOUGHT_SIGNATURE)
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            logger.warning("an A2A part's %s is not base64; it is dropped", _THOUGHT_SIGNATURE)
    return None


def _a2a_part(metadata: dict[str, Any], **content: Any) -> a2a_types.Part:
    part = a2a_types.Part(**content)
    if metadata:
        update_struct(part.metadata, metadata)  # filled in place: no Struct made to copy
    return part


def convert_a2a_part_to_genai_part(a2a_part: a2a_types.Part) -> genai_types.Part | None:
    """One A2A part as a genai part, or ``None`` (logged) for a part with no content."""
    metadata = struct_to_dict(a2a_part.metadata) if a2a_part.HasField("metadata") else {}
    kind = a2a_part.WhichOneof("content")
    if kind == "text":
        fields: dict[str, Any] = {
            "text": a2a_part.text,
            "part_metadata": _part_metadata_for_model(metadata),
        }
        thought = metadata.get(_THOUGHT)
        if isinstance(thought, bool):
            fields["thought"] = thought
        return _EMPTY_PART.model_copy(update=fields)
    if kind in ("url", "raw"):
        media, rest = _media_fields_from(metadata)
        mime_type = a2a_part.media_type or None
        name = a2a_part.filename or None
        if kind == "url":
            return genai_types.Part(
                file_data=genai_types.FileData(
                    file_uri=a2a_part.url, mime_type=mime_type, display_name=name
                ),
                part_metadata=_part_metadata_for_model(rest),
                **media,
            )
        return genai_types.Part(
            inline_data=genai_types.Blob(data=a2a_part.raw, mime_type=mime_type, display_name=name),
            part_metadata=_part_metadata_for_model(rest),
            **media,
        )
    if kind == "data":
        data = value_to_python(a2a_part.data)
        typed = _DATA_PART_KINDS.get(str(metadata.get(_TYPE)))
        if typed is not None and isinstance(data, dict):
            field, model = typed
            genai_part = genai_types.Part(
                thought_signature=_thought_signature(metadata),
                part_metadata=_part_metadata_for_model(metadata),
            )
            setattr(genai_part, field, model.model_validate(data))
            return genai_part
        wrapped = A2A_DATA_PART_START_TAG + json.dumps(data).encode() + A2A_DATA_PART_END_TAG
        return genai_types.Part(
            inline_data=genai_types.Blob(data=wrapped, mime_type=A2A_DATA_PART_TEXT_MIME_TYPE),
            part_metadata=_part_metadata_for_model(metadata),
        )
    logger.warning("an A2A part with no content (no text, file or data) is skipped")
    return None


def _wrapped_data(blob: genai_types.Blob) -> bytes | None:
    """The JSON inside a blob that carries an A2A data part, else ``None``."""
    data = blob.data
    if (
        blob.mime_type == A2A_DATA_PART_TEXT_MIME_TYPE
        and data is not None
        and data.startswith(A2A_DATA_PART_START_TAG)
        and data.endswith(A2A_DATA_PART_END_TAG)
    ):
        return data[len(A2A_DATA_PART_START_TAG) : -len(A2A_DATA_PART_END_TAG)]
    return None


def convert_genai_part_to_a2a_part(part: genai_types.Part) -> a2a_types.Part | None:
    """One genai part as an A2A part, or ``None`` (logged) for a kind A2A cannot carry."""
    own = part.part_metadata or {}
    if part.text is not None:
        if part.thought is None:
            return _a2a_part(own, text=part.text)
        return _a2a_part({_THOUGHT: part.thought, **own}, text=part.text)
    if part.file_data is not None:
        file_data = part.file_data
        return _a2a_part(
            {**_media_metadata_of(part), **own},
            url=file_data.file_uri or "",
            media_type=file_data.mime_type or "",
            filename=file_data.display_name or "",
        )
    if part.inline_data is not None:
        blob = part.inline_data
        wrapped = _wrapped_data(blob)
        if wrapped is not None:
            return _a2a_part(own, data=python_to_value(json.loads(wrapped)))
        if blob.data is None:
            logger.warning("a genai blob with no data has no A2A part; it is skipped")
            return None
        return _a2a_part(
            {**_media_metadata_of(part), **own},
            raw=blob.data,
            media_type=blob.mime_type or "",
            filename=blob.display_name or "",
        )
    for type_value, (field, _model) in _DATA_PART_KINDS.items():
        value = getattr(part, field)
        if value is None:
            continue
        metadata: dict[str, Any] = {_TYPE: type_value}
        if part.thought_signature is not None:
            metadata[_THOUGHT_SIGNATURE] = base64.b64encode(part.thought_signature).decode()
        data = value.model_dump(mode="json", by_alias=True, exclude_none=True)
        return _a2a_part({**metadata, **own}, data=python_to_value(data))
    logger.warning("a genai part with no content A2A can carry is skipped: %s", part)
    return None
