"""Runs and schedules, kept beside the sessions they run in.

A run is an invocation with a lifecycle (``cairn.runs``); its id is the invocation's id.
The events a run produced are in the session's log; what the log cannot say (that a run
waits in a queue, who executes it, that someone asked to cancel it, how it ended, where
to report its end) is one small row of a ``RunStore``: the table ``cairn_runs`` of a SQL
store, or the in-memory store of an ``InMemorySessionService``. A schedule (cron) is a
row of ``cairn_schedules``: what to run and when it is next due.

Every change of a row is conditional (a compare-and-set on its status, owner or due
time), so two processes never both start, finish or fire the same thing.
``run_store_for(session_service)`` gives the store beside a session service.
"""

from __future__ import annotations

import abc
import dataclasses
import enum
import threading
from collections.abc import Collection
from typing import Any

from cairn.sessions.uninterrupted import never_suspends


class RunStatus(enum.StrEnum):
    """Where a run is in its lifecycle: ``pending → running → (paused | done | failed |
    cancelled)``; a paused run that is answered is ``pending`` (then ``running``) again."""

    PENDING = "pending"
    RUNNING = "running"
    PAUSED = "paused"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def active(self) -> bool:
        """Waiting to run or running (the session is, or will be, busy with it)."""
        return self in (RunStatus.PENDING, RunStatus.RUNNING)

    @property
    def ended(self) -> bool:
        """Done, failed or cancelled: nothing more happens to the run. (A paused run can
        be answered, so it has not ended.)"""
        return self in (RunStatus.DONE, RunStatus.FAILED, RunStatus.CANCELLED)


class CancelRequest(enum.StrEnum):
    """Why a running run was asked to stop: a plain ``cancel``, or another run's
    ``interrupt`` or ``rollback`` strategy (which also rewinds the run away)."""

    CANCEL = "cancel"
    INTERRUPT = "interrupt"
    ROLLBACK = "rollback"


MAX_RUNS_PER_READ = 1_000
"""The most runs one read returns."""


@dataclasses.dataclass(frozen=True)
class StoredRun:
    """One run's row. Times are seconds since the epoch."""

    app_name: str
    user_id: str
    session_id: str
    run_id: str
    """The invocation's id."""
    seq: int
    """Arrival order, given by the store (increasing across the store)."""
    status: RunStatus
    strategy: str
    """The multitask strategy it was submitted with."""
    request: dict[str, Any]
    """What to run (JSON): ``newMessage``, ``stateDelta``, ``continuing`` (an invocation
    the session already has), ``streaming``, ``customMetadata``."""
    created_at: float
    started_at: float | None = None
    ended_at: float | None = None
    owner: str | None = None
    """Who executes it now, or last did (a lease holder name, or an executor's name)."""
    cancel: CancelRequest | None = None
    """Set when someone asked a running run to stop."""
    error: dict[str, Any] | None = None
    """How it failed: ``{"type": ..., "message": ...}`` (never internals of a 5xx)."""
    webhook: str | None = None
    """Called with the run when it ends or pauses."""
    webhook_done: bool = False
    """The webhook was delivered (or given up on) for the run's latest end."""
    attempts: int = 0
    """How many times an executor started it (a resumed or recovered run starts again)."""
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)
    """The submitter's own labels, returned as given."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.app_name, self.user_id, self.session_id)


@dataclasses.dataclass(frozen=True)
class StoredSchedule:
    """A cron schedule that starts runs: ``cron`` (five fields, in ``timezone``) says when;
    ``session_id`` the session each run goes to (None: a new session per run); ``request``
    what to run (as ``StoredRun.request``)."""

    app_name: str
    user_id: str
    schedule_id: str
    cron: str
    timezone: str
    session_id: str | None
    request: dict[str, Any]
    next_run_at: float
    """When it is next due (seconds since the epoch)."""
    created_at: float
    enabled: bool = True
    strategy: str = "enqueue"
    webhook: str | None = None
    last_run_id: str | None = None
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)


class RunStore(abc.ABC):
    """The runs and schedules of one store. Every method is one short transaction."""

    # -- runs -----------------------------------------------------------------------------
    @abc.abstractmethod
    async def create_run(self, run: StoredRun) -> StoredRun:
        """Store a new run (its ``seq`` is given by the store; the one passed is ignored)
        and return it. ``AlreadyExistsError`` if the session has a run with that id."""

    @abc.abstractmethod
    async def get_run(
        self, app_name: str, user_id: str, session_id: str, run_id: str
    ) -> StoredRun | None:
        """The run, or None."""

    @abc.abstractmethod
    async def list_runs(
        self,
        app_name: str,
        user_id: str,
        session_id: str | None = None,
        *,
        statuses: Collection[RunStatus] | None = None,
        limit: int = 100,
        before_seq: int | None = None,
    ) -> list[StoredRun]:
        """The user's runs (of one session, if given), newest first, at most ``limit``
        (≤ ``MAX_RUNS_PER_READ``), only those with ``seq < before_seq`` if given."""

    @abc.abstractmethod
    async def update_run(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        run_id: str,
        *,
        expect_status: Collection[RunStatus] | None = None,
        expect_owner: str | None = None,
        **changes: Any,
    ) -> StoredRun | None:
        """Change the run's fields (``status``, ``owner``, ``started_at``, ``ended_at``,
        ``cancel``, ``error``, ``request``, ``webhook_done``, ``attempts``) if its status is
        one of ``expect_status`` and its owner is ``expect_owner`` (when given); return the
        changed run, or None when it is missing or the expectation failed (nothing
        changed)."""

    @abc.abstractmethod
    async def unfinished_runs(
        self, *, app_name: str | None = None, limit: int = MAX_RUNS_PER_READ
    ) -> list[StoredRun]:
        """Runs pending or running (of one app, if given), oldest first: what an executor
        that starts looks through for runs whose executor is gone."""

    @abc.abstractmethod
    async def undelivered_webhooks(self, *, limit: int = MAX_RUNS_PER_READ) -> list[StoredRun]:
        """Runs that ended or paused with a webhook not yet delivered, oldest first."""

    # -- schedules -------------------------------------------------------------------------
    @abc.abstractmethod
    async def create_schedule(self, schedule: StoredSchedule) -> StoredSchedule:
        """Store a new schedule. ``AlreadyExistsError`` if the user has one with that id."""

    @abc.abstractmethod
    async def get_schedule(
        self, app_name: str, user_id: str, schedule_id: str
    ) -> StoredSchedule | None: ...

    @abc.abstractmethod
    async def list_schedules(
        self, app_name: str, user_id: str | None = None, *, limit: int = 100
    ) -> list[StoredSchedule]:
        """The app's schedules (of one user, if given), oldest first."""

    @abc.abstractmethod
    async def delete_schedule(self, app_name: str, user_id: str, schedule_id: str) -> bool:
        """Delete it; False if there was none."""

    @abc.abstractmethod
    async def due_schedules(self, now: float, *, limit: int = 100) -> list[StoredSchedule]:
        """Enabled schedules with ``next_run_at <= now``, soonest first."""

    @abc.abstractmethod
    async def advance_schedule(
        self,
        schedule: StoredSchedule,
        *,
        next_run_at: float,
        last_run_id: str | None,
    ) -> bool:
        """Move the schedule to its next time if it is still due at ``schedule.next_run_at``
        (a compare-and-set: of two processes that saw it due, one gets True and fires)."""


