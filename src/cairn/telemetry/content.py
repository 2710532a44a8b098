"""What a model call sent and got, as GenAI semantic-convention span attributes.

The conventions' JSON shapes: ``gen_ai.system_instructions`` is a list of parts,
``gen_ai.input.messages`` and ``gen_ai.output.messages`` are lists of
``{"role", "parts", ["finish_reason"]}``, ``gen_ai.tool.definitions`` a list of
``{"type": "function", "name", "description", "parameters"}``. Parts are
``text``, ``reasoning``, ``tool_call``, ``tool_call_response``, ``blob`` (its size, never
its bytes) and ``uri``.

Content is recorded only when capture is on (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``,
which ``cairn web`` turns on). Long strings are cut with a visible marker, and each
attribute is capped, so one large prompt cannot bloat a trace. Only the generation
settings listed in ``CONFIG_FIELDS`` are read from a request's config: HTTP options
(headers, API keys) and credentials never reach a span.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from google.genai import types

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The standard switch for recording prompts and replies on spans."""

MAX_STRING_CHARS = 4_000
"""A longer string inside a message (a text, a tool argument) is cut to this many characters."""

MAX_ATTRIBUTE_CHARS = 16_000
"""A longer attribute (the JSON of all messages) is cut to this many characters."""

CONFIG_FIELDS = (
    "temperature",
    "top_p",
    "top_k",
    "candidate_count",
    "max_output_tokens",
    "stop_sequences",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "response_mime_type",
    "response_schema",
    "response_json_schema",
    "thinking_config",
    "tool_config",
)
"""The generation settings a span records (never ``http_options``, whose headers hold keys)."""

_ON = {"1", "true", "yes", "on", "span_only", "span_and_event"}


def capture_enabled() -> bool:
    """Whether prompts and replies go on spans (the environment variable, read at each call)."""
    return os.environ.get(CAPTURE_ENV, "").strip().lower() in _ON


