"""cairn events as A2A artifact updates: google-adk's newer event conversion, where each
event's parts are an artifact of the task (partial events append to one artifact per
author until their whole event comes)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

from a2a import types as a2a_types

from cairn.a2a.converters.event_converter import DEFAULT_ERROR_MESSAGE, event_metadata
from cairn.a2a.converters.part_converter import (
    GenAIPartToA2APartConverter,
    convert_genai_part_to_a2a_part,
)
from cairn.a2a.converters.utils import dict_to_struct
from cairn.events.event import Event

logger = logging.getLogger(__name__)

A2AUpdateEvent = a2a_types.TaskStatusUpdateEvent | a2a_types.TaskArtifactUpdateEvent
AdkEventToA2AEventsConverter = Callable[
    [Event, dict[str, str] | None, str | None, str | None, GenAIPartToA2APartConverter],
    list[A2AUpdateEvent],
]


def create_error_status_event(
    event: Event, task_id: str | None = None, context_id: str | None = None
) -> a2a_types.TaskStatusUpdateEvent:
    """A ``failed`` status update saying the event's error message."""
    message = a2a_types.Message(
        message_id=str(uuid.uuid4()),
        role=a2a_types.Role.ROLE_AGENT,
        parts=[a2a_types.Part(text=event.error_message or DEFAULT_ERROR_MESSAGE)],
        metadata=dict_to_struct(event_metadata(event)),
    )
    return a2a_types.TaskStatusUpdateEvent(
        task_id=task_id or "",
        context_id=context_id or "",
        status=a2a_types.TaskStatus(state=a2a_types.TaskState.TASK_STATE_FAILED, message=message),
    )


def convert_event_to_a2a_events(
    event: Event,
    agents_artifacts: dict[str, str] | None,
    task_id: str | None = None,
    context_id: str | None = None,
    part_converter: GenAIPartToA2APartConverter = convert_genai_part_to_a2a_part,
) -> list[A2AUpdateEvent]:
    """The event's parts as an artifact update (``agents_artifacts`` tracks each author's
    open artifact across partial events); an event without parts but with actions is a
    ``working`` status update."""
    if agents_artifacts is None:
        raise ValueError("agents_artifacts must be a dict (empty at the start of a task)")
    parts: list[a2a_types.Part] = []
    for part in event.content.parts or [] if event.content is not None else []:
        converted = part_converter(part)
        parts.extend(p for p in (converted if isinstance(converted, list) else [converted]) if p)
    metadata = dict_to_struct(event_metadata(event))
    if parts:
        partial = bool(event.partial)
        open_id = agents_artifacts.get(event.author)
        if open_id is not None and not partial:
            del agents_artifacts[event.author]
        ident = open_id or str(uuid.uuid4())
        if open_id is None and partial:
            agents_artifacts[event.author] = ident
        artifact = a2a_types.Artifact(artifact_id=ident, parts=parts, metadata=metadata)
        return [
            a2a_types.TaskArtifactUpdateEvent(
                task_id=task_id or "",
                context_id=context_id or "",
                artifact=artifact,
                append=open_id is not None and partial,
                last_chunk=not partial,
            )
        ]
    if event.actions.model_dump(exclude_none=True, exclude_defaults=True):
        message = a2a_types.Message(
            message_id=str(uuid.uuid4()), role=a2a_types.Role.ROLE_AGENT, metadata=metadata
        )
        status = a2a_types.TaskStatus(state=a2a_types.TaskState.TASK_STATE_WORKING, message=message)
        return [
            a2a_types.TaskStatusUpdateEvent(
                task_id=task_id or "", context_id=context_id or "", status=status
            )
        ]
    return []
