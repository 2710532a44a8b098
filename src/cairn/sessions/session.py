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


_ALL_FIELDS = frozenset(Session.model_fields)


def stored_session(
    *,
    id: str,
    app_name: str,
    user_id: str,
    state: dict[str, Any],
    events: list[Event],
    last_update_time: float,
    revision: int,
) -> Session:
    """``Session(...)`` of values a store made and checked itself: the same model (every
    field set, no lease bound), without validating them again, which costs more than the
    rest of a store's read.

    ``state`` (plain JSON under ``str`` keys) and ``events`` (``Event`` objects) are taken
    as they are, so they must be fresh objects the new session owns: validation would have
    copied the dict and the list (and kept the events and values themselves). Values of
    any other type than validation would keep as they are go through ``Session(...)``.
    """
    if not (
        type(id) is str
        and type(app_name) is str
        and type(user_id) is str
        and type(last_update_time) is float
        and type(revision) is int
    ):  # e.g. an imported session's int time: validation converts it
        return Session(
            id=id,
            app_name=app_name,
            user_id=user_id,
            state=state,
            events=events,
            last_update_time=last_update_time,
            revision=revision,
        )
    session = Session.__new__(Session)
    # What pydantic's own construction sets on an instance (its documented attributes).
    object.__setattr__(
        session,
        "__dict__",
        {
            "id": id,
            "app_name": app_name,
            "user_id": user_id,
            "state": state,
            "events": events,
            "last_update_time": last_update_time,
            "revision": revision,
        },
    )
    object.__setattr__(session, "__pydantic_fields_set__", set(_ALL_FIELDS))
    object.__setattr__(session, "__pydantic_extra__", None)
    object.__setattr__(session, "__pydantic_private__", {"_lease": None})
    return session
