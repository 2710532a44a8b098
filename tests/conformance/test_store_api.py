"""The ADK-compatible session-store API, its errors, and snapshot isolation, on every store."""

from __future__ import annotations

import pytest

from cairn import (
    AlreadyExistsError,
    Event,
    EventActions,
    InvalidStateValueError,
    SessionNotFoundError,
)
from cairn.sessions import BaseSessionService, GetSessionConfig, Session

APP = "api"


async def test_create_get_list_delete(store: BaseSessionService) -> None:
    created = await store.create_session(
        app_name=APP, user_id="u1", state={"a": 1, "user:pref": "x"}, session_id="  s1  "
    )
    assert created.id == "s1" and created.revision == 0 and created.events == []
    assert created.state == {"a": 1, "user:pref": "x"}
    generated = await store.create_session(app_name=APP, user_id="u1")
    assert generated.id and generated.id != "s1"
    await store.create_session(app_name=APP, user_id="u2", session_id="s1")

    loaded = await store.get_session(app_name=APP, user_id="u1", session_id="s1")
    assert loaded is not None and loaded.state == created.state
    assert await store.get_session(app_name=APP, user_id="u1", session_id="nope") is None
    assert await store.get_session(app_name="other", user_id="u1", session_id="s1") is None

    mine = await store.list_sessions(app_name=APP, user_id="u1")
    assert sorted(s.id for s in mine.sessions) == sorted(["s1", generated.id])
    everyone = await store.list_sessions(app_name=APP)
    assert sorted((s.user_id, s.id) for s in everyone.sessions) == sorted(
        [("u1", "s1"), ("u1", generated.id), ("u2", "s1")]
    )
    assert (await store.list_sessions(app_name="other")).sessions == []

    await store.delete_session(app_name=APP, user_id="u1", session_id="s1")
    assert await store.get_session(app_name=APP, user_id="u1", session_id="s1") is None
    await store.delete_session(app_name=APP, user_id="u1", session_id="s1")  # no-op
    assert await store.get_session(app_name=APP, user_id="u2", session_id="s1") is not None


async def test_list_sessions_orders_by_last_update(store: BaseSessionService) -> None:
    sessions = [
        await store.create_session(app_name=APP, user_id="u1", session_id=f"s{i}") for i in range(3)
    ]
    await store.append_event(sessions[0], Event(author="a"))
    listed = await store.list_sessions(app_name=APP, user_id="u1")
    assert [s.id for s in listed.sessions][-1] == "s0"
    times = [s.last_update_time for s in listed.sessions]
    assert times == sorted(times)


async def test_duplicate_session_id_is_refused(store: BaseSessionService) -> None:
    await store.create_session(app_name=APP, user_id="u1", session_id="s1", state={"k": 1})
    with pytest.raises(AlreadyExistsError, match=r"'s1'.*'u1'.*'api'"):
        await store.create_session(app_name=APP, user_id="u1", session_id="s1", state={"k": 2})
    loaded = await store.get_session(app_name=APP, user_id="u1", session_id="s1")
    assert loaded is not None and loaded.state == {"k": 1}


async def test_append_to_missing_session_names_it(store: BaseSessionService) -> None:
    ghost = Session(id="ghost", app_name=APP, user_id="u1")
    with pytest.raises(SessionNotFoundError, match=r"'ghost'.*'u1'.*'api'"):
        await store.append_event(ghost, Event(author="a"))
    created = await store.create_session(app_name=APP, user_id="u1", session_id="gone")
    await store.delete_session(app_name=APP, user_id="u1", session_id="gone")
    with pytest.raises(SessionNotFoundError):
        await store.append_event(created, Event(author="a"))


async def test_non_json_initial_state_is_refused_naming_the_key(
    store: BaseSessionService,
) -> None:
    with pytest.raises(InvalidStateValueError, match="'when'"):
        await store.create_session(
            app_name=APP, user_id="u1", session_id="s1", state={"ok": 1, "when": {1, 2}}
        )
    assert await store.get_session(app_name=APP, user_id="u1", session_id="s1") is None


