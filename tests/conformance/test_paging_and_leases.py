"""Paged reads, session counts, leases and size limits, on every store."""

from __future__ import annotations

import pytest

from cairn import Event, EventTooLargeError, SessionNotFoundError
from cairn.errors import InvalidCursorError
from cairn.sessions import BaseSessionService

APP = "paging"


async def test_list_sessions_page_walks_every_session_newest_first(
    store: BaseSessionService,
) -> None:
    for i in range(7):
        session = await store.create_session(
            app_name=APP, user_id="u1", session_id=f"s{i}", state={"i": i, "user:name": "ada"}
        )
        await store.append_event(session, Event(author="a", timestamp=1000.0 + i))
    await store.create_session(app_name=APP, user_id="u2", session_id="other")
    await store.create_session(app_name="other-app", user_id="u1", session_id="elsewhere")

    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = await store.list_sessions_page(app_name=APP, user_id="u1", limit=3, cursor=cursor)
        pages += 1
        for session in page.sessions:
            assert session.events == []
            assert session.state == {"i": int(session.id[1:]), "user:name": "ada"}
        seen += [s.id for s in page.sessions]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 3
    assert seen == [f"s{i}" for i in reversed(range(7))]

    everyone = await store.list_sessions_page(app_name=APP, limit=100)
    assert {(s.user_id, s.id) for s in everyone.sessions} == {
        *(("u1", f"s{i}") for i in range(7)),
        ("u2", "other"),
    }
    assert everyone.next_cursor is None
    assert await store.count_sessions(app_name=APP, user_id="u1") == 7
    assert await store.count_sessions(app_name=APP) == 8
    assert await store.count_sessions(app_name=APP, user_id="nobody") == 0


async def test_bad_cursor_and_limit_are_refused(store: BaseSessionService) -> None:
    with pytest.raises(InvalidCursorError, match="next_cursor"):
        await store.list_sessions_page(app_name=APP, cursor="garbage!")
    await store.create_session(app_name=APP, user_id="u1", session_id="s")
    page = await store.list_events(app_name=APP, user_id="u1", session_id="s", limit=1)
    assert page.events == [] and page.next_cursor is None
    with pytest.raises(ValueError, match="limit"):
        await store.list_sessions_page(app_name=APP, limit=0)


async def test_list_events_pages_both_directions(store: BaseSessionService) -> None:
    session = await store.create_session(app_name=APP, user_id="u1", session_id="s")
    ids = []
    for i in range(10):
        event = Event(author="a", state={"n": i})
        await store.append_event(session, event)
        ids.append(event.id)

    async def walk(direction: str) -> list[list[str]]:
        pages, cursor = [], None
        while True:
            page = await store.list_events(
                app_name=APP,
                user_id="u1",
                session_id="s",
                limit=4,
                cursor=cursor,
                direction=direction,  # type: ignore[arg-type]
            )
            pages.append([e.id for e in page.events])
            cursor = page.next_cursor
            if cursor is None:
                return pages

    assert await walk("forward") == [ids[0:4], ids[4:8], ids[8:10]]
    assert await walk("backward") == [ids[6:10], ids[2:6], ids[0:2]]
    forward_cursor = (
        await store.list_events(app_name=APP, user_id="u1", session_id="s", limit=4)
    ).next_cursor
    with pytest.raises(InvalidCursorError):
        await store.list_events(
            app_name=APP, user_id="u1", session_id="s", cursor=forward_cursor, direction="backward"
        )
    with pytest.raises(SessionNotFoundError):
        await store.list_events(app_name=APP, user_id="u1", session_id="missing")


async def test_session_leases(store: BaseSessionService) -> None:
    key = {"app_name": APP, "user_id": "u1", "session_id": "s"}
    assert await store.acquire_session_lease(**key, holder="a", ttl=30) is None
    assert await store.acquire_session_lease(**key, holder="a", ttl=30) is None  # renewal
    assert await store.acquire_session_lease(**key, holder="b", ttl=30) == "a"
    await store.release_session_lease(**key, holder="b")  # not the holder: no effect
    assert await store.acquire_session_lease(**key, holder="b", ttl=30) == "a"
    await store.release_session_lease(**key, holder="a")
    assert await store.acquire_session_lease(**key, holder="b", ttl=30) is None
    other = {**key, "session_id": "t"}
    assert await store.acquire_session_lease(**other, holder="a", ttl=30) is None


async def test_expired_lease_can_be_taken_over(store: BaseSessionService) -> None:
    key = {"app_name": APP, "user_id": "u1", "session_id": "s"}
    assert await store.acquire_session_lease(**key, holder="dead", ttl=-1) is None
    assert await store.acquire_session_lease(**key, holder="alive", ttl=30) is None
    assert await store.acquire_session_lease(**key, holder="dead", ttl=30) == "alive"


async def test_oversized_event_is_refused_and_nothing_stored(store: BaseSessionService) -> None:
    session = await store.create_session(app_name=APP, user_id="u1", session_id="s")
    limit = store.max_event_bytes  # type: ignore[attr-defined]
    huge = Event(author="a", state={"blob": "x" * (limit + 1)})
    with pytest.raises(EventTooLargeError, match=f"{limit:,}"):
        await store.append_event(session, huge)
    loaded = await store.get_session(app_name=APP, user_id="u1", session_id="s")
    assert loaded is not None and loaded.events == [] and loaded.state == {}
    assert session.revision == 0


async def test_after_revision_reads_only_newer_events(store: BaseSessionService) -> None:
    from cairn.sessions import GetSessionConfig

    session = await store.create_session(app_name=APP, user_id="u1", session_id="s")
    ids = []
    for i in range(5):
        event = Event(author="a", state={"n": i})
        await store.append_event(session, event)
        ids.append(event.id)
    newer = await store.get_session(
        app_name=APP, user_id="u1", session_id="s", config=GetSessionConfig(after_revision=3)
    )
    assert newer is not None and [e.id for e in newer.events] == ids[3:]
    assert newer.revision == 5 and newer.state == {"n": 4}
    last_two_of_newer = await store.get_session(
        app_name=APP,
        user_id="u1",
        session_id="s",
        config=GetSessionConfig(after_revision=1, num_recent_events=2),
    )
    assert last_two_of_newer is not None and [e.id for e in last_two_of_newer.events] == ids[3:]
