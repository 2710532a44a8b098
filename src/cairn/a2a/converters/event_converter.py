"""cairn events as A2A messages and task status updates, as google-adk's server sends them.

An event's parts become an agent message (a user's event, a user message). A function call
that pauses the invocation (its id in ``long_running_tool_ids``) is marked
``adk_is_long_running``; a status update carrying one is ``input-required`` (or
``auth-required`` for a credential request), which is how ADK's ``RemoteA2aAgent`` learns
that the remote agent waits for an answer. Each message carries ADK's ``adk_*`` metadata:
the invocation, author and event ids, and the app, user and session when known.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from a2a import types as a2a_types
from pydantic import BaseModel

from cairn.a2a.converters.part_converter import (
    A2A_DATA_PART_METADATA_IS_LONG_RUNNING_KEY,
    A2A_DATA_PART_METADATA_TYPE_FUNCTION_CALL,
    A2A_DATA_PART_METADATA_TYPE_KEY,
    GenAIPartToA2APartConverter,
    convert_genai_part_to_a2a_part,
)

# ADK's module offers the client's conversions too (A2A -> cairn events): the same functions
from cairn.a2a.converters.to_adk_event import (
    convert_a2a_message_to_event as convert_a2a_message_to_event,
)
from cairn.a2a.converters.to_adk_event import convert_a2a_task_to_event as convert_a2a_task_to_event
from cairn.a2a.converters.utils import (
    adk_metadata_key,
    dict_to_struct,
    struct_to_dict,
    update_struct,
)
from cairn.events.event import Event
from cairn.events.interrupts import REQUEST_CREDENTIAL_FUNCTION

if TYPE_CHECKING:
    from cairn.agents.invocation_context import InvocationContext

logger = logging.getLogger(__name__)

ARTIFACT_ID_SEPARATOR = "-"
DEFAULT_ERROR_MESSAGE = "An error occurred during processing"

A2AEvent = a2a_types.TaskStatusUpdateEvent | a2a_types.TaskArtifactUpdateEvent
AdkEventToA2AEventsConverter = Callable[
    [Event, "InvocationContext | None", str | None, str | None, GenAIPartToA2APartConverter],
    list[A2AEvent],
]

_TYPE = adk_metadata_key(A2A_DATA_PART_METADATA_TYPE_KEY)
_LONG_RUNNING = adk_metadata_key(A2A_DATA_PART_METADATA_IS_LONG_RUNNING_KEY)


def artifact_id(app_name: str, user_id: str, session_id: str, filename: str, version: int) -> str:
    """The A2A artifact id of a saved artifact's version (ADK's form)."""
    return ARTIFACT_ID_SEPARATOR.join([app_name, user_id, session_id, filename, str(version)])


def _json(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


# ADK's metadata keys of an event, in the order ``event_metadata`` gives them.
_METADATA_KEYS = tuple(
    adk_metadata_key(name)
    for name in (
        "app_name",
        "user_id",
        "session_id",
        "invocation_id",
        "author",
        "event_id",
        "branch",
        "custom_metadata",
        "usage_metadata",
        "grounding_metadata",
        "error_code",
    )
)


def event_metadata(
    event: Event,
    *,
    app_name: str | None = None,
    user_id: str | None = None,
    session_id: str | None = None,
) -> dict[str, Any]:
    """ADK's ``adk_*`` metadata of an event (what is known of it; never its state delta)."""
    usage, grounding = event.usage_metadata, event.grounding_metadata
    values = (
        app_name,
        user_id,
        session_id,
        event.invocation_id,
        event.author,
        event.id,
        event.branch,
        event.custom_metadata or None,
        None if usage is None else _json(usage),
        None if grounding is None else _json(grounding),
        event.error_code,
    )
    return {k: v for k, v in zip(_METADATA_KEYS, values, strict=True) if v is not None and v != ""}


