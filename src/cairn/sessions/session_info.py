"""What a session list shows instead of a bare id: the name a user gave the session, else
its first user message, and, for a fork, the session and event it was forked from.

Names and lineage are not state and not events: they live beside the log (the SQL stores'
``cairn_session_info`` table), so naming a session never touches its history.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from cairn.errors import LimitExceededError
from cairn.events.event import Event

NAME_LENGTH = 200
"""Longest session name, in characters."""

FIRST_EVENTS = 8
"""How many of a session's first events are read for its first user message (a bounded read:
a list never reads a whole log)."""

_TITLE_LENGTH = 80


@dataclasses.dataclass(frozen=True)
class SessionLineage:
    """A fork's parent: ``session_id`` (same app and user) and ``event_id``, the last event
    copied from it (None when the parent had none)."""

    session_id: str
    event_id: str | None


@dataclasses.dataclass(frozen=True)
class SessionInfo:
    """A session's ``name`` (None: not named), ``first_message`` (its first user message's
    text, if among its first events) and ``forked_from``."""

    user_id: str
    session_id: str
    name: str | None = None
    first_message: str | None = None
    forked_from: SessionLineage | None = None

    @property
    def title(self) -> str | None:
        """What to show: the name, else the first message on one shortened line."""
        if self.name:
            return self.name
        if not self.first_message:
            return None
        line = " ".join(self.first_message.split())
        return line if len(line) <= _TITLE_LENGTH else line[: _TITLE_LENGTH - 1] + "…"


def checked_name(name: str | None) -> str | None:
    """``name`` without surrounding spaces; None for an empty one (the session is unnamed);
    ``LimitExceededError`` beyond ``NAME_LENGTH`` characters."""
    if name is None or not name.strip():
        return None
    name = name.strip()
    if len(name) > NAME_LENGTH:
        raise LimitExceededError(
            f"a session name has at most {NAME_LENGTH} characters; this one has "
            f"{len(name)}. Give a shorter name. Nothing was stored."
        )
    return name


def first_user_text(events: Iterable[Event]) -> str | None:
    """The text of the first event the user wrote that has text (a message, not an edit)."""
    for event in events:
        if event.author != "user" or event.content is None:
            continue
        text = "".join(part.text or "" for part in event.content.parts or [] if not part.thought)
        if text.strip():
            return text.strip()
    return None
