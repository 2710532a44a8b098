"""The interface of every memory store: remember sessions, search them later."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import Any

from cairn.events.event import Event
from cairn.events.rewind import live_events
from cairn.memory._text import MemoryRow, rows_of, rows_of_entries, words
from cairn.memory.memory_entry import MemoryEntry, SearchMemoryResponse
from cairn.sessions.session import Session

DEFAULT_MAX_RESULTS = 20
"""How many memories a search returns at most, unless the store is told otherwise."""


class BaseMemoryService(abc.ABC):
    """Long-term memory of past conversations, strictly per app and user.

    Session state (``user:`` keys) carries facts the app decided to keep;
    memory is what was *said*, found again by searching. Each event with text
    is remembered once, keyed by its id: adding a session again (say, after
    every turn) stores only its new events. A search sees only the memories
    of the app and user it names.
    """

    def __init__(self, *, max_results: int = DEFAULT_MAX_RESULTS) -> None:
        if max_results < 1:
            raise ValueError(f"max_results must be at least 1; got {max_results}")
        self.max_results = max_results

    async def add_session_to_memory(self, session: Session) -> None:
        """Remember the session's events that have text (again: only the new ones are added).

        Events a rewind took back are not remembered.
        """
        await self.add_events_to_memory(
            app_name=session.app_name,
            user_id=session.user_id,
            events=live_events(session.events),
            session_id=session.id,
        )

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Remember these events for the app and user; events already remembered are skipped."""
        _check_owner(app_name, user_id)
        rows = rows_of(events, session_id, custom_metadata)
        if rows:
            await self._add(app_name, user_id, rows)

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Remember these entries for the app and user, as given (not taken from a session).

        Entries without text are skipped; an entry's ``id`` keys it like an event id (one
        already remembered is skipped), and one without an id is always added.
        """
        _check_owner(app_name, user_id)
        rows = rows_of_entries(memories, custom_metadata)
        if rows:
            await self._add(app_name, user_id, rows)

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """The user's memories that match ``query`` (any of its words), best first.

        Any text is a valid query: punctuation and quotes are ignored, and a
        query without words finds nothing.
        """
        _check_owner(app_name, user_id)
        query_words = words(query)
        if not query_words:
            return SearchMemoryResponse()
        rows = await self._search(app_name, user_id, query_words)
        return SearchMemoryResponse(memories=[row.entry() for row in rows])

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections and files (the store reopens them if used again)."""

    @abc.abstractmethod
    async def _add(self, app_name: str, user_id: str, rows: list[MemoryRow]) -> None:
        """Store the rows not stored yet for this app and user (keyed by event id)."""

    @abc.abstractmethod
    async def _search(self, app_name: str, user_id: str, query_words: list[str]) -> list[MemoryRow]:
        """At most ``max_results`` rows of this app and user matching any word, best first."""


def _check_owner(app_name: str, user_id: str) -> None:
    if not app_name or not user_id:
        raise ValueError(
            f"memory is kept per app and user; got app_name={app_name!r}, user_id={user_id!r}. "
            "Pass both (a session's app_name and user_id)."
        )
