"""An A2A task read from cairn's log: the run's row says where it is, the invocation's events
say what was said and done.

``pending`` is ``submitted``, ``running`` is ``working``, ``paused`` is ``input-required``
(``auth-required`` when a credential is asked for) with the pending calls in the status
message, ``done`` is ``completed`` with the final answer as the status message and as the
artifact ``response``, ``failed`` is ``failed`` with the run's error, ``cancelled`` is
``canceled``. A run that ended ``done`` with an error event as its agents' last word (a model
call that failed: the agent records the error and the run ends cleanly) is ``failed`` too,
with that error as the status message, as google-adk's executor reports it. Artifacts the
agents saved during the run are artifacts of the task too.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Awaitable, Callable, Sequence

from a2a import types as a2a_types
from google.genai import types as genai_types

from cairn.a2a.converters.event_converter import (
    DEFAULT_ERROR_MESSAGE,
    artifact_id,
    event_metadata,
    message_from_event,
)
from cairn.a2a.converters.part_converter import convert_genai_part_to_a2a_part
from cairn.a2a.converters.utils import adk_metadata_key, dict_to_struct, python_to_value
from cairn.events.event import Event
from cairn.events.interrupts import Interrupt, is_record_event, pending_interrupts
from cairn.sessions.a2a_store import A2aTask
from cairn.sessions.run_store import RunStatus, StoredRun

TaskState = a2a_types.TaskState
ArtifactLoader = Callable[[str, int], Awaitable[genai_types.Part | None]]
"""Loads version ``version`` of the artifact ``filename`` of the task's session."""

RESPONSE_ARTIFACT = "response"

_STATES = {
    RunStatus.PENDING: TaskState.TASK_STATE_SUBMITTED,
    RunStatus.RUNNING: TaskState.TASK_STATE_WORKING,
    RunStatus.PAUSED: TaskState.TASK_STATE_INPUT_REQUIRED,
    RunStatus.DONE: TaskState.TASK_STATE_COMPLETED,
    RunStatus.FAILED: TaskState.TASK_STATE_FAILED,
    RunStatus.CANCELLED: TaskState.TASK_STATE_CANCELED,
}

TERMINAL_STATES = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)

# The values the answer's path compares and sets, read once: each ``TaskState.X`` or
# ``Role.X`` is a lookup in Python (protobuf's EnumTypeWrapper.__getattr__) on every use.
_COMPLETED = TaskState.TASK_STATE_COMPLETED
_FAILED = TaskState.TASK_STATE_FAILED
_WAITING = (TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED)
_USER = a2a_types.Role.ROLE_USER
_AGENT = a2a_types.Role.ROLE_AGENT


@dataclasses.dataclass(frozen=True)
class TaskRecord:
    """A task as stored: where it lives, its run's row (None until the run is stored) and
    the events of its invocation, in log order."""

    task: A2aTask
    run: StoredRun | None
    events: Sequence[Event]

    @property
    def where(self) -> dict[str, str]:
        return {
            "app_name": self.task.app_name,
            "user_id": self.task.user_id,
            "session_id": self.task.session_id,
        }

    def pending(self) -> list[Interrupt]:
        """The invocation's interrupts that wait for an answer."""
        return list(self._pending)

    # A record is read once per answer; what several parts of the answer need is worked out
    # once (a frozen dataclass still takes a cached_property: it writes the instance dict).
    @functools.cached_property
    def _pending(self) -> tuple[Interrupt, ...]:
        return tuple(
            interrupt
            for interrupt in pending_interrupts(list(self.events))
            if interrupt.invocation_id == self.task.task_id and interrupt.kind != "interrupted"
        )

    @functools.cached_property
    def state(self) -> a2a_types.TaskState:
        """The task's A2A state (``state_of``)."""
        if self.run is None:
            return TaskState.TASK_STATE_SUBMITTED
        if error_event(self) is not None:
            return TaskState.TASK_STATE_FAILED
        if self.run.status is RunStatus.PAUSED and any(
            i.kind == "credential" for i in self._pending
        ):
            return TaskState.TASK_STATE_AUTH_REQUIRED
        return _STATES[self.run.status]

    @functools.cached_property
    def final(self) -> a2a_types.Message | None:
        """The agents' last answer of the invocation (``final_message``)."""
        return _final_message(self)

    @functools.cached_property
    def _messages(self) -> dict[str, a2a_types.Message | None]:
        """Each event's message once converted, by event id: the history and the status
        (or the answer) convert the final event alike."""
        return {}


def _message(record: TaskRecord, event: Event) -> a2a_types.Message | None:
    """``event`` as a message of the task (the same object for the same event: whoever puts
    it in a Task copies it)."""
    converted = record._messages
    if event.id in converted:
        return converted[event.id]
    role = _USER if event.author == "user" else _AGENT
    message = message_from_event(event, role=role, metadata=event_metadata(event, **record.where))
    if message is not None:
        message.task_id = record.task.task_id
        message.context_id = record.task.session_id
    converted[event.id] = message
    return message


def history(record: TaskRecord) -> list[a2a_types.Message]:
    """What was said in the task: the user's messages and the agents' events with parts, as
    the run gave them (a remote agent's records of its calls are the log's only)."""
    found = [
        _message(record, event)
        for event in record.events
        if not event.partial and not is_record_event(event)
    ]
    return [message for message in found if message is not None]


