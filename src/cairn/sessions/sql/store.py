"""The SQL session stores' implementation of the store contract, over a ``Database``."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sqlalchemy.exc import IntegrityError

from cairn.errors import (
    SessionAlreadyExistsError,
    SessionNotFoundError,
)
from cairn.events.event import Event
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
from cairn.sessions.scopes import event_scopes, split_by_scope, stored_form
from cairn.sessions.session import Session
from cairn.sessions.session_info import SessionInfo, SessionLineage, checked_name
from cairn.sessions.sql import operations as ops
from cairn.sessions.sql import session_infos as infos
from cairn.sessions.sql.a2a_table import SqlA2aStore
from cairn.sessions.sql.backends import backend_for
from cairn.sessions.sql.database import Database
from cairn.sessions.sql.rows import removed_rows, state_rows
from cairn.sessions.sql.run_table import SqlRunStore

T = TypeVar("T")


class SqlSessionStore(BaseSessionService):
    """Implements the store contract with ``operations`` in transactions of ``database``.

    ``database`` is public: the artifact and credential stores that keep their rows beside
    the sessions run their own transactions on it.
    """

    def __init__(self, database: Database, *, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES):
        self.database = database
        self.backend = backend_for(database)
        """The operations' form for this kind of database (``backends``), chosen once."""
        self.max_event_bytes = max_event_bytes
        self.runs = SqlRunStore(database)
        """The runs and schedules of this store's sessions (``cairn.sessions.run_store``)."""
        self.a2a = SqlA2aStore(database)
        """What an A2A server keeps beside the runs (``cairn.sessions.a2a_store``)."""

    async def _transaction(
        self, operation: Callable[..., T], *args: Any, write: bool, durable: bool = True
    ) -> T:
        return await self.database.transaction(operation, *args, write=write, durable=durable)

    async def close(self) -> None:
        """Release the database's connections (made again if the store is used again)."""
        await self.database.close()

    # -- sessions -------------------------------------------------------------------------
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        session_id, initial = new_session_identity(app_name, user_id, session_id, state)
        key = (app_name, user_id, session_id)
        rows = state_rows(key, split_by_scope(initial))
        try:
            return await self._transaction(
                ops.create_session, key, initial, rows, time.time(), write=True
            )
        except IntegrityError:
            raise SessionAlreadyExistsError(
                app_name=app_name, user_id=user_id, session_id=session_id
            ) from None

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
        key = (app_name, user_id, session_id)
        rows = state_rows(key, split_by_scope(state))
        event_rows = [
            {
                "app_name": app_name,
                "user_id": user_id,
                "session_id": session_id,
                "seq": seq,
                "event_id": event.id,
                "invocation_id": event.invocation_id,
                "timestamp": event.timestamp,
                "event": encode_event(event, self.max_event_bytes),
            }
            for seq, event in enumerate(events, start=1)
        ]
        try:
            await self._transaction(
                ops.import_session,
                key,
                initial_state,
                rows,
                event_rows,
                time.time() if last_update_time is None else last_update_time,
                None if forked_from is None else infos.lineage_row(key, forked_from),
                write=True,
            )
        except IntegrityError:
            raise SessionAlreadyExistsError(
                app_name=app_name, user_id=user_id, session_id=session_id
            ) from None
        found = await self.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
        assert found is not None
        return found

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        check_ids(app_name, user_id, session_id)
        return await self.backend.load_session((app_name, user_id, session_id), config)

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        check_owner(app_name, user_id)
        found = await self._transaction(ops.list_sessions, app_name, user_id, write=False)
        return ListSessionsResponse(sessions=found)

    async def list_app_names(self) -> list[str]:
        return await self._transaction(ops.list_app_names, write=False)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        check_ids(app_name, user_id, session_id)
        await self._transaction(ops.delete_session, (app_name, user_id, session_id), write=True)

    async def set_session_name(
        self, *, app_name: str, user_id: str, session_id: str, name: str | None
    ) -> None:
        check_ids(app_name, user_id, session_id)
        key = (app_name, user_id, session_id)
        if not await self._transaction(infos.set_name, key, checked_name(name), write=True):
            raise SessionNotFoundError(app_name=app_name, user_id=user_id, session_id=session_id)

    async def get_session_infos(
        self, *, app_name: str, sessions: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], SessionInfo]:
        for user_id, session_id in sessions:
            check_ids(app_name, user_id, session_id)
        return await self._transaction(infos.infos, app_name, list(sessions), write=False)

    async def get_initial_state(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> dict[str, Any] | None:
        check_ids(app_name, user_id, session_id)
        return await self._transaction(
            ops.initial_state, (app_name, user_id, session_id), write=False
        )

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        check_ids(app_name, user_id)
        return await self._transaction(ops.user_state, app_name, user_id, write=False)

    # -- paging ---------------------------------------------------------------------------------
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
        page, more = await self._transaction(
            ops.list_sessions_page, app_name, user_id, limit, after, write=False
        )
        return SessionPage(sessions=page, next_cursor=next_sessions_cursor(page, more))

    async def count_sessions(self, *, app_name: str, user_id: str | None = None) -> int:
        check_owner(app_name, user_id)
        return await self._transaction(ops.count_sessions, app_name, user_id, write=False)

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
        key = (app_name, user_id, session_id)
        found = await self._transaction(
            ops.list_events, key, limit, position, direction == "forward", write=False
        )
        if found is None:
            raise SessionNotFoundError(app_name=app_name, user_id=user_id, session_id=session_id)
        events, edge, more = found
        next_cursor = encode_cursor(direction, [edge]) if more else None
        return EventPage(events=events, next_cursor=next_cursor)

    async def list_invocation_events(
        self, *, app_name: str, user_id: str, session_id: str, invocation_id: str
    ) -> list[Event]:
        check_ids(app_name, user_id, session_id)
        key = (app_name, user_id, session_id)
        found = await self._transaction(ops.list_invocation_events, key, invocation_id, write=False)
        if found is None:
            raise SessionNotFoundError(app_name=app_name, user_id=user_id, session_id=session_id)
        return found

    # -- appending -------------------------------------------------------------------------------
    def _encode_append(
        self, session: Session, event: Event
    ) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
        """The event's stored JSON, its state rows and the keys of the rows it deletes
        (refused here if too large or too long)."""
        raw = encode_event(stored_form(event), self.max_event_bytes)
        key = (session.app_name, session.user_id, session.id)
        scoped = event_scopes(event)
        return raw, state_rows(key, scoped), removed_rows(key, scoped)

    async def _append_event_impl(self, session: Session, event: Event) -> tuple[int, float] | None:
        raw, rows, removals = self._encode_append(session, event)
        return await self.backend.append_event(
            (session.app_name, session.user_id, session.id),
            session.revision,
            session.last_update_time,
            event,
            raw,
            rows,
            removals,
            bound_lease(session),
        )

    # -- leases ---------------------------------------------------------------------------------
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
        return await self.backend.acquire_lease(
            (app_name, user_id, session_id), holder, ttl, generation, replacing
        )

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
        await self.backend.release_lease((app_name, user_id, session_id), holder, generation)
