"""A contiguous stretch of one session's log, read from the store in pages and kept.

Positions are seqs: an event's position is the session's revision just after it was
appended (1 for the first event), so a session at revision ``head`` holds positions
``1..head``. The window grows one page at a time towards older or newer events; the
timeline route, its filters and its state-diff fold share one window per request, so no
event is read twice.
"""

from __future__ import annotations

from cairn.events.event import Event
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.paging import position_cursor

PAGE = 1000  # the most list_events returns at once


class LogWindow:
    """Events ``low..high`` of a session (empty when ``low > high``), read up to ``head``."""

    def __init__(
        self,
        sessions: BaseSessionService,
        app_name: str,
        user_id: str,
        session_id: str,
        *,
        head: int,
        start: int,
    ) -> None:
        """An empty window just below position ``start`` (``head + 1``: at the newest end)."""
        self.sessions = sessions
        self.key = (app_name, user_id, session_id)
        self._key = {"app_name": app_name, "user_id": user_id, "session_id": session_id}
        self.head = head
        self.low = start
        self.high = start - 1
        self._events: dict[int, Event] = {}

    @property
    def read(self) -> int:
        """How many events this window has read from the store."""
        return len(self._events)

    def at(self, position: int) -> Event:
        return self._events[position]

    async def older(self, count: int) -> list[int]:
        """Read up to ``count`` events just below the window; their positions, newest first."""
        count = min(count, PAGE, self.low - 1)
        if count <= 0:
            return []
        page = await self.sessions.list_events(
            **self._key,
            limit=count,
            cursor=position_cursor("backward", self.low),
            direction="backward",
        )
        first = self.low - len(page.events)
        for offset, event in enumerate(page.events):
            self._events[first + offset] = event
        positions = list(range(self.low - 1, first - 1, -1))
        self.low = first
        return positions

    async def newer(self, count: int) -> list[int]:
        """Read up to ``count`` events just above the window (not past ``head``); their
        positions, oldest first."""
        count = min(count, PAGE, self.head - self.high)
        if count <= 0:
            return []
        page = await self.sessions.list_events(
            **self._key,
            limit=count,
            cursor=position_cursor("forward", self.high),
            direction="forward",
        )
        first = self.high + 1
        for offset, event in enumerate(page.events):
            self._events[first + offset] = event
        self.high = first + len(page.events) - 1
        return list(range(first, self.high + 1))
