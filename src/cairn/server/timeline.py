"""One page of a session's timeline: events, the state changes each made, which a rewind
took back, and cursors both ways; optionally only the events a filter keeps.

The dev UI opens a session on its newest page and loads older pages as the user scrolls,
so opening a long session costs one page, not the whole log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from cairn.errors import InvalidCursorError
from cairn.server.log_window import LogWindow
from cairn.server.rewind_marks import rewound_ids
from cairn.server.state_changes import state_changes
from cairn.server.timeline_filter import TimelineFilter
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.paging import decode_cursor, encode_cursor

Way = Literal["older", "newer"]
FILTER_CHUNK = 200  # events read at a time while a filter scans


@dataclass(frozen=True)
class TimelineRequest:
    """Which page: ``cursor`` (a page's ``olderCursor`` or ``newerCursor``), else the
    newest page (``backward``) or the oldest (``forward``); at most ``limit`` events that
    ``keep`` keeps, scanning at most ``scan`` events."""

    limit: int = 50
    cursor: str | None = None
    direction: Literal["forward", "backward"] = "backward"
    keep: TimelineFilter = field(default_factory=TimelineFilter)
    scan: int = 2000

    def start(self, head: int) -> tuple[Way, int]:
        """(the way to read, the position the page starts next to)."""
        if self.cursor is None:
            return ("older", head + 1) if self.direction == "backward" else ("newer", 0)
        refused = InvalidCursorError(
            f"cursor {self.cursor!r} is not a timeline cursor; pass a timeline page's "
            "olderCursor or newerCursor unchanged, or no cursor for the newest page"
        )
        try:
            decoded = decode_cursor("timeline", self.cursor)
        except InvalidCursorError:
            raise refused from None
        if len(decoded) != 2 or decoded[0] not in ("older", "newer") or type(decoded[1]) is not int:
            raise refused
        way: Way = decoded[0]
        return way, min(decoded[1], head + 1) if way == "older" else min(decoded[1], head)


async def timeline_page(
    sessions: BaseSessionService,
    app_name: str,
    user_id: str,
    session_id: str,
    *,
    head: int,
    initial_state: dict[str, Any],
    request: TimelineRequest,
) -> dict[str, Any]:
    """The page's JSON (``events`` in log order, ``positions``, ``changes``,
    ``rewoundEventIds``, ``olderCursor``, ``newerCursor``, ``revision``, ``scanned``).

    Cost, in events read: the page (with a filter: the events scanned, at most
    ``request.scan``); for the state changes, the older events back to the last earlier
    write of each key the page changes (see ``state_changes``); for the rewound marks, the
    events newer than the page (none for the newest page). ``head`` is the session's
    revision when the request began: events appended since wait for ``newerCursor``.
    """
    way, at = request.start(head)
    window = LogWindow(
        sessions, app_name, user_id, session_id, head=head, start=at if way == "older" else at + 1
    )
    kept: list[int] = []
    examined: list[int] = []
    chunk = FILTER_CHUNK if request.keep.active else request.limit
    while len(kept) < request.limit and len(examined) < request.scan:
        room = min(chunk, request.scan - len(examined))
        got = await (window.older(room) if way == "older" else window.newer(room))
        if not got:
            break
        for position in got:
            examined.append(position)
            if request.keep.keeps(window.at(position)):
                kept.append(position)
                if len(kept) == request.limit:
                    break
    kept.sort()
    low = min(examined, default=at if way == "older" else at + 1)
    high = max(examined, default=at - 1 if way == "older" else at)
    data: dict[str, Any] = {
        "events": [window.at(p).to_dict() for p in kept],
        "positions": kept,
        "changes": await state_changes(window, kept, initial_state),
        "rewoundEventIds": await rewound_ids(window, kept),
        "newerCursor": encode_cursor("timeline", ["newer", high]),
        "revision": head,
        "scanned": len(examined),
    }
    if low > 1:
        data["olderCursor"] = encode_cursor("timeline", ["older", low])
    return data
