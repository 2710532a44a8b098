"""History loads that cost only what is new since this Runner last loaded a session."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from cairn.events.event import Event
from cairn.events.rewind import is_rewind, live_events
from cairn.sessions.base_session_service import BaseSessionService, stored_json
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.scopes import stored_form
from cairn.sessions.session import Session

_SessionKey = tuple[str, str, str]
_FIRST_WINDOW = 64


@dataclass
class _Entry:
    revision: int
    events: list[Event]
    offset: int
    """How many of the session's oldest events are not in ``events`` (0: the whole log)."""
    live: list[Event] | None = None
    """The live events (no rewind took them back) when ``events`` holds a rewind."""
    live_scanned: int = 0
    """How many of ``events`` ``live`` accounts for."""
    unparsed: list[str] = field(default_factory=list)
    """The stored JSON of events remembered after ``events``, parsed when next loaded (a
    session that is not loaded again never pays for it)."""

    @property
    def count(self) -> int:
        return len(self.events) + len(self.unparsed)

    def parse(self) -> None:
        """Move the remembered events into ``events``, parsed as a read would return them."""
        if self.unparsed:
            self.events.extend(Event.model_validate_json(raw) for raw in self.unparsed)
            self.unparsed.clear()


class HistoryCache:
    """The stored events of recently run sessions, as the store returned them.

    ``load`` reads the session's state and revision together with only the
    events appended since the cached revision, checking that the last cached
    event is still the one stored at that position (a deleted and recreated
    session is reloaded). Events are immutable once stored, so the cached ones
    are exactly what a read would return. Holds at most ``capacity`` sessions
    (least recently used dropped first).

    ``since_compaction=True`` (the app compacts its history) lets a first load
    read only from the newest compaction summary onward — the events a prompt
    can show — so a new process's first turn costs the same at event 100 and
    at event 100,000; otherwise, and whenever a caller needs the whole history
    (``complete=True``), the whole log is read.

    The session comes back with its *live* events, those no rewind took back
    (``log=True``: every event loaded, rewound ones included).

    ``remember`` takes in an event this Runner has just appended, as a read would
    return it (its stored JSON, parsed when the session is next loaded), so the
    next turn or resume in this process reads only what others appended since.
    """

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[_SessionKey, _Entry] = OrderedDict()

    async def load(
        self,
        service: BaseSessionService,
        app_name: str,
        user_id: str,
        session_id: str,
        *,
        log: bool = False,
        complete: bool = True,
        since_compaction: bool = False,
    ) -> Session | None:
        key = (app_name, user_id, session_id)
        loaded = await self._read(service, key, complete or not since_compaction)
        if loaded is None:
            self._entries.pop(key, None)
            return None
        head, entry = loaded
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
        events = list(entry.events) if log else self._live_view(entry)
        return head.model_copy(update={"events": events})

    def remember(self, session: Session, event: Event) -> None:
        """Add ``event``, just appended to ``session``, to the session's cached history.

        Only when it is the very next event after the cached ones (the append made the
        revision one higher); anything else (a duplicate append that stored nothing,
        someone else's append in between) is left for the next ``load`` to read.
        """
        key = (session.app_name, session.user_id, session.id)
        entry = self._entries.get(key)
        if entry is None or session.revision != entry.revision + 1:
            return
        if entry.offset + entry.count != entry.revision:
            return
        # What the store returns for it: the stored form, through its JSON (an output
        # tuple comes back a list, a model a dict), never an object the caller holds.
        entry.unparsed.append(stored_json(stored_form(event)))
        entry.revision = session.revision

    async def _read(
        self, service: BaseSessionService, key: _SessionKey, complete: bool
    ) -> tuple[Session, _Entry] | None:
        cached = self._entries.get(key)
        if cached is not None:
            cached.parse()
            # One read: state, revision, and the events after the last cached one (that one
            # included, to check that the history still continues from it).
            since = max(cached.revision - 1, 0)
            head = await _get(service, key, GetSessionConfig(after_revision=since))
            if head is None:
                return None
            entry = _extend(cached, head)
            # A window (offset > 0) will not do for a caller that needs the whole history,
            # nor once a rewind arrives (what it took back may lie before the window).
            if entry is not None and not (entry.offset and (complete or _has_rewind(head.events))):
                return head, entry
        elif not complete:
            return await _read_since_compaction(service, key)
        # The whole log: first load, history changed under us, or a window no longer enough.
        full = await _get(service, key, None)
        if full is None:
            return None
        return full, _Entry(revision=full.revision, events=list(full.events), offset=0)

    @staticmethod
    def _live_view(entry: _Entry) -> list[Event]:
        """The entry's live events; only events new since the last call are scanned."""
        newer = entry.events[entry.live_scanned :]
        if any(is_rewind(event) for event in newer):
            entry.live = live_events(entry.events)
        elif entry.live is not None:
            entry.live = [*entry.live, *newer]
        entry.live_scanned = len(entry.events)
        return list(entry.events if entry.live is None else entry.live)


async def _get(
    service: BaseSessionService, key: _SessionKey, config: GetSessionConfig | None
) -> Session | None:
    app_name, user_id, session_id = key
    return await service.get_session(
        app_name=app_name, user_id=user_id, session_id=session_id, config=config
    )


def _extend(cached: _Entry, head: Session) -> _Entry | None:
    """The cached events plus those the read returned; None if they do not continue."""
    fetched = head.events
    if head.revision < cached.revision or cached.offset + len(cached.events) != cached.revision:
        return None
    if cached.revision > 0:
        if not fetched or not cached.events or fetched[0].id != cached.events[-1].id:
            return None
        fetched = fetched[1:]
    if cached.offset + len(cached.events) + len(fetched) != head.revision:
        return None
    return _Entry(
        revision=head.revision,
        events=[*cached.events, *fetched],
        offset=cached.offset,
        live=cached.live,
        live_scanned=cached.live_scanned,
    )


def _has_rewind(events: Sequence[Event]) -> bool:
    return any(is_rewind(event) for event in events)


async def _read_since_compaction(
    service: BaseSessionService, key: _SessionKey
) -> tuple[Session, _Entry] | None:
    """The newest events, from the newest compaction's first uncovered event onward.

    Reads a window of the newest events, growing it (x4) until it holds the
    newest compaction and the event it ends at, or the whole log. A window
    with a rewind in it is never enough (what it took back may lie before the
    window), so such sessions are read whole until a newer compaction follows.
    """
    size = _FIRST_WINDOW
    while True:
        head = await _get(service, key, GetSessionConfig(num_recent_events=size))
        if head is None:
            return None
        events = head.events
        offset = head.revision - len(events)
        start = None if offset == 0 else _window_start(events)
        if offset == 0 or start is not None:
            start = start or 0
            kept = events[start:]
            entry = _Entry(revision=head.revision, events=kept, offset=offset + start)
            return head.model_copy(update={"events": kept}), entry
        size *= 4


def _window_start(events: Sequence[Event]) -> int | None:
    """Where a prompt's history starts in ``events`` (a window of the newest ones): just
    after the last event the newest compaction covers; None if the window is not enough."""
    for newest in range(len(events) - 1, -1, -1):
        compaction = events[newest].actions.compaction
        if compaction is None:
            continue
        for index in range(newest - 1, -1, -1):
            if events[index].timestamp <= compaction.end_timestamp:
                start = index + 1
                return None if _has_rewind(events[start:]) else start
        return None
    return None