def pause_message(record: TaskRecord) -> a2a_types.Message | None:
    """The pending calls as one agent message, each marked ``adk_is_long_running``."""
    pending = record.pending()
    if not pending:
        return None
    calls = [
        genai_types.Part(function_call=genai_types.FunctionCall(id=i.id, name=i.name, args=i.args))
        for i in pending
    ]
    last = pending[-1]
    event = Event(
        id=f"{last.event_id}-pending",
        invocation_id=record.task.task_id,
        author=last.author,
        content=genai_types.Content(role="model", parts=calls),
        long_running_tool_ids={i.id for i in pending},
    )
    return _message(record, event)


def final_message(record: TaskRecord) -> a2a_types.Message | None:
    """The agents' last answer of the invocation (its last final response with parts)."""
    return record.final


def _final_message(record: TaskRecord) -> a2a_types.Message | None:
    for event in reversed(record.events):
        if event.author == "user" or event.partial or not event.is_final_response():
            continue
        message = _message(record, event)
        if message is not None:
            return message
        if event.output is not None:
            output = event.output
            data = (
                a2a_types.Part(text=output)
                if isinstance(output, str)
                else a2a_types.Part(data=python_to_value(output))
            )
            return a2a_types.Message(
                message_id=f"{event.id}-output",
                role=a2a_types.Role.ROLE_AGENT,
                parts=[data],
                task_id=record.task.task_id,
                context_id=record.task.session_id,
                metadata=dict_to_struct(event_metadata(event, **record.where)),
            )
    return None


def error_event(record: TaskRecord) -> Event | None:
    """The error a ``done`` run ended with: its invocation's last agent event, when that
    event has an ``error_code`` (the agent recorded a failure, e.g. of its model call)."""
    if record.run is None or record.run.status is not RunStatus.DONE:
        return None
    for event in reversed(record.events):
        if event.author == "user" or event.partial:
            continue
        return event if event.error_code else None
    return None


def _error_message(record: TaskRecord, event: Event) -> a2a_types.Message:
    """The error as the failed task's status message: its text, and its code under ADK's
    ``adk_error_code`` metadata key."""
    message = a2a_types.Message(
        message_id=f"{event.id}-error",
        role=a2a_types.Role.ROLE_AGENT,
        parts=[a2a_types.Part(text=event.error_message or DEFAULT_ERROR_MESSAGE)],
        task_id=record.task.task_id,
        context_id=record.task.session_id,
    )
    message.metadata.CopyFrom(dict_to_struct({adk_metadata_key("error_code"): event.error_code}))
    return message


def stop_of(record: TaskRecord) -> str | None:
    """The name of the task's current stop (its run ended or paused), the same in every
    process: the run's status and the last event of the invocation. None while it runs."""
    run = record.run
    if run is None or run.status.active:
        return None
    last = record.events[-1].id if record.events else "-"
    return f"{run.status.value}:{last}"


def state_of(record: TaskRecord) -> a2a_types.TaskState:
    return record.state


def _micros(moment: float) -> int:
    """Seconds since the epoch as whole microseconds, rounded as ``datetime.fromtimestamp``
    rounds them (half to even)."""
    fraction, whole = math.modf(moment)
    return int(whole) * 1_000_000 + round(fraction * 1e6)


def fill_status(status: a2a_types.TaskStatus, record: TaskRecord) -> None:
    """Fill ``status`` (a Task's, empty) with the task's status and the message that goes
    with it: in place, not made and then copied into the Task."""
    state = status.state = state_of(record)
    run = record.run
    if run is not None:
        moment = run.ended_at or run.started_at or run.created_at
        status.timestamp.FromMicroseconds(_micros(moment))
    message: a2a_types.Message | None = None
    if state in _WAITING:
        message = pause_message(record)
    elif state == _COMPLETED:
        message = final_message(record)
    elif state == _FAILED and (failure := error_event(record)) is not None:
        message = _error_message(record, failure)
    elif state == _FAILED and run is not None:
        error = run.error or {}
        text = str(error.get("message") or DEFAULT_ERROR_MESSAGE)
        message = a2a_types.Message(
            message_id=f"{record.task.task_id}-error",
            role=a2a_types.Role.ROLE_AGENT,
            parts=[a2a_types.Part(text=text)],
            task_id=record.task.task_id,
            context_id=record.task.session_id,
        )
    if message is not None:
        status.message.CopyFrom(message)


async def add_artifacts(
    task: a2a_types.Task, record: TaskRecord, load: ArtifactLoader | None
) -> None:
    """Add to the task's artifacts every artifact version the invocation saved, in the order
    it saved them, then the final answer (artifact ``response``, once the task completed):
    each made in place, not made and then copied into the Task."""
    found = task.artifacts
    if load is not None:
        for event in record.events:
            for filename, version in event.actions.artifact_delta.items():
                part = await load(filename, version)
                converted = convert_genai_part_to_a2a_part(part) if part is not None else None
                if converted is None:
                    continue
                found.add(
                    artifact_id=artifact_id(**record.where, filename=filename, version=version),
                    name=filename,
                    parts=[converted],
                )
    if state_of(record) == _COMPLETED:
        answer = final_message(record)
        if answer is not None:
            response = found.add(
                artifact_id=f"{record.task.task_id}-{RESPONSE_ARTIFACT}", name=RESPONSE_ARTIFACT
            )
            response.parts.MergeFrom(answer.parts)
            response.metadata.CopyFrom(answer.metadata)


async def build_task(
    record: TaskRecord, load: ArtifactLoader | None, history_length: int | None = None
) -> a2a_types.Task:
    """The A2A task: status, history (the last ``history_length`` messages, if given) and
    artifacts."""
    messages = history(record)
    if history_length is not None:
        messages = messages[-history_length:] if history_length > 0 else []
    task = a2a_types.Task(id=record.task.task_id, context_id=record.task.session_id)
    fill_status(task.status, record)
    task.history.extend(messages)
    await add_artifacts(task, record, load)
    return task
