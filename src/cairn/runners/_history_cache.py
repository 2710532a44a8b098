"""Whole-history loads that cost only what is new since this Runner last loaded a session."""

from __future__ import annotations

from collections import OrderedDict

from cairn.events.event import Event
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.session import Session

_SessionKey = tuple[str, str, str]


class HistoryCache:
    """The stored events of recently run sessions, as the store returned them.

    ``load`` reads the session's state and revision (no events), then only the
    events appended since the cached revision, checking that the last cached
    event is still the one stored at that position (a deleted and recreated
    session is reloaded in full). Events are immutable once stored, so the
    cached ones are exactly what a full read would return. Holds at most
    ``capacity`` sessions (least recently used dropped first).
    """

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[_SessionKey, tuple[int, list[Event]]] = OrderedDict()

    async def load(
        self, service: BaseSessionService, app_name: str, user_id: str, session_id: str
    ) -> Session | None:
        key = (app_name, user_id, session_id)
        cached = self._entries.get(key)
        # One read: state, revision, and the events after the last cached one (that one
        # included, to check that the history still continues from it).
        since = max(cached[0] - 1, 0) if cached else None
        head = await service.get_session(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            config=GetSessionConfig(after_revision=since) if since is not None else None,
        )
        if head is None:
            self._entries.pop(key, None)
            return None
        events = self._extend(cached, head) if cached else list(head.events)
        if events is None:  # the history changed under us (e.g. recreated): read it all
            full = await service.get_session(
                app_name=app_name, user_id=user_id, session_id=session_id
            )
            if full is None:
                self._entries.pop(key, None)
                return None
            head, events = full, list(full.events)
        self._entries[key] = (head.revision, events)
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
        return head.model_copy(update={"events": list(events)})

    @staticmethod
    def _extend(cached: tuple[int, list[Event]], head: Session) -> list[Event] | None:
        """Cached events plus those the read returned; None if they do not continue."""
        cached_revision, cached_events = cached
        fetched = head.events
        if head.revision < cached_revision or len(cached_events) != cached_revision:
            return None
        if cached_events:
            if not fetched or fetched[0].id != cached_events[-1].id:
                return None
            fetched = fetched[1:]
        if len(cached_events) + len(fetched) != head.revision:
            return None
        return [*cached_events, *fetched]
