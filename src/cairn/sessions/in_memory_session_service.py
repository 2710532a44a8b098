"""A session store in process memory: fast, isolated snapshots, every single-process guarantee."""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from cairn.errors import (
    DuplicateEventError,
    LeaseLostError,
    SessionAlreadyExistsError,
    SessionNotFoundError,
    StaleSessionError,
)
from cairn.events.event import Event
from cairn.events.json_values import copy_json
from cairn.sessions.a2a_store import InMemoryA2aStore
from cairn.sessions.base_session_service import (
    DEFAULT_MAX_EVENT_BYTES,
    BaseSessionService,
    encode_event,
    new_session_identity,
)
from cairn.sessions.config import GetSessionConfig, ListSessionsResponse
from cairn.sessions.ids import check_ids, check_owner
from cairn.sessions.lease import SessionLease, bound_lease
from cairn.sessions.paging import (
    Direction,
    EventPage,
    SessionPage,
    check_limit,
    decode_cursor,
    encode_cursor,
    next_sessions_cursor,
)
from cairn.sessions.run_store import InMemoryRunStore
from cairn.sessions.scopes import (
    ScopedDelta,
    event_scopes,
    merge_scopes,
    split_by_scope,
    stored_form,
)
from cairn.sessions.session import Session, stored_session
from cairn.sessions.session_info import (
    FIRST_EVENTS,
    SessionInfo,
    SessionLineage,
    checked_name,
    first_user_text,
)
from cairn.sessions.span_store import InMemorySpanStore
from cairn.sessions.uninterrupted import never_suspends

_T = TypeVar("_T")


def _finish_now(coro: Coroutine[Any, Any, _T]) -> _T:
    """The result of a coroutine that never waits (this store's methods only take a thread lock).

    Lets the ``*_sync`` methods answer from inside a running event loop too, as ADK's do.
    """
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()
    raise RuntimeError("an in-memory session method waited; call its async form instead")


@dataclass
class _Lease:
    holder: str
    """Empty once released."""
    generation: int
    expires_at: float


@dataclass
class _StoredSession:
    app_name: str
    user_id: str
    id: str
    initial_state: dict[str, Any]
    state: dict[str, Any]
    """Session-scope keys only (no prefix)."""
    last_update_time: float
    revision: int = 0
    events: list[str] = field(default_factory=list)
    """Each event's stored JSON, in append order."""
    event_index: dict[str, int] = field(default_factory=dict)
    timestamps: list[float] = field(default_factory=list)
    running_max_timestamps: list[float] = field(default_factory=list)
    """running_max_timestamps[i] = max(timestamps[: i + 1]); sorted, so it can be bisected."""
    invocations: dict[str, list[int]] = field(default_factory=dict)
    """Each invocation's events, as indexes into ``events``, in append order."""
    name: str | None = None
    forked_from: SessionLineage | None = None

    def add(self, raw: str, event: Event) -> None:
        """Keep ``event`` (``raw`` is its stored JSON) as the newest event."""
        index = len(self.events)
        self.event_index[event.id] = index
        self.invocations.setdefault(event.invocation_id, []).append(index)
        self.events.append(raw)
        self.timestamps.append(event.timestamp)
        running = self.running_max_timestamps
        running.append(max(running[-1], event.timestamp) if running else event.timestamp)


