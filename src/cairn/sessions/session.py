"""A session as read from a store: identity, merged state, (a window of) its events."""

from __future__ import annotations

from typing import Any

from pydantic import Field, PrivateAttr

from cairn.events._base import CamelModel
from cairn.events.event import Event
from cairn.events.rewind import live_events
from cairn.sessions.lease import SessionLease


class Session(CamelModel):
    """A snapshot of one conversation: changing it changes neither the store nor other copies.

    ``state`` is the merged view: session keys, plus ``app:`` and ``user:`` keys
    shared with other sessions. ``revision`` counts appended events; a writer
    whose revision is behind the store's gets ``StaleSessionError``. A session a Runner
    loaded for an invocation is bound to that invocation's lease (``cairn.sessions.lease``).
    """

    id: str
    app_name: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    last_update_time: float = 0.0
    revision: int = 0

    _lease: SessionLease | None = PrivateAttr(default=None)

    def get_events(self) -> list[Event]:
        """The session's events as read (the ``events`` list itself)."""
        return self.events

    def filter_events(self, *, exclude_rewound: bool = True) -> list[Event]:
        """The events still in effect: without those a rewind took back, nor rewind events.

        With ``exclude_rewound=False``, the ``events`` list itself. A rewind naming an
        invocation these events do not hold takes nothing back but itself.
        """
        if not exclude_rewound:
            return self.events
        return live_events(self.events, whole_log=True)
