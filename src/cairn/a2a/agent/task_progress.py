"""A remote task as it is streamed: snapshots, status updates and artifact chunks folded into
one ``Task`` (what the SDK's 0.3 client kept as the stream went on)."""

from __future__ import annotations

from a2a.server.tasks.task_manager import append_artifact_to_task
from a2a.types import Message, StreamResponse, Task, TaskState

from cairn.a2a.converters.to_adk_event import ENDED_STATES, WAITING_STATES

SETTLED_STATES = ENDED_STATES | WAITING_STATES
"""A task that will not change until someone acts: ended, or waiting for the caller."""


class TaskProgress:
    """What a stream (or a task read) told so far: the task, or the remote's bare message."""

    def __init__(self) -> None:
        self.task: Task | None = None
        self.message: Message | None = None

    @property
    def task_id(self) -> str | None:
        return self.task.id if self.task is not None and self.task.id else None

    @property
    def settled(self) -> bool:
        return self.message is not None or (
            self.task is not None and self.task.status.state in SETTLED_STATES
        )

    @property
    def state(self) -> int:
        return self.task.status.state if self.task is not None else TaskState.TASK_STATE_UNSPECIFIED

    def add(self, item: StreamResponse) -> None:
        kind = item.WhichOneof("payload")
        if kind == "message":
            self.message = item.message
        elif kind == "task":
            self.adopt(item.task)
        elif kind == "status_update":
            status = item.status_update
            task = self._task(status.task_id, status.context_id)
            if status.status.HasField("message"):
                task.history.append(status.status.message)
            task.status.CopyFrom(status.status)
        elif kind == "artifact_update":
            chunk = item.artifact_update
            append_artifact_to_task(self._task(chunk.task_id, chunk.context_id), chunk)

    def adopt(self, task: Task) -> None:
        """A whole task (a snapshot): it replaces what was known, keeping artifacts that
        were streamed and that the snapshot does not hold."""
        kept = [] if self.task is None else list(self.task.artifacts)
        snapshot = Task()
        snapshot.CopyFrom(task)
        known = {artifact.artifact_id for artifact in snapshot.artifacts}
        snapshot.artifacts.extend(a for a in kept if a.artifact_id not in known)
        self.task = snapshot

    def _task(self, task_id: str, context_id: str) -> Task:
        if self.task is None:
            self.task = Task(id=task_id, context_id=context_id)
        return self.task