def message_from_event(
    event: Event,
    *,
    role: a2a_types.Role = a2a_types.Role.ROLE_AGENT,
    part_converter: GenAIPartToA2APartConverter = convert_genai_part_to_a2a_part,
    metadata: dict[str, Any] | None = None,
) -> a2a_types.Message | None:
    """The event's parts as an A2A message (id: the event's id), or None if it has none."""
    if event.content is None or not event.content.parts:
        return None
    waiting = event.long_running_tool_ids or set()
    parts: list[a2a_types.Part] = []
    for part in event.content.parts:
        converted = part_converter(part)
        for a2a_part in converted if isinstance(converted, list) else [converted]:
            if a2a_part is None:
                continue
            call = part.function_call
            if call is not None and call.id in waiting:
                marks = struct_to_dict(a2a_part.metadata) if a2a_part.HasField("metadata") else {}
                marks[_LONG_RUNNING] = True
                a2a_part.metadata.CopyFrom(dict_to_struct(marks))
            parts.append(a2a_part)
    if not parts:
        return None
    message = a2a_types.Message(message_id=event.id, role=role, parts=parts)
    if metadata:
        update_struct(message.metadata, metadata)  # filled in place: no Struct made to copy
    return message


def _is_long_running_call(part: a2a_types.Part) -> bool:
    if not part.HasField("metadata") or part.WhichOneof("content") != "data":
        return False
    marks = struct_to_dict(part.metadata)
    return marks.get(_TYPE) == A2A_DATA_PART_METADATA_TYPE_FUNCTION_CALL and (
        marks.get(_LONG_RUNNING) is True
    )


def paused_state(message: a2a_types.Message) -> a2a_types.TaskState | None:
    """``auth-required`` when the message asks for a credential, ``input-required`` when it
    holds another pausing call, else None."""
    calls = [p for p in message.parts if _is_long_running_call(p)]
    if not calls:
        return None
    names = {p.data.struct_value.fields["name"].string_value for p in calls}
    if REQUEST_CREDENTIAL_FUNCTION in names:
        return a2a_types.TaskState.TASK_STATE_AUTH_REQUIRED
    return a2a_types.TaskState.TASK_STATE_INPUT_REQUIRED


def _where(invocation_context: InvocationContext | None) -> dict[str, str | None]:
    if invocation_context is None:
        return {}
    return {
        "app_name": invocation_context.app_name,
        "user_id": invocation_context.user_id,
        "session_id": invocation_context.session.id,
    }


def convert_event_to_a2a_message(
    event: Event,
    invocation_context: InvocationContext | None = None,
    role: a2a_types.Role = a2a_types.Role.ROLE_AGENT,
    part_converter: GenAIPartToA2APartConverter = convert_genai_part_to_a2a_part,
) -> a2a_types.Message | None:
    """The event as an A2A message with ADK's metadata, or None if it has no parts."""
    metadata = event_metadata(event, **_where(invocation_context))
    return message_from_event(event, role=role, part_converter=part_converter, metadata=metadata)


def convert_event_to_a2a_events(
    event: Event,
    invocation_context: InvocationContext | None = None,
    task_id: str | None = None,
    context_id: str | None = None,
    part_converter: GenAIPartToA2APartConverter = convert_genai_part_to_a2a_part,
) -> list[A2AEvent]:
    """The status updates an event makes: ``failed`` for an error event, then ``working``
    (``input-required``/``auth-required`` for a pause) with the event's message."""
    found: list[A2AEvent] = []
    metadata = event_metadata(event, **_where(invocation_context))
    if event.error_code:
        error = a2a_types.Message(
            message_id=f"{event.id}-error",
            role=a2a_types.Role.ROLE_AGENT,
            parts=[a2a_types.Part(text=event.error_message or DEFAULT_ERROR_MESSAGE)],
            metadata=dict_to_struct(metadata),
        )
        found.append(
            a2a_types.TaskStatusUpdateEvent(
                task_id=task_id or "",
                context_id=context_id or "",
                status=a2a_types.TaskStatus(
                    state=a2a_types.TaskState.TASK_STATE_FAILED, message=error
                ),
            )
        )
    role = a2a_types.Role.ROLE_USER if event.author == "user" else a2a_types.Role.ROLE_AGENT
    message = message_from_event(event, role=role, part_converter=part_converter, metadata=metadata)
    if message is not None:
        state = paused_state(message) or a2a_types.TaskState.TASK_STATE_WORKING
        found.append(
            a2a_types.TaskStatusUpdateEvent(
                task_id=task_id or "",
                context_id=context_id or "",
                status=a2a_types.TaskStatus(state=state, message=message),
                metadata=dict_to_struct(metadata),
            )
        )
    return found
