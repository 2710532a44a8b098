"""The session-store contract every backend implements."""

from __future__ import annotations

import abc
import uuid
from collections.abc import Sequence
from typing import Any

import pydantic_core

from cairn.errors import (
    EventNotFoundError,
    EventTooLargeError,
    InvalidEventError,
    SessionNotFoundError,
)
from cairn.events.event import Event
from cairn.events.json_values import check_json_state, copy_json
from cairn.sessions.config import GetSessionConfig, ListSessionsResponse
from cairn.sessions.fold import session_state_of
from cairn.sessions.ids import check_ids
from cairn.sessions.lease import SessionLease
from cairn.sessions.paging import Direction, EventPage, SessionPage
from cairn.sessions.scopes import apply_to_state, split_by_scope, stored_form, without_temp
from cairn.sessions.session import Session
from cairn.sessions.session_info import SessionInfo, SessionLineage

DEFAULT_MAX_EVENT_BYTES = 8 * 1024 * 1024


def encode_event(event: Event, max_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> str:
    """The event's lossless JSON, with a clear error if part of it is not JSON or too large."""
    check_json_state(event.actions.state_delta, where=f"the state delta of event {event.id!r}")
    removed = event.actions.removed_state_keys
    if removed:
        both = sorted(set(removed) & event.actions.state_delta.keys())
        if both:
            raise InvalidEventError(
                event_id=event.id,
                reason=f"it both sets and removes the state key(s) {both}. "
                "Keep each key in only one of state_delta and removed_state_keys.",
            )
    try:
        encoded = event.to_json()
    except Exception as exc:  # pydantic raises PydanticSerializationError for foreign objects
        raise InvalidEventError(
            event_id=event.id,
            reason=f"part of it is not JSON-serializable ({exc}). Convert the value "
            "(e.g. in `output` or `custom_metadata`) to plain JSON first.",
        ) from exc
    _check_readable(event.id, encoded)
    # Characters are at most 4 bytes, so only long texts need the exact (encoded) size.
    if len(encoded) * 4 > max_bytes:
        size = len(encoded.encode())
        if size > max_bytes:
            raise EventTooLargeError(event_id=event.id, size=size, limit=max_bytes)
    global _last_encoded
    _last_encoded = (event, encoded)
    return encoded


_last_encoded: tuple[Event, str] | None = None
"""The event ``encode_event`` encoded last, with its JSON (a tuple: replaced whole)."""


def stored_json(event: Event) -> str:
    """``event.to_json()``: the very string ``encode_event`` made, when ``event`` is the
    object it encoded last (an event the Runner just appended), else made now."""
    last = _last_encoded
    if last is not None and last[0] is event:
        return last[1]
    return event.to_json()


_BRACKETS_TO_CHECK = 150
"""JSON with fewer ``[`` and ``{`` than this cannot nest deep enough to trouble the parser."""


def _check_readable(event_id: str, encoded: str) -> None:
    """Refuse JSON that the parser could not read back: it stops at 200 levels of nesting
    (e.g. deep ``output`` or tool arguments), and the session would no longer load."""
    if encoded.count("[") + encoded.count("{") < _BRACKETS_TO_CHECK:
        return
    try:
        pydantic_core.from_json(encoded)
    except ValueError as exc:
        raise InvalidEventError(
            event_id=event_id,
            reason=f"its JSON could not be read back ({exc}): lists and dicts in it nest too "
            "deeply (JSON readers stop at 200 levels). Flatten the value, or keep it in an "
            "artifact.",
        ) from None


def new_session_identity(
    app_name: str, user_id: str, session_id: str | None, state: dict[str, Any] | None
) -> tuple[str, dict[str, Any]]:
    """The id a new session gets (stripped, or a fresh uuid for None) and its initial state
    to store: a plain-JSON copy without ``temp:`` keys. Raises ``InvalidIdError`` (an empty
    id included: only None asks for a generated one) or ``InvalidStateValueError``."""
    if session_id is None:
        session_id = str(uuid.uuid4())
    elif isinstance(session_id, str):
        session_id = session_id.strip()
    check_ids(app_name, user_id, session_id)
    initial = without_temp(dict(state or {}))
    check_json_state(initial, where=f"the initial state of session {session_id!r}")
    return session_id, copy_json(initial)


class BaseSessionService(abc.ABC):
    """Creates, reads, lists and deletes sessions, and appends events to them.

    ``append_event`` is the only way state changes: the event and all of its
    scoped state changes are stored together or not at all, and only then is
    the caller's ``Session`` object updated.
    """

    @abc.abstractmethod
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Create a session; ``app:``/``user:`` keys of ``state`` go to their shared scopes.

        Raises ``SessionAlreadyExistsError`` (an ``AlreadyExistsError``) for a taken id.
        """

    @abc.abstractmethod
    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        """The session with merged state and the events ``config`` selects, or None."""

    @abc.abstractmethod
    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        """Sessions of one user (or of every user when ``user_id`` is None), without events."""

    @abc.abstractmethod
    async def list_app_names(self) -> list[str]:
        """The names of the apps that have sessions in this store, sorted."""

    @abc.abstractmethod
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete a session and its events (deleting a missing session is a no-op)."""

    @abc.abstractmethod
    async def get_initial_state(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> dict[str, Any] | None:
        """The state given to ``create_session`` (without ``temp:`` keys), or None if missing.

        With it, ``state == initial ∘ fold(state deltas)`` can be checked at any time.
        """

    @abc.abstractmethod
    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """The user's ``user:`` state in this app, shared by all of their sessions, with the
        keys as stored: without the ``user:`` prefix. ``{}`` when there is none.

        It reads no session, so it works before the user's first ``create_session``.
        """

    @abc.abstractmethod
    async def list_sessions_page(
        self,
        *,
        app_name: str,
        user_id: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> SessionPage:
        """One page of sessions (merged state, no events), most recently updated first."""

    @abc.abstractmethod
    async def count_sessions(self, *, app_name: str, user_id: str | None = None) -> int:
        """How many sessions the user (or, with ``user_id=None``, the app) has."""

    @abc.abstractmethod
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
        """One page of a session's events in append order.

        ``forward`` starts at the oldest event, ``backward`` at the newest; pass
        a page's ``next_cursor`` (with the same direction) for the next one.
        Raises ``SessionNotFoundError`` for a missing session.
        """

    async def list_invocation_events(
        self, *, app_name: str, user_id: str, session_id: str, invocation_id: str
    ) -> list[Event]:
        """The events of one invocation of the session, in append order.

        This default reads the session's log page by page and keeps the invocation's
        events; a store with an index on the invocation reads only those.
        Raises ``SessionNotFoundError`` for a missing session.
        """
        found: list[Event] = []
        cursor = None
        while True:
            page = await self.list_events(
                app_name=app_name, user_id=user_id, session_id=session_id, limit=1000, cursor=cursor
            )
            found.extend(e for e in page.events if e.invocation_id == invocation_id)
            if page.next_cursor is None:
                return found
            cursor = page.next_cursor

    @abc.abstractmethod
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
        """Take the session's lease for ``ttl`` seconds, or renew it.

        Without ``generation``: take a lease that is free, released or expired
        (or held by ``replacing``, a holder the caller found gone); the lease
        then gets the next generation. With ``generation``: renew the lease
        ``holder`` got at that generation, refused once anyone took it over.
        Returns the lease the caller now holds, else the current holder's name
        (``""``: nobody).
        """

    @abc.abstractmethod
    async def release_session_lease(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        holder: str,
        generation: int | None = None,
    ) -> None:
        """Give the session back (a no-op unless ``holder`` holds it, at ``generation`` if
        given). The generation is kept, so the next holder gets a newer one."""

    async def append_event(self, session: Session, event: Event) -> Event:
        """Store ``event`` in ``session`` and apply its state delta; return the event.

        Partial events are returned unstored. ``temp:`` keys are kept out of
        storage but applied to the caller's ``session.state`` and left on the
        caller's event. A session bound to a lease (``cairn.sessions.lease``)
        is appended to only while that lease is the session's current one.
        Raises ``SessionNotFoundError``, ``StaleSessionError``, ``LeaseLostError``,
        ``InvalidStateValueError`` or ``InvalidEventError``; in every error case
        nothing is stored and ``session`` is unchanged.
        """
        if event.partial:
            return event
        check_ids(session.app_name, session.user_id, session.id)
        outcome = await self._append_event_impl(session, event)
        if outcome is None:  # the very same event was stored before: nothing to do
            return event
        revision, last_update_time = outcome
        apply_to_state(session.state, event)
        session.events.append(event)
        session.revision = revision
        session.last_update_time = last_update_time
        return event

    @abc.abstractmethod
    async def _append_event_impl(self, session: Session, event: Event) -> tuple[int, float] | None:
        """Atomically store the event (temp keys stripped) and its scoped state changes,
        unless ``session`` is bound to a lease that is no longer current (``LeaseLostError``).

        Return the session's new ``(revision, last_update_time)``, or None when an
        identical event with this id is already stored (an idempotent retry).
        """

    async def fork_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        up_to_event_id: str | None = None,
        new_session_id: str | None = None,
    ) -> Session:
        """A new session of the same user whose history is a prefix of this one's.

        The new session holds copies of the events up to and including
        ``up_to_event_id`` (default: all of them); its session-scope state is
        the fold of that prefix over the source's initial state, so it equals
        the source's state as of that event. ``app:`` and ``user:`` state are
        shared and stay as they are. From then on the two sessions evolve
        independently. Forking at an event that a later rewind took back brings
        that branch back. Raises ``SessionNotFoundError``, ``EventNotFoundError``
        or ``SessionAlreadyExistsError`` (for a taken ``new_session_id``).
        """
        source = await self.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
        initial = await self.get_initial_state(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
        if source is None or initial is None:
            raise SessionNotFoundError(app_name=app_name, user_id=user_id, session_id=session_id)
        events = source.events
        if up_to_event_id is not None:
            end = next((i for i, e in enumerate(events) if e.id == up_to_event_id), None)
            if end is None:
                raise EventNotFoundError(
                    app_name=app_name,
                    user_id=user_id,
                    session_id=session_id,
                    event_id=up_to_event_id,
                )
            events = events[: end + 1]
        new_id, fork_initial = new_session_identity(
            app_name, user_id, new_session_id, split_by_scope(initial).session
        )
        return await self._import_session(
            app_name=app_name,
            user_id=user_id,
            session_id=new_id,
            initial_state=fork_initial,
            state=session_state_of(initial, events),
            events=events,
            forked_from=SessionLineage(session_id, events[-1].id if events else None),
        )

    async def import_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        events: list[Event],
        initial_state: dict[str, Any] | None = None,
        state: dict[str, Any] | None = None,
        last_update_time: float | None = None,
    ) -> Session:
        """Create a session holding ``events`` exactly as given (e.g. exported from another
        store), in one step: it lands whole or not at all.

        ``initial_state`` is what ``create_session`` was given. ``state`` is the
        session's merged state as exported: its session keys become the
        session's own state (default: the fold of ``events`` over
        ``initial_state``), and its ``app:``/``user:`` keys are written to the
        shared scopes in the same step. The events' changes are history: they
        are not applied again. ``last_update_time`` defaults to now. Raises
        ``SessionAlreadyExistsError`` for a taken id, ``InvalidEventError``
        (partial, duplicate or unencodable events) or ``InvalidStateValueError``.
        """
        session_id = session_id.strip() if isinstance(session_id, str) else session_id
        check_ids(app_name, user_id, session_id)
        initial = without_temp(dict(initial_state or {}))
        check_json_state(initial, where=f"the initial state of session {session_id!r}")
        final = session_state_of(initial, events) if state is None else without_temp(dict(state))
        check_json_state(final, where=f"the state of session {session_id!r}")
        seen: set[str] = set()
        for event in events:
            if event.partial:
                raise InvalidEventError(
                    event_id=event.id, reason="it is partial, and partial events are never stored."
                )
            if event.id in seen:
                raise InvalidEventError(
                    event_id=event.id,
                    reason=f"session {session_id!r} has two events with this id.",
                )
            seen.add(event.id)
        return await self._import_session(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            initial_state=copy_json(initial),
            state=copy_json(final),
            events=[stored_form(event) for event in events],
            last_update_time=last_update_time,
        )

    @abc.abstractmethod
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
        """Create a session holding ``events`` as they are, in one step, last updated at
        ``last_update_time`` (default: now), and for a fork its lineage (``forked_from``).

        ``state``'s session keys are the session's own state; its ``app:`` and
        ``user:`` keys, if any, are written to the shared scopes in the same step
        (``fork_session`` passes none). The events' changes are history, not
        applied again. Raises ``SessionAlreadyExistsError`` for a taken id.
        """

    @abc.abstractmethod
    async def set_session_name(
        self, *, app_name: str, user_id: str, session_id: str, name: str | None
    ) -> None:
        """Give the session a name to be listed by (None or blank: it has none again).

        The name is not state and no event: the log is not touched. Raises
        ``SessionNotFoundError``, or ``LimitExceededError`` for a name over
        ``NAME_LENGTH`` characters.
        """

    @abc.abstractmethod
    async def get_session_infos(
        self, *, app_name: str, sessions: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], SessionInfo]:
        """The name, first user message and lineage of each ``(user_id, session_id)``,
        read in one bounded step (each session's first ``FIRST_EVENTS`` events at most,
        never a whole log). Sessions that do not exist are left out."""

    async def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release connections and other resources."""

    async def __aenter__(self) -> BaseSessionService:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
