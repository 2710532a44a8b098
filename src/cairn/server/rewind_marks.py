"""Which events of a session a rewind took back, kept per session between requests.

A rewind takes back events older than itself, so marking a page that is not the newest
needs the rewinds of everything newer. The server keeps, per session, a compact line per
event (id, invocation, rewind target) and reads only the events appended since its last
request: the first request on an old page reads the log once, later ones read what is new.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from dataclasses import dataclass, field

from cairn.events.event import Event
from cairn.events.rewind import replay_rewinds
from cairn.server.log_window import PAGE, LogWindow
from cairn.sessions.base_session_service import BaseSessionService

KEPT_SESSIONS = 32  # sessions remembered per session service (least recently used go)


@dataclass(frozen=True)
class Line:
    """What replaying rewinds needs of one event."""

    id: str
    invocation_id: str
    target: str | None

    @staticmethod
    def of(event: Event) -> Line:
        return Line(event.id, event.invocation_id, event.actions.rewind_before_invocation_id)


@dataclass
class SessionLines:
    lines: list[Line] = field(default_factory=list)


_KEPT: weakref.WeakKeyDictionary[
    BaseSessionService, OrderedDict[tuple[str, str, str], SessionLines]
]
_KEPT = weakref.WeakKeyDictionary()


def taken_back(lines: list[Line]) -> set[str]:
    """The ids a rewind took back, replaying the whole log (``replay_rewinds`` with
    ``whole_log``) on the compact lines."""
    in_effect: list[Line] = []
    taken: set[str] = set()
    for line in lines:
        if line.target is not None:
            start = next(
                (i for i, kept in enumerate(in_effect) if kept.invocation_id == line.target),
                len(in_effect),
            )
            taken.update(kept.id for kept in in_effect[start:])
            del in_effect[start:]
        in_effect.append(line)
    return taken


async def rewound_ids(window: LogWindow, positions: list[int]) -> list[str]:
    """The ids of the window's events at ``positions`` that a rewind took back.

    When the window reaches the head, its own events answer (a rewind to an invocation
    that began before the window takes back everything before it in the window).
    Otherwise the session's kept lines are brought up to the head, reading only events
    not read before, and replayed.
    """
    if not positions:
        return []
    if window.high >= window.head:
        events = [window.at(p) for p in range(window.low, window.high + 1)]
        taken = replay_rewinds(events, whole_log=window.low == 1)[1]
    else:
        taken = taken_back(await _lines_to_head(window))
    return [window.at(p).id for p in positions if window.at(p).id in taken]


async def _lines_to_head(window: LogWindow) -> list[Line]:
    sessions = window.sessions
    kept = _KEPT.setdefault(sessions, OrderedDict())
    key = window.key
    entry = kept.pop(key, None) or SessionLines()
    kept[key] = entry
    while len(kept) > KEPT_SESSIONS:
        kept.popitem(last=False)
    lines = entry.lines
    if len(lines) > window.head or (lines and not await _still_there(window, lines)):
        lines.clear()  # the session was deleted and made again: start over
    reader = LogWindow(sessions, *key, head=window.head, start=len(lines) + 1)
    while got := await reader.newer(PAGE):
        lines.extend(Line.of(reader.at(p)) for p in got)
    return lines


async def _still_there(window: LogWindow, lines: list[Line]) -> bool:
    """Whether the last line kept is still the event at its position."""
    probe = LogWindow(window.sessions, *window.key, head=window.head, start=len(lines) + 1)
    (position,) = await probe.older(1)
    return probe.at(position).id == lines[-1].id
