"""Pages of sessions and of events, with opaque cursors."""

from __future__ import annotations

import base64
import json
from typing import Any, Literal

from pydantic import Field

from cairn.errors import InvalidCursorError
from cairn.events._base import CamelModel
from cairn.events.event import Event
from cairn.sessions.session import Session

Direction = Literal["forward", "backward"]


class SessionPage(CamelModel):
    """Sessions (merged state, no events), most recently updated first.

    ``next_cursor`` is None on the last page. A session updated while you page
    moves to the front, so it may be missed or seen twice; page again to catch up.
    """

    sessions: list[Session] = Field(default_factory=list)
    next_cursor: str | None = None


class EventPage(CamelModel):
    """Events of one session in append order; ``next_cursor`` continues in the same direction."""

    events: list[Event] = Field(default_factory=list)
    next_cursor: str | None = None


def encode_cursor(kind: str, position: list[Any]) -> str:
    raw = json.dumps([kind, *position], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(kind: str, cursor: str) -> list[Any]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        decoded = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, TypeError) as exc:
        raise InvalidCursorError(
            f"cursor {cursor!r} is not valid; pass the next_cursor of a previous page "
            "unchanged, or None for the first page"
        ) from exc
    if not isinstance(decoded, list) or not decoded or decoded[0] != kind:
        raise InvalidCursorError(
            f"cursor {cursor!r} does not belong to this call (it is not a {kind} cursor); "
            "pass the next_cursor of a previous page of the same listing"
        )
    return decoded[1:]


def check_limit(limit: int, maximum: int = 1000) -> None:
    if not 1 <= limit <= maximum:
        raise ValueError(f"limit must be between 1 and {maximum}; got {limit}")


def next_sessions_cursor(page: list[Session], more: bool) -> str | None:
    """The cursor after the last session of a page (None when nothing follows)."""
    if not more or not page:
        return None
    last = page[-1]
    return encode_cursor("sessions", [last.last_update_time, last.user_id, last.id])


def position_cursor(direction: Direction, seq: int) -> str:
    """A ``list_events`` cursor at a position of the log: ``forward`` continues with the
    events after ``seq``, ``backward`` with those before it. An event's seq is the session's
    revision just after it was appended (1 for the first event), in every store."""
    return encode_cursor(direction, [seq])
