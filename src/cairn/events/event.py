"""The Event: one committed fact in a session's append-only log."""

from __future__ import annotations

import os
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from google.genai import types
from pydantic import BaseModel, Field, field_serializer, field_validator, model_validator
from pydantic.alias_generators import to_camel

from cairn.events.event_actions import EventActions
from cairn.events.llm_response_fields import LlmResponseFields
from cairn.events.node_info import NodeInfo

_CONVENIENCE_KEYS = ("message", "state", "route", "node_path", "nodePath")


def _as_content(message: Any) -> types.Content:
    """Turn a str, Part, list of Parts or Content into a Content (role ``user`` unless given)."""
    if isinstance(message, types.Content):
        return message
    if isinstance(message, dict):
        return types.Content.model_validate(message)
    if isinstance(message, str):
        return types.Content(role="user", parts=[types.Part(text=message)])
    if isinstance(message, types.Part):
        return types.Content(role="user", parts=[message])
    if isinstance(message, list) and all(isinstance(p, types.Part) for p in message):
        return types.Content(role="user", parts=list(message))
    raise TypeError(
        f"Event(message=...) takes a str, a google.genai.types.Part, a list of Parts or a "
        f"Content; got {type(message).__name__}."
    )


def _merge_into(container: Any, model_type: type[BaseModel], updates: dict[str, Any]) -> Any:
    """Apply `updates` (snake_case keys) to an actions/node_info given as None, a dict or a model.

    The result is validated like any other input, so a convenience keyword can
    never smuggle in a value the field itself would refuse.
    """
    if container is None:
        merged: dict[str, Any] = {}
    elif isinstance(container, dict):
        merged = dict(container)
    elif isinstance(container, model_type):
        merged = {name: getattr(container, name) for name in type(container).model_fields}
    else:
        raise TypeError(f"expected {model_type.__name__} or dict, got {type(container).__name__}")
    for key, value in updates.items():
        merged.pop(to_camel(key), None)  # the update replaces either spelling of the key
        merged[key] = value
    return model_type.model_validate(merged)


_VERSION_4 = (0x4 << 76) | (0x2 << 62)
_VERSION_4_MASK = ~((0xF << 76) | (0x3 << 62)) & ((1 << 128) - 1)


def uuid4_text() -> str:
    """``str(uuid.uuid4())`` (random, version 4, RFC 4122 variant), made without a
    ``UUID`` object: every event and invocation gets one."""
    value = int.from_bytes(os.urandom(16)) & _VERSION_4_MASK | _VERSION_4
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


