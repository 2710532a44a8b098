"""What an A2A server keeps beside the runs: which session a task is in, which message started
or answered it, and where to push its changes.

An A2A task is a run (``cairn.runs``; its id is the invocation id) and its context is the
session. A client names only the task id when it reads, cancels or subscribes to a task, so
``cairn_a2a_tasks`` maps a task id to its user and session. A client that resends a message
after a crash must not start a second run, so ``cairn_a2a_messages`` records the message id
of every message a server acted on (a primary key: of two sends at once, one records it).
``cairn_a2a_push_configs`` keeps the push notification configs clients set on a task, and
``cairn_a2a_push_sent`` who notifies each stop of a task (a primary key per task and stop:
of the servers watching a task, one sends each notification).
``a2a_store_for(session_service)`` gives the store beside a session service.
"""

from __future__ import annotations

import abc
import dataclasses
import threading
from typing import Any

from cairn.errors import AlreadyExistsError


@dataclasses.dataclass(frozen=True)
class A2aTask:
    """Where an A2A task (a run) lives."""

    app_name: str
    task_id: str
    user_id: str
    session_id: str
    created_at: float


@dataclasses.dataclass(frozen=True)
class A2aPushConfig:
    """A push notification config of a task, as the client sent it (JSON: ``url``,
    ``token``, ``authentication``)."""

    app_name: str
    task_id: str
    config_id: str
    config: dict[str, Any]
    created_at: float


@dataclasses.dataclass(frozen=True)
class A2aPushClaim:
    """Who notifies a stop of a task (``stop`` names it: the run's status and the last
    event of the invocation), and whether it has (``done``: delivered, or given up)."""

    app_name: str
    task_id: str
    stop: str
    holder: str
    done: bool


class A2aStore(abc.ABC):
    """The A2A rows of one store. Every method is one short transaction."""

    @abc.abstractmethod
    async def record_task(self, task: A2aTask) -> None:
        """Store where a new task lives; ``AlreadyExistsError`` if the app has that task id."""

    @abc.abstractmethod
    async def get_task(self, app_name: str, task_id: str) -> A2aTask | None: ...

    @abc.abstractmethod
    async def claim_message(
        self, app_name: str, user_id: str, session_id: str, message_id: str, task_id: str
    ) -> str | None:
        """Record that message ``message_id`` of the session goes to ``task_id`` and return
        None; if the message was recorded before, change nothing and return the task it went
        to then."""

    @abc.abstractmethod
    async def message_task(
        self, app_name: str, user_id: str, session_id: str, message_id: str
    ) -> str | None:
        """The task message ``message_id`` of the session went to, or None."""

    @abc.abstractmethod
    async def set_push_config(self, config: A2aPushConfig) -> A2aPushConfig:
        """Store the config (replacing the task's config with the same id)."""

    @abc.abstractmethod
    async def list_push_configs(self, app_name: str, task_id: str) -> list[A2aPushConfig]:
        """The task's configs, oldest first."""

    @abc.abstractmethod
    async def delete_push_config(self, app_name: str, task_id: str, config_id: str) -> bool:
        """Delete it; False if there was none."""

    @abc.abstractmethod
    async def list_push_tasks(self, app_name: str | None = None) -> list[A2aTask]:
        """The tasks with at least one push config (of ``app_name``, or of every app),
        oldest first."""

    @abc.abstractmethod
    async def claim_push(
        self, app_name: str, task_id: str, stop: str, holder: str, *, replacing: str | None = None
    ) -> bool:
        """Make ``holder`` the one that notifies the task's ``stop``: True if it now is.
        Without ``replacing``, only if nobody claimed the stop before; with it, only if
        ``replacing`` holds the claim and has not done it (a holder that is gone)."""

    @abc.abstractmethod
    async def push_claim(self, app_name: str, task_id: str, stop: str) -> A2aPushClaim | None:
        """The claim on the task's ``stop``, or None."""

    @abc.abstractmethod
    async def finish_push(self, app_name: str, task_id: str, stop: str) -> None:
        """Record that the stop's notification was sent (or given up on)."""


