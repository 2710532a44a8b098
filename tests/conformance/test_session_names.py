"""Session names, first messages and fork lineage, on every store: what a session list shows
instead of a bare id, read for a page of sessions in one bounded step."""

from __future__ import annotations

import pytest
from google.genai import types

from cairn import Event, EventActions
from cairn.errors import LimitExceededError, SessionNotFoundError
from cairn.sessions import BaseSessionService
from cairn.sessions.session_info import FIRST_EVENTS, NAME_LENGTH, SessionLineage

APP = "names"


def said(text: str, author: str = "user") -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        invocation_id="i1",
        author=author,
        content=types.Content(role=role, parts=[types.Part(text=text)]),
    )


async def append(
    store: BaseSessionService, session_id: str, *events: Event, user: str = "u1"
) -> None:
    session = await store.get_session(app_name=APP, user_id=user, session_id=session_id)
    assert session is not None
    for event in events:
        await store.append_event(session, event)


async def test_a_session_is_named_by_its_user_else_by_its_first_message(
    store: BaseSessionService,
) -> None:
    for sid in ("talk", "quiet", "edited"):
        await store.create_session(app_name=APP, user_id="u1", session_id=sid)
    edit = Event(invocation_id="p1", author="user", actions=EventActions(state_delta={"a": 1}))
    await append(store, "talk", said("  plan a trip\nto Lisbon  "), said("Sure.", "agent"))
    await append(store, "edited", edit, said("second thing"))

    infos = await store.get_session_infos(
        app_name=APP, sessions=[("u1", "talk"), ("u1", "quiet"), ("u1", "edited"), ("u1", "gone")]
    )
    assert set(infos) == {("u1", "talk"), ("u1", "quiet"), ("u1", "edited")}
    talk = infos[("u1", "talk")]
    assert (talk.name, talk.first_message) == (None, "plan a trip\nto Lisbon")
    assert talk.title == "plan a trip to Lisbon" and talk.forked_from is None
    assert infos[("u1", "quiet")].title is None
    assert infos[("u1", "edited")].first_message == "second thing"  # an edit has no text

    await store.set_session_name(app_name=APP, user_id="u1", session_id="talk", name=" Lisbon ")
    renamed = await store.get_session_infos(app_name=APP, sessions=[("u1", "talk")])
    assert renamed[("u1", "talk")].name == "Lisbon" and renamed[("u1", "talk")].title == "Lisbon"
    # The name is not state and no event: the log and state are as they were.
    session = await store.get_session(app_name=APP, user_id="u1", session_id="talk")
    assert session is not None and len(session.events) == 2 and session.state == {}
    await store.set_session_name(app_name=APP, user_id="u1", session_id="talk", name="")
    cleared = await store.get_session_infos(app_name=APP, sessions=[("u1", "talk")])
    assert cleared[("u1", "talk")].name is None


async def test_only_the_first_events_are_read_for_the_first_message(
    store: BaseSessionService,
) -> None:
    await store.create_session(app_name=APP, user_id="u1", session_id="late")
    agent_turns = [said(f"turn {i}", "agent") for i in range(FIRST_EVENTS)]
    await append(store, "late", *agent_turns, said("too late"))
    infos = await store.get_session_infos(app_name=APP, sessions=[("u1", "late")])
    assert infos[("u1", "late")].first_message is None


async def test_a_fork_knows_its_parent_and_event_and_deleting_forgets_it(
    store: BaseSessionService,
) -> None:
    await store.create_session(app_name=APP, user_id="u1", session_id="parent")
    first, second = said("hello"), said("Hi!", "agent")
    await append(store, "parent", first, second)
    await store.set_session_name(app_name=APP, user_id="u1", session_id="parent", name="Main")
    at_first = await store.fork_session(
        app_name=APP,
        user_id="u1",
        session_id="parent",
        up_to_event_id=first.id,
        new_session_id="f1",
    )
    whole = await store.fork_session(app_name=APP, user_id="u1", session_id="parent")
    infos = await store.get_session_infos(
        app_name=APP, sessions=[("u1", "f1"), ("u1", whole.id), ("u1", "parent")]
    )
    assert infos[("u1", "f1")].forked_from == SessionLineage("parent", first.id)
    assert infos[("u1", whole.id)].forked_from == SessionLineage("parent", second.id)
    assert infos[("u1", "f1")].name is None and infos[("u1", "f1")].first_message == "hello"
    assert infos[("u1", "parent")].forked_from is None
    assert at_first.id == "f1"

    await store.set_session_name(app_name=APP, user_id="u1", session_id="f1", name="Branch")
    await store.delete_session(app_name=APP, user_id="u1", session_id="f1")
    assert await store.get_session_infos(app_name=APP, sessions=[("u1", "f1")]) == {}
    # A new session with the deleted one's id starts with no name and no parent.
    await store.create_session(app_name=APP, user_id="u1", session_id="f1")
    fresh = await store.get_session_infos(app_name=APP, sessions=[("u1", "f1")])
    assert fresh[("u1", "f1")].name is None and fresh[("u1", "f1")].forked_from is None


async def test_names_are_per_user_and_bad_names_or_sessions_are_refused(
    store: BaseSessionService,
) -> None:
    await store.create_session(app_name=APP, user_id="u1", session_id="s")
    await store.create_session(app_name=APP, user_id="u2", session_id="s")
    await store.set_session_name(app_name=APP, user_id="u1", session_id="s", name="mine")
    both = await store.get_session_infos(app_name=APP, sessions=[("u1", "s"), ("u2", "s")])
    assert [both[("u1", "s")].name, both[("u2", "s")].name] == ["mine", None]
    with pytest.raises(LimitExceededError, match=str(NAME_LENGTH)):
        await store.set_session_name(
            app_name=APP, user_id="u1", session_id="s", name="x" * (NAME_LENGTH + 1)
        )
    with pytest.raises(SessionNotFoundError):
        await store.set_session_name(app_name=APP, user_id="u1", session_id="nope", name="x")
    kept = await store.get_session_infos(app_name=APP, sessions=[("u1", "s")])
    assert kept[("u1", "s")].name == "mine"
    assert await store.get_session_infos(app_name=APP, sessions=[]) == {}
