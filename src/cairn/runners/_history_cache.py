"""Whole-history loads that cost only what is new since this Runner last loaded a session."""

from __future__ import annotations

from collections import OrderedDict

from cairn.events.event import Event
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.paging import encode_cursor
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
        head = await service.get_session(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            config=GetSessionConfig(num_recent_events=0),
        )
        if head is None:
            self._entries.pop(key, None)
            return None
        cached = self._entries.get(key)
        events = await self._newer(service, key, head.revision, cached) if cached else None
        if events is None:
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
    async def _newer(
        service: BaseSessionService,
        key: _SessionKey,
        revision: int,
        cached: tuple[int, list[Event]],
    ) -> list[Event] | None:
        """Cached events plus those appended since; None if the cache cannot be trusted."""
        cached_revision, cached_events = cached
        if revision < cached_revision or len(cached_events) != cached_revision:
            return None
        if revision == cached_revision and not cached_events:
            return []
        # Re-read the last cached event too, to check that the history continues from it.
        start = max(cached_revision - 1, 0)
        page = await service.list_events(
            app_name=key[0],
            user_id=key[1],
            session_id=key[2],
            limit=min(revision - start, 1000),
            cursor=encode_cursor("forward", [start]) if start else None,
        )
        if page.next_cursor is not None:
            return None  # too much is new: a full read is simpler
        fetched = page.events
        if cached_events:
            if not fetched or fetched[0].id != cached_events[-1].id:
                return None
            fetched = fetched[1:]
        return [*cached_events, *fetched]