def _changed(run: StoredRun, changes: dict[str, Any]) -> StoredRun:
    unknown = changes.keys() - _UPDATABLE
    if unknown:
        raise TypeError(f"update_run cannot change {sorted(unknown)}; it changes {_UPDATABLE}")
    return _with(run, changes)


def _with(run: StoredRun, changes: dict[str, Any]) -> StoredRun:
    """A copy of ``run`` with ``changes`` (field names it has): ``dataclasses.replace``
    without its per-field ``__init__`` (the row has no ``__post_init__`` to run), which the
    in-memory store calls for every change of every run."""
    copy = object.__new__(StoredRun)
    copy.__dict__.update(run.__dict__)
    copy.__dict__.update(changes)
    return copy


_UPDATABLE = {
    "status",
    "owner",
    "started_at",
    "ended_at",
    "cancel",
    "error",
    "request",
    "webhook_done",
    "attempts",
}


class InMemoryRunStore(RunStore):
    """Runs and schedules in this process (beside an ``InMemorySessionService``)."""

    def __init__(self) -> None:
        self._runs: dict[tuple[str, str, str, str], StoredRun] = {}
        self._of_user: dict[tuple[str, str], set[tuple[str, str, str, str]]] = {}
        """The keys of each (app, user)'s runs: a user's runs are listed without reading
        every run of the process (a server's A2A contexts are one user each)."""
        self._open: set[tuple[str, str, str, str]] = set()
        """The keys of runs still active or with a webhook to deliver: what the executor's
        and the webhooks' sweeps read, without walking every run the process ever made."""
        self._schedules: dict[tuple[str, str, str], StoredSchedule] = {}
        self._seq = 0
        self._lock = threading.Lock()  # the Runner's sync ``run`` uses loops in threads

    async def create_run(self, run: StoredRun) -> StoredRun:
        from cairn.errors import AlreadyExistsError

        with self._lock:
            key = (*run.key, run.run_id)
            if key in self._runs:
                raise AlreadyExistsError(
                    f"session {run.session_id!r} already has a run {run.run_id!r}; "
                    "give a new id (or none)"
                )
            self._seq += 1
            stored = _with(run, {"seq": self._seq})
            self._runs[key] = stored
            self._of_user.setdefault(key[:2], set()).add(key)
            self._track(key, stored)
            return stored

    def _track(self, key: tuple[str, str, str, str], run: StoredRun) -> None:
        if run.status.active or (run.webhook and not run.webhook_done):
            self._open.add(key)
        else:
            self._open.discard(key)

    @never_suspends  # handed to ``uninterrupted`` as a run settles: runs in place
    async def get_run(
        self, app_name: str, user_id: str, session_id: str, run_id: str
    ) -> StoredRun | None:
        return self._runs.get((app_name, user_id, session_id, run_id))

    async def list_runs(
        self,
        app_name: str,
        user_id: str,
        session_id: str | None = None,
        *,
        statuses: Collection[RunStatus] | None = None,
        limit: int = 100,
        before_seq: int | None = None,
    ) -> list[StoredRun]:
        with self._lock:
            found = [
                run
                for run in map(self._runs.__getitem__, self._of_user.get((app_name, user_id), ()))
                if (session_id is None or run.session_id == session_id)
                and (statuses is None or run.status in statuses)
                and (before_seq is None or run.seq < before_seq)
            ]
        found.sort(key=lambda run: run.seq, reverse=True)
        return found[: min(limit, MAX_RUNS_PER_READ)]

    @never_suspends  # handed to ``uninterrupted`` as a run settles: runs in place
    async def update_run(
        self,
        app_name: str,
        user_id: str,
        session_id: str,
        run_id: str,
        *,
        expect_status: Collection[RunStatus] | None = None,
        expect_owner: str | None = None,
        **changes: Any,
    ) -> StoredRun | None:
        with self._lock:
            key = (app_name, user_id, session_id, run_id)
            run = self._runs.get(key)
            if run is None:
                return None
            if expect_status is not None and run.status not in expect_status:
                return None
            if expect_owner is not None and run.owner != expect_owner:
                return None
            self._runs[key] = changed = _changed(run, changes)
            self._track(key, changed)
            return changed

    async def unfinished_runs(
        self, *, app_name: str | None = None, limit: int = MAX_RUNS_PER_READ
    ) -> list[StoredRun]:
        with self._lock:
            found = [
                run
                for run in map(self._runs.__getitem__, self._open)
                if run.status.active and (app_name is None or run.app_name == app_name)
            ]
        found.sort(key=lambda run: run.seq)
        return found[:limit]

    async def undelivered_webhooks(self, *, limit: int = MAX_RUNS_PER_READ) -> list[StoredRun]:
        with self._lock:
            found = [
                run
                for run in map(self._runs.__getitem__, self._open)
                if run.webhook
                and not run.webhook_done
                and (run.status.ended or run.status is RunStatus.PAUSED)
            ]
        found.sort(key=lambda run: run.seq)
        return found[:limit]

    def delete_session(self, app_name: str, user_id: str, session_id: str) -> None:
        """Forget the session's runs (the session was deleted)."""
        with self._lock:
            keys = self._of_user.get((app_name, user_id), set())
            for key in [k for k in keys if k[2] == session_id]:
                del self._runs[key]
                keys.discard(key)
                self._open.discard(key)

    async def create_schedule(self, schedule: StoredSchedule) -> StoredSchedule:
        from cairn.errors import AlreadyExistsError

        with self._lock:
            key = (schedule.app_name, schedule.user_id, schedule.schedule_id)
            if key in self._schedules:
                raise AlreadyExistsError(
                    f"user {schedule.user_id!r} already has a schedule "
                    f"{schedule.schedule_id!r}; give a new id (or none)"
                )
            self._schedules[key] = schedule
            return schedule

    async def get_schedule(
        self, app_name: str, user_id: str, schedule_id: str
    ) -> StoredSchedule | None:
        return self._schedules.get((app_name, user_id, schedule_id))

    async def list_schedules(
        self, app_name: str, user_id: str | None = None, *, limit: int = 100
    ) -> list[StoredSchedule]:
        with self._lock:
            found = [
                s
                for s in self._schedules.values()
                if s.app_name == app_name and (user_id is None or s.user_id == user_id)
            ]
        found.sort(key=lambda s: (s.created_at, s.schedule_id))
        return found[:limit]

    async def delete_schedule(self, app_name: str, user_id: str, schedule_id: str) -> bool:
        with self._lock:
            return self._schedules.pop((app_name, user_id, schedule_id), None) is not None

    async def due_schedules(self, now: float, *, limit: int = 100) -> list[StoredSchedule]:
        with self._lock:
            found = [s for s in self._schedules.values() if s.enabled and s.next_run_at <= now]
        found.sort(key=lambda s: s.next_run_at)
        return found[:limit]

    async def advance_schedule(
        self,
        schedule: StoredSchedule,
        *,
        next_run_at: float,
        last_run_id: str | None,
    ) -> bool:
        with self._lock:
            key = (schedule.app_name, schedule.user_id, schedule.schedule_id)
            current = self._schedules.get(key)
            if current is None or current.next_run_at != schedule.next_run_at:
                return False
            self._schedules[key] = dataclasses.replace(
                current, next_run_at=next_run_at, last_run_id=last_run_id
            )
            return True


def run_store_for(session_service: Any) -> RunStore:
    """The run store beside ``session_service`` (its ``runs``: the tables of a SQL store, the
    in-memory store of an ``InMemorySessionService``). ``TypeError`` for a store without one:
    runs need a place beside the sessions that every process sharing them can read."""
    runs = getattr(session_service, "runs", None)
    if isinstance(runs, RunStore):
        return runs
    raise TypeError(
        f"{type(session_service).__name__} keeps no runs; runs need cairn's in-memory, "
        "SQLite or SQL database session store"
    )
