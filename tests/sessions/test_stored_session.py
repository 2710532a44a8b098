"""``stored_session`` (how the in-memory store builds the sessions it returns, without
validating its own values again) gives exactly what ``Session(...)`` gives."""

from __future__ import annotations

import inspect

from cairn.events.event import Event
from cairn.sessions.session import Session, stored_session


def test_it_sets_every_field_of_session() -> None:
    # A field added to Session must be added to stored_session too, or its sessions lack it.
    assert set(inspect.signature(stored_session).parameters) == set(Session.model_fields)


def test_a_stored_session_is_the_session_validation_makes() -> None:
    values = {
        "id": "s1",
        "app_name": "app",
        "user_id": "ada",
        "state": {"count": 1, "user:name": "Ada"},
        "events": [Event(author="user", message="hi")],
        "last_update_time": 12.5,
        "revision": 1,
    }
    made = Session(**values)
    stored = stored_session(**values)
    assert stored == made
    assert stored.model_fields_set == made.model_fields_set
    assert stored.__pydantic_private__ == made.__pydantic_private__
    assert stored.model_dump(mode="json") == made.model_dump(mode="json")
    stored.state["more"] = True  # an ordinary model: assignable, copyable
    assert stored.model_copy(update={"revision": 2}).revision == 2


def test_values_validation_would_change_go_through_validation() -> None:
    # An int time (an imported session's) becomes a float, as Session(...) makes it.
    stored = stored_session(
        id="s1", app_name="app", user_id="ada", state={}, events=[], last_update_time=7, revision=0
    )
    assert type(stored.last_update_time) is float
    assert stored == Session(
        id="s1", app_name="app", user_id="ada", state={}, events=[], last_update_time=7, revision=0
    )