async def test_sessions_read_back_are_snapshots(store: BaseSessionService) -> None:
    session = await store.create_session(
        app_name=APP, user_id="u1", session_id="s1", state={"nested": {"list": [1]}}
    )
    await store.append_event(session, Event(author="a", state={"user:prefs": {"unit": "C"}}))
    first = await store.get_session(app_name=APP, user_id="u1", session_id="s1")
    second = await store.get_session(app_name=APP, user_id="u1", session_id="s1")
    assert first is not None and second is not None and first == second

    first.state["nested"]["list"].append(2)
    first.state["user:prefs"]["unit"] = "F"
    first.events[0].actions.state_delta["user:prefs"] = "mutated"
    first.events.clear()
    session.state["nested"]["list"].append(3)

    third = await store.get_session(app_name=APP, user_id="u1", session_id="s1")
    assert third == second
    assert third is not None and third.state["nested"] == {"list": [1]}
    assert third.state["user:prefs"] == {"unit": "C"}
    assert third.events[0].actions.state_delta == {"user:prefs": {"unit": "C"}}


async def test_values_appended_are_copied_not_shared(store: BaseSessionService) -> None:
    session = await store.create_session(app_name=APP, user_id="u1", session_id="s1")
    payload = {"items": [1]}
    event = Event(author="a", state={"payload": payload})
    await store.append_event(session, event)
    payload["items"].append(2)  # the caller keeps using its objects
    loaded = await store.get_session(app_name=APP, user_id="u1", session_id="s1")
    assert loaded is not None and loaded.state["payload"] == {"items": [1]}


async def test_revision_and_last_update_time(store: BaseSessionService) -> None:
    session = await store.create_session(app_name=APP, user_id="u1", session_id="s1")
    created_at = session.last_update_time
    later = Event(author="a", timestamp=created_at + 100)
    earlier = Event(author="a", timestamp=created_at - 100)
    await store.append_event(session, later)
    await store.append_event(session, earlier)
    assert session.revision == 2
    assert session.last_update_time == created_at + 100  # never moves backwards
    loaded = await store.get_session(
        app_name=APP, user_id="u1", session_id="s1", config=GetSessionConfig(num_recent_events=0)
    )
    assert loaded is not None
    assert (loaded.revision, loaded.last_update_time) == (2, created_at + 100)
    assert loaded.events == []


async def test_nul_characters_in_state_are_refused_on_every_store(
    store: BaseSessionService,
) -> None:
    session = await store.create_session(app_name=APP, user_id="u1", session_id="s1")
    with pytest.raises(InvalidStateValueError, match=r"'note'.*U\+0000"):
        await store.append_event(session, Event(author="a", state={"note": "a\x00b"}))
    with pytest.raises(InvalidStateValueError, match="'bad'"):
        await store.create_session(
            app_name=APP, user_id="u1", session_id="s2", state={"bad": ["\x00"]}
        )
    loaded = await store.get_session(app_name=APP, user_id="u1", session_id="s1")
    assert loaded is not None and loaded.state == {} and loaded.events == []


async def test_get_user_state_reads_the_users_shared_state_without_a_session(
    store: BaseSessionService,
) -> None:
    # ADK's bootstrapping use: read what is known about the user before creating a session.
    assert await store.get_user_state(app_name=APP, user_id="u1") == {}
    session = await store.create_session(
        app_name=APP,
        user_id="u1",
        state={"user:name": "Ada", "app:tier": "gold", "topic": "x", "temp:t": 1},
    )
    await store.append_event(
        session,
        Event(author="agent", actions=EventActions(state_delta={"user:visits": 2, "temp:y": 3})),
    )
    await store.create_session(app_name=APP, user_id="u2", state={"user:name": "Bob"})
    assert await store.get_user_state(app_name=APP, user_id="u1") == {"name": "Ada", "visits": 2}
    assert await store.get_user_state(app_name=APP, user_id="u2") == {"name": "Bob"}
    assert await store.get_user_state(app_name="other", user_id="u1") == {}
    await store.delete_session(app_name=APP, user_id="u1", session_id=session.id)
    assert await store.get_user_state(app_name=APP, user_id="u1") == {"name": "Ada", "visits": 2}