class InMemorySessionService(BaseSessionService):
    """Sessions kept in this process's memory.

    Events are kept as their JSON, so everything read back is a fresh object
    (mutating it cannot reach the store or another reader) and has been through
    the same lossless round trip as in a durable store. Appends cost
    O(event + delta); windowed reads cost O(window). Safe to share between
    threads and event loops.
    """

    def __init__(self, *, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self.max_event_bytes = max_event_bytes
        self._lock = threading.Lock()
        self._leases: dict[tuple[str, str, str], _Lease] = {}
        self._sessions: dict[tuple[str, str], dict[str, _StoredSession]] = {}
        self._app_state: dict[str, dict[str, Any]] = {}
        self._user_state: dict[tuple[str, str], dict[str, Any]] = {}
        self.spans = InMemorySpanStore()
        """The finished spans of this store's sessions (``cairn.sessions.span_recorder``)."""
        self.runs = InMemoryRunStore()
        """The runs and schedules of this store's sessions (``cairn.sessions.run_store``)."""
        self.a2a = InMemoryA2aStore()
        """What an A2A server keeps beside the runs (``cairn.sessions.a2a_store``)."""

    # -- helpers -------------------------------------------------------------------
    def _find(self, app_name: str, user_id: str, session_id: str) -> _StoredSession | None:
        return self._sessions.get((app_name, user_id), {}).get(session_id)

    def _merged_state(self, stored: _StoredSession) -> dict[str, Any]:
        merged: dict[str, Any] = copy_json(
            merge_scopes(
                self._app_state.get(stored.app_name, {}),
                self._user_state.get((stored.app_name, stored.user_id), {}),
                stored.state,
            )
        )
        return merged

    def _snapshot(self, stored: _StoredSession, events: list[str]) -> Session:
        return stored_session(
            id=stored.id,
            app_name=stored.app_name,
            user_id=stored.user_id,
            state=self._merged_state(stored),
            events=[Event.model_validate_json(raw) for raw in events],
            last_update_time=stored.last_update_time,
            revision=stored.revision,
        )

    @staticmethod
    def _window(stored: _StoredSession, config: GetSessionConfig | None) -> list[str]:
        if config is None:
            return list(stored.events)
        if config.after_revision is not None:
            newer = _StoredSession(**{**stored.__dict__})
            start = config.after_revision
            newer.events = stored.events[start:]
            newer.timestamps = stored.timestamps[start:]
            newer.running_max_timestamps = stored.running_max_timestamps[start:]
            config = config.model_copy(update={"after_revision": None})
            return InMemorySessionService._window(newer, config)
        limit = config.num_recent_events
        if limit == 0:
            return []
        after = config.after_timestamp
        if after is None:
            return stored.events[-limit:] if limit is not None else list(stored.events)
        # Every event at or after `after` lies at or beyond the first index whose running
        # maximum reaches `after`; walk back from the end, no further than that index.
        first = bisect.bisect_left(stored.running_max_timestamps, after)
        picked: list[str] = []
        for index in range(len(stored.events) - 1, first - 1, -1):
            if stored.timestamps[index] >= after:
                picked.append(stored.events[index])
                if limit is not None and len(picked) == limit:
                    break
        picked.reverse()
        return picked

    # -- the contract -------------------------------------------------------------
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        session_id, initial = new_session_identity(app_name, user_id, session_id, state)
        scoped = split_by_scope(initial)
        with self._lock:
            if self._find(app_name, user_id, session_id) is not None:
                raise SessionAlreadyExistsError(
                    app_name=app_name, user_id=user_id, session_id=session_id
                )
            stored = _StoredSession(
                app_name=app_name,
                user_id=user_id,
                id=session_id,
                initial_state=initial,
                state=copy_json(scoped.session),
                last_update_time=time.time(),
            )
            if scoped.app:
                self._app_state.setdefault(app_name, {}).update(copy_json(scoped.app))
            if scoped.user:
                self._user_state.setdefault((app_name, user_id), {}).update(copy_json(scoped.user))
            self._sessions.setdefault((app_name, user_id), {})[session_id] = stored
            return self._snapshot(stored, [])

    def create_session_sync(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """`create_session` without awaiting (ADK's in-memory service offers it)."""
        return _finish_now(
            self.create_session(
                app_name=app_name, user_id=user_id, state=state, session_id=session_id
            )
        )

    def get_session_sync(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        """`get_session` without awaiting."""
        return _finish_now(
            self.get_session(
                app_name=app_name, user_id=user_id, session_id=session_id, config=config
            )
        )

    def list_sessions_sync(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        """`list_sessions` without awaiting."""
        return _finish_now(self.list_sessions(app_name=app_name, user_id=user_id))

    def delete_session_sync(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """`delete_session` without awaiting."""
        _finish_now(self.delete_session(app_name=app_name, user_id=user_id, session_id=session_id))

    async def _import_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        initial_state: dict[str, Any],
        state: dict[str, Any],
        events: list[Event],
        last_update_time: float | None = None,
        forked_from: SessionLineage | None = None,
    ) -> Session:
        raws = [encode_event(event, self.max_event_bytes) for event in events]
        scoped = split_by_scope(state)
        stored = _StoredSession(
            app_name=app_name,
            user_id=user_id,
            id=session_id,
            initial_state=copy_json(initial_state),
            state=copy_json(scoped.session),
            last_update_time=time.time() if last_update_time is None else last_update_time,
            revision=len(raws),
            forked_from=forked_from,
        )
        for raw, event in zip(raws, events, strict=True):
            stored.add(raw, event)
        with self._lock:
            if self._find(app_name, user_id, session_id) is not None:
                raise SessionAlreadyExistsError(
                    app_name=app_name, user_id=user_id, session_id=session_id
                )
            if scoped.app:
                self._app_state.setdefault(app_name, {}).update(copy_json(scoped.app))
            if scoped.user:
                self._user_state.setdefault((app_name, user_id), {}).update(copy_json(scoped.user))
            self._sessions.setdefault((app_name, user_id), {})[session_id] = stored
            return self._snapshot(stored, stored.events)

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        check_ids(app_name, user_id, session_id)
        with self._lock:
            stored = self._find(app_name, user_id, session_id)
            if stored is None:
                return None
            window = self._window(stored, config)
            state = self._merged_state(stored)
            meta = (stored.last_update_time, stored.revision)
        # Parsing happens outside the lock: the window's JSON strings are immutable.
        return stored_session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=state,
            events=[Event.model_validate_json(raw) for raw in window],
            last_update_time=meta[0],
            revision=meta[1],
        )

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        check_owner(app_name, user_id)
        with self._lock:
            found = self._sessions_of(app_name, user_id)
            found.sort(key=lambda s: (s.last_update_time, s.id))
            return ListSessionsResponse(sessions=[self._snapshot(s, []) for s in found])

    async def list_app_names(self) -> list[str]:
        with self._lock:
            return sorted({app for (app, _), by_id in self._sessions.items() if by_id})

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        check_ids(app_name, user_id, session_id)
        with self._lock:
            by_id = self._sessions.get((app_name, user_id))
            if by_id is not None:
                by_id.pop(session_id, None)
        self.spans.delete_session(app_name, user_id, session_id)
        self.runs.delete_session(app_name, user_id, session_id)

    async def set_session_name(
        self, *, app_name: str, user_id: str, session_id: str, name: str | None
    ) -> None:
        check_ids(app_name, user_id, session_id)
        name = checked_name(name)
        with self._lock:
            stored = self._find(app_name, user_id, session_id)
            if stored is None:
                raise SessionNotFoundError(
                    app_name=app_name, user_id=user_id, session_id=session_id
                )
            stored.name = name

    async def get_session_infos(
        self, *, app_name: str, sessions: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], SessionInfo]:
        found: dict[tuple[str, str], tuple[_StoredSession, list[str]]] = {}
        with self._lock:
            for user_id, session_id in sessions:
                stored = self._find(app_name, user_id, session_id)
                if stored is not None:
                    found[(user_id, session_id)] = (stored, stored.events[:FIRST_EVENTS])
        return {
            owner: SessionInfo(
                user_id=owner[0],
                session_id=owner[1],
                name=stored.name,
                first_message=first_user_text(Event.model_validate_json(raw) for raw in first),
                forked_from=stored.forked_from,
            )
            for owner, (stored, first) in found.items()
        }

    async def get_initial_state(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> dict[str, Any] | None:
        check_ids(app_name, user_id, session_id)
        with self._lock:
            stored = self._find(app_name, user_id, session_id)
            return None if stored is None else copy_json(stored.initial_state)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        check_ids(app_name, user_id)
        with self._lock:
            found: dict[str, Any] = copy_json(self._user_state.get((app_name, user_id), {}))
            return found

    async def _append_event_impl(self, session: Session, event: Event) -> tuple[int, float] | None:
        # Everything that can fail happens before anything is changed.
        raw = encode_event(stored_form(event), self.max_event_bytes)
        actions = event.actions
        # Most events change no state: nothing to split by scope, nor to apply below.
        scoped = event_scopes(event) if actions.state_delta or actions.removed_state_keys else None
        with self._lock:
            stored = self._find(session.app_name, session.user_id, session.id)
            if stored is None:
                raise SessionNotFoundError(
                    app_name=session.app_name, user_id=session.user_id, session_id=session.id
                )
            known = stored.event_index.get(event.id)
            if known is not None:
                if stored.events[known] == raw:
                    return None
                raise DuplicateEventError(
                    app_name=session.app_name,
                    user_id=session.user_id,
                    session_id=session.id,
                    event_id=event.id,
                )
            lease = bound_lease(session)
            if lease is not None:
                current = self._leases.get((stored.app_name, stored.user_id, stored.id))
                if current is None or (current.holder, current.generation) != (
                    lease.holder,
                    lease.generation,
                ):
                    raise LeaseLostError(
                        app_name=session.app_name,
                        user_id=session.user_id,
                        session_id=session.id,
                        holder=lease.holder,
                        current_holder=current.holder if current is not None else "",
                    )
            if session.revision != stored.revision:
                raise StaleSessionError(
                    app_name=session.app_name,
                    user_id=session.user_id,
                    session_id=session.id,
                    held_revision=session.revision,
                    stored_revision=stored.revision,
                )
            if scoped is not None:
                self._apply(stored, scoped)
            stored.add(raw, event)
            stored.revision += 1
            stored.last_update_time = max(stored.last_update_time, event.timestamp)
            return stored.revision, stored.last_update_time

    def _apply(self, stored: _StoredSession, scoped: ScopedDelta) -> None:
        """Apply an event's state changes to the session's and the shared scopes (under the
        lock)."""
        if scoped.app:
            self._app_state.setdefault(stored.app_name, {}).update(copy_json(scoped.app))
        if scoped.user:
            self._user_state.setdefault((stored.app_name, stored.user_id), {}).update(
                copy_json(scoped.user)
            )
        if scoped.session:
            stored.state.update(copy_json(scoped.session))
        for scope, name in scoped.removed:
            owner = {
                "app": self._app_state.get(stored.app_name),
                "user": self._user_state.get((stored.app_name, stored.user_id)),
                "session": stored.state,
            }[scope]
            if owner is not None:
                owner.pop(name, None)

    # -- paging ------------------------------------------------------------------------
    def _sessions_of(self, app_name: str, user_id: str | None) -> list[_StoredSession]:
        if user_id is not None:
            return list(self._sessions.get((app_name, user_id), {}).values())
        return [
            s
            for (app, _), by_id in self._sessions.items()
            if app == app_name
            for s in by_id.values()
        ]

    async def list_sessions_page(
        self,
        *,
        app_name: str,
        user_id: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> SessionPage:
        check_owner(app_name, user_id)
        check_limit(limit)
        after = decode_cursor("sessions", cursor) if cursor is not None else None
        with self._lock:
            ordered = sorted(
                self._sessions_of(app_name, user_id),
                key=lambda s: (s.last_update_time, s.user_id, s.id),
                reverse=True,
            )
            if after is not None:
                position = (after[0], after[1], after[2])
                ordered = [s for s in ordered if (s.last_update_time, s.user_id, s.id) < position]
            page = ordered[:limit]
            sessions = [self._snapshot(s, []) for s in page]
        more = len(ordered) > limit
        return SessionPage(sessions=sessions, next_cursor=next_sessions_cursor(sessions, more))

    async def count_sessions(self, *, app_name: str, user_id: str | None = None) -> int:
        check_owner(app_name, user_id)
        with self._lock:
            return len(self._sessions_of(app_name, user_id))

    async def list_events(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        limit: int = 100,
        cursor: str | None = None,
        direction: Direction = "forward",
    ) -> EventPage:
        check_ids(app_name, user_id, session_id)
        check_limit(limit)
        position = decode_cursor(direction, cursor)[0] if cursor is not None else None
        with self._lock:
            stored = self._find(app_name, user_id, session_id)
            if stored is None:
                raise SessionNotFoundError(
                    app_name=app_name, user_id=user_id, session_id=session_id
                )
            # Sequence numbers start at 1: event i (0-based) has seq i + 1.
            if direction == "forward":
                start = position if position is not None else 0
                window = stored.events[start : start + limit]
                last_seq = start + len(window)
                more = last_seq < len(stored.events)
            else:
                end = position - 1 if position is not None else len(stored.events)
                start = max(0, end - limit)
                window = stored.events[start:end]
                last_seq = start + 1
                more = start > 0
        events = [Event.model_validate_json(raw) for raw in window]
        next_cursor = encode_cursor(direction, [last_seq]) if more and window else None
        return EventPage(events=events, next_cursor=next_cursor)

    async def list_invocation_events(
        self, *, app_name: str, user_id: str, session_id: str, invocation_id: str
    ) -> list[Event]:
        """The invocation's events, read through its index (not the whole log)."""
        check_ids(app_name, user_id, session_id)
        with self._lock:
            stored = self._find(app_name, user_id, session_id)
            if stored is None:
                raise SessionNotFoundError(
                    app_name=app_name, user_id=user_id, session_id=session_id
                )
            raws = [stored.events[i] for i in stored.invocations.get(invocation_id, ())]
        return [Event.model_validate_json(raw) for raw in raws]

    # -- leases --------------------------------------------------------------------------
    async def acquire_session_lease(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        holder: str,
        ttl: float,
        generation: int | None = None,
        replacing: str | None = None,
    ) -> SessionLease | str:
        check_ids(app_name, user_id, session_id)
        key = (app_name, user_id, session_id)
        now = time.monotonic()
        with self._lock:
            current = self._leases.get(key)
            if generation is not None:  # a renewal
                if current is None or (current.holder, current.generation) != (holder, generation):
                    return current.holder if current is not None else ""
                current.expires_at = now + ttl
            elif (
                current is None
                or not current.holder
                or current.expires_at <= now
                or (replacing is not None and current.holder == replacing)
            ):
                generation = (current.generation if current is not None else 0) + 1
                self._leases[key] = _Lease(holder, generation, now + ttl)
            else:
                return current.holder
            return SessionLease(app_name, user_id, session_id, holder, generation)

    @never_suspends  # a release is handed to ``uninterrupted``: this one runs in place
    async def release_session_lease(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        holder: str,
        generation: int | None = None,
    ) -> None:
        check_ids(app_name, user_id, session_id)
        key = (app_name, user_id, session_id)
        with self._lock:
            current = self._leases.get(key)
            if (
                current is not None
                and current.holder == holder
                and generation in (None, current.generation)
            ):
                current.holder, current.expires_at = "", 0.0