class Event(LlmResponseFields):
    """One entry of a session's history: content plus the actions it carries.

    ``id`` and ``timestamp`` are assigned at construction. Convenience keywords:
    ``Event(message="hi")`` sets ``content``; ``Event(state={...})`` sets
    ``actions.state_delta``; ``Event(route=...)`` sets ``actions.route``;
    ``Event(node_path=...)`` sets ``node_info.path``.
    """

    id: str = ""
    timestamp: float = Field(default_factory=time.time, allow_inf_nan=False)
    """Seconds since the epoch (float). JSON input may also be an RFC 3339 string."""
    invocation_id: str = ""
    author: str = ""
    branch: str | None = None
    actions: EventActions = Field(default_factory=EventActions)
    output: Any = None
    node_info: NodeInfo = Field(default_factory=NodeInfo)
    long_running_tool_ids: set[str] | None = None
    isolation_scope: str | None = None
    """ADK's label for the scope an event belongs to (e.g. ``"task:<call id>"``): kept and
    stored as given; cairn does not read it."""

    if TYPE_CHECKING:  # the convenience keywords, for type checkers

        def __init__(
            self,
            *,
            message: Any = None,
            state: dict[str, Any] | None = None,
            route: Any = None,
            node_path: str | None = None,
            **data: Any,
        ) -> None: ...

    def model_post_init(self, context: Any, /) -> None:
        if not self.id:
            self.id = Event.new_id()

    @staticmethod
    def new_id() -> str:
        """A fresh, globally unique event id."""
        return uuid4_text()

    @model_validator(mode="before")
    @classmethod
    def _accept_convenience_kwargs(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not any(k in data for k in _CONVENIENCE_KEYS):
            return data
        data = dict(data)
        if "message" in data:
            if data.get("content") is not None:
                raise ValueError("Event got both message= and content=; pass only one of them.")
            data["content"] = _as_content(data.pop("message"))
        action_updates: dict[str, Any] = {}
        if "state" in data:
            action_updates["state_delta"] = dict(data.pop("state") or {})
        if "route" in data:
            action_updates["route"] = data.pop("route")
        if action_updates:
            data["actions"] = _merge_into(data.get("actions"), EventActions, action_updates)
        for key in ("node_path", "nodePath"):
            if key in data:
                path = data.pop(key)
                data["node_info"] = _merge_into(
                    data.pop("nodeInfo", data.get("node_info")), NodeInfo, {"path": path}
                )
        return data

    @field_validator("timestamp", mode="before")
    @classmethod
    def _parse_timestamp(cls, value: Any) -> Any:
        if isinstance(value, datetime):
            return value.timestamp()
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
            try:
                parsed = datetime.fromisoformat(value)
            except ValueError as exc:
                raise ValueError(
                    f"timestamp {value!r} is neither epoch seconds nor an RFC 3339 date-time "
                    "such as '2026-11-30T06:51:42.123456Z'"
                ) from exc
            if parsed.tzinfo is None:
                raise ValueError(
                    f"timestamp {value!r} has no UTC offset; add 'Z' or '+00:00' so it is "
                    "not read in the machine's local time zone"
                )
            return parsed.timestamp()
        return value

    @field_serializer("long_running_tool_ids")
    def _serialize_long_running_tool_ids(self, ids: set[str] | None) -> list[str] | None:
        return None if ids is None else sorted(ids)

    # -- message alias ---------------------------------------------------------------
    @property
    def message(self) -> types.Content | None:
        """Alias of ``content``."""
        return self.content

    @message.setter
    def message(self, value: Any) -> None:
        self.content = None if value is None else _as_content(value)

    @property
    def node_name(self) -> str:
        """The name of the workflow node that wrote this event ('' outside a workflow)."""
        return self.node_info.name if self.node_info.path else ""

    # -- reading the content -----------------------------------------------------------
    def get_function_calls(self) -> list[types.FunctionCall]:
        """The function calls in this event's content, in order."""
        if not self.content or not self.content.parts:
            return []
        return [p.function_call for p in self.content.parts if p.function_call]

    def get_function_responses(self) -> list[types.FunctionResponse]:
        """The function responses in this event's content, in order."""
        if not self.content or not self.content.parts:
            return []
        return [p.function_response for p in self.content.parts if p.function_response]

    def has_trailing_code_execution_result(self) -> bool:
        """True if the last part of the content is a code-execution result."""
        if not self.content or not self.content.parts:
            return False
        return self.content.parts[-1].code_execution_result is not None

    def is_final_response(self) -> bool:
        """Whether this event is an agent's final response for the turn (ADK's rules).

        Compaction records are never final. Then, in order: true with
        ``skip_summarization`` or pending long-running tool ids; true for a
        non-partial error without function calls; otherwise true iff there are
        no function calls or responses, it is not partial and it does not end
        in a code-execution result.
        """
        if self.actions.compaction is not None:
            return False
        if self.actions.skip_summarization or self.long_running_tool_ids:
            return True
        if self.error_code and not self.partial and not self.get_function_calls():
            return True
        if self.content is None and self.output is None and self.node_info.path:
            return False  # a workflow node's record without output (state only): no answer
        return (
            not self.get_function_calls()
            and not self.get_function_responses()
            and not self.partial
            and not self.has_trailing_code_execution_result()
        )

    # -- JSON ------------------------------------------------------------------------
    def to_json(self) -> str:
        """Lossless camelCase JSON: ``None`` fields omitted, empty maps kept."""
        return self.model_dump_json(exclude_none=True, by_alias=True)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``to_json`` as Python data."""
        return self.model_dump(mode="json", exclude_none=True, by_alias=True)

    @classmethod
    def from_json(cls, data: str | bytes) -> Event:
        """Parse JSON written by ``to_json`` (camelCase or snake_case keys)."""
        return cls.model_validate_json(data)
