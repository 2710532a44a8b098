"""A remote agent's A2A messages, tasks and task updates as cairn events (ADK's converters).

``RemoteA2aAgent`` uses them (through ``A2aRemoteAgentConfig``) to record what a remote
agent said: a ``Message`` or a ``Task`` (its artifacts; its status message when it waits
for input or ended without artifacts), a streamed status update, a streamed artifact chunk.
A task that waits for input (``input-required``) or a credential (``auth-required``)
without saying which function call it waits on gets ADK's stand-in call
(``mock_function_call_for_required_user_input`` / ``..._auth``), whose id is the
interrupt a local user answers.

What the remote may set on the event is limited, as in ADK: its metadata may carry
ADK's usage, grounding, citation and custom metadata and the inert actions ``escalate``
and ``skip_summarization``; nothing that changes the caller's state, artifacts or control
flow (a remote's state delta is ignored, with a warning).
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from typing import Any

from a2a.types import (
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from google.genai import types
from pydantic import ValidationError

from cairn.a2a.converters.part_converter import (
    A2A_DATA_PART_END_TAG,
    A2A_DATA_PART_METADATA_IS_LONG_RUNNING_KEY,
    A2A_DATA_PART_START_TAG,
    A2A_DATA_PART_TEXT_MIME_TYPE,
    A2APartToGenAIPartConverter,
    convert_a2a_part_to_genai_part,
)
from cairn.a2a.converters.utils import adk_metadata_key, struct_to_dict
from cairn.agents.invocation_context import InvocationContext
from cairn.events.event import Event
from cairn.events.event_actions import EventActions

logger = logging.getLogger(__name__)

MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_INPUT = "mock_function_call_for_required_user_input"
"""The call standing for a remote task's ``input-required`` that names no call of its own
(its argument ``input_required`` is the remote's prompt)."""
MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_AUTH = "mock_function_call_for_required_user_auth"
"""The same for ``auth-required`` (argument ``auth_required``)."""

A2AMessageToEventConverter = Callable[
    [Message, str | None, InvocationContext | None, A2APartToGenAIPartConverter],
    Event | None,
]
"""``(message, author, invocation_context, part_converter) -> Event | None``."""
A2ATaskToEventConverter = Callable[
    [Task, str | None, InvocationContext | None, A2APartToGenAIPartConverter],
    Event | None,
]
"""``(task, author, invocation_context, part_converter) -> Event | None``."""
A2AStatusUpdateToEventConverter = Callable[
    [TaskStatusUpdateEvent, str | None, InvocationContext | None, A2APartToGenAIPartConverter],
    Event | None,
]
"""``(status_update, author, invocation_context, part_converter) -> Event | None``."""
A2AArtifactUpdateToEventConverter = Callable[
    [TaskArtifactUpdateEvent, str | None, InvocationContext | None, A2APartToGenAIPartConverter],
    Event | None,
]
"""``(artifact_update, author, invocation_context, part_converter) -> Event | None``."""

WAITING_STATES = frozenset(
    {TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED}
)
"""A remote task that waits for the caller: a pause, not an end."""
ENDED_STATES = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)
"""A remote task that will not change again."""
_ANSWERING_STATES = WAITING_STATES | ENDED_STATES

_LONG_RUNNING = adk_metadata_key(A2A_DATA_PART_METADATA_IS_LONG_RUNNING_KEY)
_PEER_ACTIONS = {"escalate", "skip_summarization", "skipSummarization"}
"""The actions a remote agent may set on the event that records it (ADK's list)."""


def _metadata(holder: Any) -> dict[str, Any]:
    """The metadata of an A2A object (a protobuf Struct) as a plain dict."""
    if holder is None or not holder.HasField("metadata"):
        return {}
    return struct_to_dict(holder.metadata)


def _convert_parts(
    a2a_parts: Any, part_converter: A2APartToGenAIPartConverter
) -> tuple[list[types.Part], set[str]]:
    """The genai parts of ``a2a_parts`` and the ids of the long-running calls among them."""
    converted: list[types.Part] = []
    long_running: set[str] = set()
    for a2a_part in a2a_parts:
        try:
            made = part_converter(a2a_part)
        except (ValueError, TypeError, ValidationError) as error:
            logger.warning("an A2A part could not be converted and is skipped: %s", error)
            continue
        parts = made if isinstance(made, list) else [made] if made is not None else []
        if _metadata(a2a_part).get(_LONG_RUNNING) is True:
            long_running |= {
                p.function_call.id for p in parts if p.function_call and p.function_call.id
            }
        converted.extend(parts)
    return converted, long_running