def truncated(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters and a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[truncated {len(text) - limit} of {len(text)} characters]"


def _capped(value: Any) -> Any:
    if isinstance(value, str):
        return truncated(value, MAX_STRING_CHARS)
    if isinstance(value, dict):
        return {str(key): _capped(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_capped(item) for item in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return truncated(str(value), MAX_STRING_CHARS)


def _json(value: Any) -> str:
    # Most values hold no long string: then the text as it is (walking it costs more).
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= MAX_STRING_CHARS:
        return text
    return json.dumps(_capped(value), ensure_ascii=False)


def attribute_json(value: Any) -> str:
    """The JSON text an attribute holds, each string and the whole text capped."""
    return truncated(_json(value), MAX_ATTRIBUTE_CHARS)


def part_of(part: types.Part) -> dict[str, Any]:
    """One ``types.Part`` in the conventions' part shape."""
    if part.function_call is not None:
        call = part.function_call
        return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.args}
    if part.function_response is not None:
        response = part.function_response
        return {"type": "tool_call_response", "id": response.id, "response": response.response}
    if part.inline_data is not None:
        data = part.inline_data.data or b""
        return {"type": "blob", "mime_type": part.inline_data.mime_type, "size": len(data)}
    if part.file_data is not None:
        return {
            "type": "uri",
            "mime_type": part.file_data.mime_type,
            "uri": part.file_data.file_uri,
        }
    if part.executable_code is not None:
        return {"type": "executable_code", "content": part.executable_code.code}
    if part.code_execution_result is not None:
        return {"type": "code_execution_result", "content": part.code_execution_result.output}
    if part.text is not None:
        return {"type": "reasoning" if part.thought else "text", "content": part.text}
    return {"type": "empty"}


def _role(content: types.Content) -> str:
    parts = content.parts or []
    if parts and all(part.function_response is not None for part in parts):
        return "tool"
    return "assistant" if content.role == "model" else (content.role or "user")


def messages(contents: Sequence[types.Content]) -> list[dict[str, Any]]:
    """Contents as the conventions' messages (``gen_ai.input.messages``)."""
    return [_message(content) for content in contents]


def _message(content: types.Content) -> dict[str, Any]:
    return {"role": _role(content), "parts": [part_of(part) for part in content.parts or []]}


OMITTED_ROLE = "cairn.omitted"
"""The role of the marker that stands for the earliest messages left out of a capped list."""


_SEEN: OrderedDict[int, tuple[types.Content, str]] = OrderedDict()
_SEEN_MAX = 4_096
_SEEN_LOCK = threading.Lock()


def _message_json(content: types.Content) -> str:
    """A message's JSON, remembered for the same ``Content`` object: a conversation's model
    calls send the same history objects again and again (the object is held, so its id is
    not reused while remembered)."""
    with _SEEN_LOCK:
        seen = _SEEN.get(id(content))
        if seen is not None and seen[0] is content:
            _SEEN.move_to_end(id(content))
            return seen[1]
    text = _json(_message(content))
    with _SEEN_LOCK:
        _SEEN[id(content)] = (content, text)
        if len(_SEEN) > _SEEN_MAX:
            _SEEN.popitem(last=False)
    return text


def messages_json(contents: Sequence[types.Content]) -> str:
    """``gen_ai.input.messages``: the newest messages that fit ``MAX_ATTRIBUTE_CHARS``, and a
    first marker message saying how many earlier ones were left out. Only what is kept is
    serialized, so a long conversation costs no more than a short one."""
    kept: list[str] = []
    size = 2
    for content in reversed(contents):
        text = _message_json(content)
        if kept and size + len(text) + 1 > MAX_ATTRIBUTE_CHARS:
            break
        kept.append(text)
        size += len(text) + 1
    left_out = len(contents) - len(kept)
    if left_out:
        marker = {
            "role": OMITTED_ROLE,
            "parts": [
                {
                    "type": "text",
                    "content": f"…[{left_out} earlier messages not recorded: the attribute is "
                    f"capped at {MAX_ATTRIBUTE_CHARS} characters]",
                }
            ],
        }
        kept.append(json.dumps(marker))
    return truncated("[" + ",".join(reversed(kept)) + "]", MAX_ATTRIBUTE_CHARS + 1_000)


def system_instructions(config: types.GenerateContentConfig) -> list[dict[str, Any]]:
    """The system instruction as a list of parts (``gen_ai.system_instructions``)."""
    instruction = config.system_instruction
    if instruction is None:
        return []
    if isinstance(instruction, str):
        return [{"type": "text", "content": instruction}]
    if isinstance(instruction, types.Content):
        return [part_of(part) for part in instruction.parts or []]
    if isinstance(instruction, types.Part):
        return [part_of(instruction)]
    return [{"type": "text", "content": str(instruction)}]


def tool_definitions(config: types.GenerateContentConfig) -> list[dict[str, Any]]:
    """The function declarations the model was offered (``gen_ai.tool.definitions``)."""
    found: list[dict[str, Any]] = []
    for tool in config.tools or []:
        if not isinstance(tool, types.Tool):
            continue
        for declaration in tool.function_declarations or []:
            parameters: Any = declaration.parameters_json_schema
            if parameters is None and declaration.parameters is not None:
                parameters = declaration.parameters.model_dump(mode="json", exclude_none=True)
            found.append(
                {
                    "type": "function",
                    "name": declaration.name,
                    "description": declaration.description,
                    "parameters": parameters,
                }
            )
        built_in = tool.model_dump(
            mode="json", exclude_none=True, exclude={"function_declarations"}
        )
        found.extend({"type": name} for name in built_in)
    return found


def generation_config(config: types.GenerateContentConfig) -> dict[str, Any]:
    """The settings of ``CONFIG_FIELDS`` that are set, as JSON values."""
    dumped = config.model_dump(mode="json", exclude_none=True, include=set(CONFIG_FIELDS))
    return {key: dumped[key] for key in CONFIG_FIELDS if key in dumped}


def output_messages(content: types.Content | None, finish_reason: str | None) -> list[Any]:
    """A reply as the conventions' output messages (``gen_ai.output.messages``)."""
    parts = [part_of(part) for part in (content.parts or [])] if content is not None else []
    message: dict[str, Any] = {"role": "assistant", "parts": parts}
    if finish_reason is not None:
        message["finish_reason"] = finish_reason
    return [message]