class InMemoryA2aStore(A2aStore):
    """The A2A rows in this process (beside an ``InMemorySessionService``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tasks: dict[tuple[str, str], A2aTask] = {}
        self._messages: dict[tuple[str, str, str, str], str] = {}
        self._push: dict[tuple[str, str], dict[str, A2aPushConfig]] = {}
        self._claims: dict[tuple[str, str, str], A2aPushClaim] = {}

    async def record_task(self, task: A2aTask) -> None:
        with self._lock:
            key = (task.app_name, task.task_id)
            if key in self._tasks:
                raise AlreadyExistsError(
                    f"app {task.app_name!r} already has an A2A task {task.task_id!r}"
                )
            self._tasks[key] = task

    async def get_task(self, app_name: str, task_id: str) -> A2aTask | None:
        with self._lock:
            return self._tasks.get((app_name, task_id))

    async def claim_message(
        self, app_name: str, user_id: str, session_id: str, message_id: str, task_id: str
    ) -> str | None:
        with self._lock:
            key = (app_name, user_id, session_id, message_id)
            earlier = self._messages.get(key)
            if earlier is None:
                self._messages[key] = task_id
            return earlier

    async def message_task(
        self, app_name: str, user_id: str, session_id: str, message_id: str
    ) -> str | None:
        with self._lock:
            return self._messages.get((app_name, user_id, session_id, message_id))

    async def set_push_config(self, config: A2aPushConfig) -> A2aPushConfig:
        with self._lock:
            configs = self._push.setdefault((config.app_name, config.task_id), {})
            configs[config.config_id] = config
            return config

    async def list_push_configs(self, app_name: str, task_id: str) -> list[A2aPushConfig]:
        with self._lock:
            found = list(self._push.get((app_name, task_id), {}).values())
        return sorted(found, key=lambda c: (c.created_at, c.config_id))

    async def delete_push_config(self, app_name: str, task_id: str, config_id: str) -> bool:
        with self._lock:
            return self._push.get((app_name, task_id), {}).pop(config_id, None) is not None

    async def list_push_tasks(self, app_name: str | None = None) -> list[A2aTask]:
        with self._lock:
            found = [
                self._tasks[key]
                for key, configs in self._push.items()
                if configs and key in self._tasks and app_name in (None, key[0])
            ]
        return sorted(found, key=lambda t: (t.created_at, t.app_name, t.task_id))

    async def claim_push(
        self, app_name: str, task_id: str, stop: str, holder: str, *, replacing: str | None = None
    ) -> bool:
        with self._lock:
            key = (app_name, task_id, stop)
            held = self._claims.get(key)
            if replacing is None and held is not None:
                return False
            if replacing is not None and (held is None or held.holder != replacing or held.done):
                return False
            self._claims[key] = A2aPushClaim(app_name, task_id, stop, holder, done=False)
            return True

    async def push_claim(self, app_name: str, task_id: str, stop: str) -> A2aPushClaim | None:
        with self._lock:
            return self._claims.get((app_name, task_id, stop))

    async def finish_push(self, app_name: str, task_id: str, stop: str) -> None:
        with self._lock:
            held = self._claims.get((app_name, task_id, stop))
            if held is not None:
                self._claims[held.app_name, held.task_id, held.stop] = dataclasses.replace(
                    held, done=True
                )


def a2a_store_for(session_service: Any) -> A2aStore:
    """The A2A store beside ``session_service`` (its ``a2a``). ``TypeError`` for a store
    without one: an A2A server needs a place every process sharing the sessions can read."""
    store = getattr(session_service, "a2a", None)
    if isinstance(store, A2aStore):
        return store
    raise TypeError(
        f"{type(session_service).__name__} keeps no A2A tasks; serving A2A needs cairn's "
        "in-memory, SQLite or SQL database session store"
    )