def _parsed(value: Any) -> Any:
    """ADK writes some metadata values as JSON text."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _fields_from(metadata: dict[str, Any]) -> dict[str, Any]:
    """The event fields a remote's metadata may carry (ADK's ``adk_`` keys)."""
    fields: dict[str, Any] = {}
    models: dict[str, type[Any] | None] = {
        "grounding_metadata": types.GroundingMetadata,
        "usage_metadata": types.GenerateContentResponseUsageMetadata,
        "citation_metadata": types.CitationMetadata,
        "custom_metadata": dict,
        "error_code": None,
    }
    for name, model in models.items():
        raw = metadata.get(adk_metadata_key(name))
        if raw is None:
            continue
        value = _parsed(raw)
        if model is None:
            fields[name] = str(value)
        elif model is dict:
            if isinstance(value, dict):
                fields[name] = value
        elif isinstance(value, dict):
            try:
                fields[name] = model.model_validate(value)
            except ValidationError:
                logger.warning("the remote agent's %s metadata is not valid; ignored", name)
    return fields


def _actions_from(metadata: dict[str, Any]) -> EventActions:
    """The inert actions a remote agent set (``escalate``, ``skip_summarization``)."""
    raw = _parsed(metadata.get(adk_metadata_key("actions")))
    if not isinstance(raw, dict):
        return EventActions()
    if raw.get("state_delta") or raw.get("stateDelta"):
        logger.warning(
            "a remote A2A agent sent a state delta; it is ignored: session state is local to "
            "each side (return values as content instead)"
        )
    kept = {key: value for key, value in raw.items() if key in _PEER_ACTIONS}
    try:
        return EventActions.model_validate(kept)
    except ValidationError:
        return EventActions()


def _prompt(part: types.Part) -> Any:
    """What a remote's waiting message asks, from one of its parts (text or a data part)."""
    if part.text:
        return part.text
    blob = part.inline_data
    if (
        blob is None
        or blob.data is None
        or blob.mime_type != A2A_DATA_PART_TEXT_MIME_TYPE
        or not blob.data.startswith(A2A_DATA_PART_START_TAG)
        or not blob.data.endswith(A2A_DATA_PART_END_TAG)
    ):
        return None
    try:
        return json.loads(blob.data[len(A2A_DATA_PART_START_TAG) : -len(A2A_DATA_PART_END_TAG)])
    except ValueError:
        return None


def _stand_in_call(
    state: int, parts: list[types.Part], long_running: set[str]
) -> tuple[list[types.Part], set[str]]:
    """For a waiting task that names no long-running call: its last prompt part becomes
    ADK's stand-in call (the interrupt the local user answers)."""
    if long_running or state not in WAITING_STATES:
        return parts, long_running
    auth = state == TaskState.TASK_STATE_AUTH_REQUIRED
    name = (
        MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_AUTH
        if auth
        else MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_INPUT
    )
    key = "auth_required" if auth else "input_required"
    for index in range(len(parts) - 1, -1, -1):
        prompt = _prompt(parts[index])
        if prompt:
            call_id = str(uuid.uuid4())
            parts = [
                *parts[:index],
                types.Part(
                    function_call=types.FunctionCall(id=call_id, name=name, args={key: prompt})
                ),
                *parts[index + 1 :],
            ]
            return parts, {call_id}
    return parts, long_running


def _event(
    parts: list[types.Part],
    context: InvocationContext | None,
    author: str | None,
    *,
    actions: EventActions | None = None,
    long_running: set[str] | None = None,
    role: str = "model",
    partial: bool = False,
    allow_empty: bool = False,
    **fields: Any,
) -> Event | None:
    actions = actions or EventActions()
    if not parts and not allow_empty and actions == EventActions():
        return None
    return Event(
        invocation_id=context.invocation_id if context is not None else str(uuid.uuid4()),
        author=author or "a2a agent",
        branch=context.branch if context is not None else None,
        content=types.Content(role=role, parts=parts) if parts else None,
        actions=actions,
        long_running_tool_ids=long_running or None,
        partial=partial or None,
        **fields,
    )


def _role(role: int) -> str:
    return "user" if role == Role.ROLE_USER else "model"


def convert_a2a_message_to_event(
    a2a_message: Message,
    author: str | None = None,
    invocation_context: InvocationContext | None = None,
    part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part,
) -> Event | None:
    """A remote's ``Message`` as an event (None when nothing in it converts)."""
    if a2a_message is None:
        raise ValueError("convert_a2a_message_to_event needs an A2A Message, got None")
    parts, long_running = _convert_parts(a2a_message.parts, part_converter)
    metadata = _metadata(a2a_message)
    return _event(
        parts,
        invocation_context,
        author,
        actions=_actions_from(metadata),
        long_running=long_running,
        role=_role(a2a_message.role),
        **_fields_from(metadata),
    )


