"""Session.get_events() and Session.filter_events(): the events as read, and those in effect."""

from __future__ import annotations

from cairn.events import Event, EventActions
from cairn.sessions import Session


def _event(invocation: str, rewind_to: str | None = None) -> Event:
    return Event(
        invocation_id=invocation,
        author="user",
        actions=EventActions(rewind_before_invocation_id=rewind_to),
    )


def _session(*events: Event) -> Session:
    return Session(id="s", app_name="a", user_id="u", events=list(events))


def test_get_events_is_the_events_list() -> None:
    session = _session(_event("i1"))
    assert session.get_events() is session.events


def test_filter_events_drops_rewound_invocations_and_the_rewind_events() -> None:
    session = _session(
        _event("i1"), _event("i2"), _event("r1", rewind_to="i2"), _event("i3"), _event("i4")
    )
    assert [e.invocation_id for e in session.filter_events()] == ["i1", "i3", "i4"]
    assert session.filter_events(exclude_rewound=False) is session.events


def test_a_rewind_to_an_unknown_invocation_takes_back_only_itself() -> None:
    session = _session(_event("i1"), _event("r1", rewind_to="nowhere"))
    assert [e.invocation_id for e in session.filter_events()] == ["i1"]