def convert_a2a_task_to_event(
    a2a_task: Task,
    author: str | None = None,
    invocation_context: InvocationContext | None = None,
    part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part,
) -> Event | None:
    """A remote task as one event: its artifacts' parts, and its status message when it
    waits for the caller or ended without artifacts; a waiting task that names no call of
    its own gets ADK's stand-in call. An ended task with output skips summarization."""
    if a2a_task is None:
        raise ValueError("convert_a2a_task_to_event needs an A2A Task, got None")
    state = a2a_task.status.state
    artifact_parts = [part for artifact in a2a_task.artifacts for part in artifact.parts]
    parts, long_running = _convert_parts(artifact_parts, part_converter)
    actions = EventActions()
    fields: dict[str, Any] = {}
    for artifact in a2a_task.artifacts:
        metadata = _metadata(artifact)
        actions = _merged(actions, _actions_from(metadata))
        fields = fields or _fields_from(metadata)
    status = a2a_task.status.message if a2a_task.status.HasField("message") else None
    said = False
    if status is not None and (
        state in WAITING_STATES or (not artifact_parts and state in _ANSWERING_STATES)
    ):
        more, more_long_running = _convert_parts(status.parts, part_converter)
        parts += more
        long_running |= more_long_running
        said = bool(status.parts)
        metadata = _metadata(status)
        actions = _merged(actions, _actions_from(metadata))
        fields = fields or _fields_from(metadata)
    parts, long_running = _stand_in_call(state, parts, long_running)
    if state in ENDED_STATES and parts:
        actions.skip_summarization = True
    return _event(
        parts,
        invocation_context,
        author,
        actions=actions,
        long_running=long_running,
        allow_empty=not (artifact_parts or said) and state in _ANSWERING_STATES,
        **fields,
    )


def convert_a2a_status_update_to_event(
    a2a_status_update: TaskStatusUpdateEvent,
    author: str | None = None,
    invocation_context: InvocationContext | None = None,
    part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part,
) -> Event | None:
    """A streamed status update as an event: its message (a waiting task's gets the
    stand-in call); None for a bare progress update."""
    if a2a_status_update is None:
        raise ValueError("convert_a2a_status_update_to_event needs a TaskStatusUpdateEvent")
    status = a2a_status_update.status
    message = status.message if status.HasField("message") else None
    parts: list[types.Part] = []
    long_running: set[str] = set()
    actions = EventActions()
    fields: dict[str, Any] = {}
    if message is not None:
        parts, long_running = _convert_parts(message.parts, part_converter)
        metadata = _metadata(message)
        actions, fields = _actions_from(metadata), _fields_from(metadata)
    parts, long_running = _stand_in_call(status.state, parts, long_running)
    return _event(
        parts,
        invocation_context,
        author,
        actions=actions,
        long_running=long_running,
        allow_empty=not parts and status.state in _ANSWERING_STATES,
        **fields,
    )


def convert_a2a_artifact_update_to_event(
    a2a_artifact_update: TaskArtifactUpdateEvent,
    author: str | None = None,
    invocation_context: InvocationContext | None = None,
    part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part,
) -> Event | None:
    """A streamed artifact chunk as an event, partial until its ``last_chunk``. Every chunk
    of one artifact gets one event id (derived from the invocation and the artifact id), as
    ADK's streamed chunks of one response share theirs."""
    if a2a_artifact_update is None:
        raise ValueError("convert_a2a_artifact_update_to_event needs a TaskArtifactUpdateEvent")
    artifact = a2a_artifact_update.artifact
    parts, long_running = _convert_parts(artifact.parts, part_converter)
    metadata = _metadata(artifact)
    event = _event(
        parts,
        invocation_context,
        author,
        actions=_actions_from(metadata),
        long_running=long_running,
        partial=not a2a_artifact_update.last_chunk,
        **_fields_from(metadata),
    )
    if event is not None and artifact.artifact_id and invocation_context is not None:
        key = f"{invocation_context.invocation_id}:{artifact.artifact_id}"
        event.id = str(uuid.uuid5(uuid.NAMESPACE_URL, key))
    return event


def _merged(first: EventActions, second: EventActions) -> EventActions:
    return EventActions.model_validate(
        {
            **first.model_dump(exclude_none=True, by_alias=True),
            **second.model_dump(exclude_none=True, by_alias=True),
        }
    )


__all__ = [
    "MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_AUTH",
    "MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_INPUT",
    "A2AArtifactUpdateToEventConverter",
    "A2AMessageToEventConverter",
    "A2AStatusUpdateToEventConverter",
    "A2ATaskToEventConverter",
    "convert_a2a_artifact_update_to_event",
    "convert_a2a_message_to_event",
    "convert_a2a_status_update_to_event",
    "convert_a2a_task_to_event",
]
