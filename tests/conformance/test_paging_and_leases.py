"""Paged reads, session counts, leases and size limits, on every store."""

from __future__ import annotations

import asyncio

import pytest
from google.genai import types

from cairn import Agent, Event, EventTooLargeError, Runner, SessionNotFoundError
from cairn.errors import InvalidCursorError, LeaseLostError
from cairn.sessions import BaseSessionService
from cairn.sessions.lease import SessionLease, bind_lease
from cairn.sessions.paging import position_cursor
from cairn.testing import Call, ScriptedLlm

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


async def test_list_invocation_events_reads_one_invocation_in_append_order(
    store: BaseSessionService,
) -> None:
    session = await store.create_session(app_name=APP, user_id="u1", session_id="s")
    wanted = []
    for i in range(9):
        event = Event(author="a", invocation_id=f"inv-{i % 3}", state={"n": i})
        await store.append_event(session, event)
        if i % 3 == 1:
            wanted.append(event.id)
    found = await store.list_invocation_events(
        app_name=APP, user_id="u1", session_id="s", invocation_id="inv-1"
    )
    assert [e.id for e in found] == wanted
    assert [e.actions.state_delta["n"] for e in found] == [1, 4, 7]
    none = await store.list_invocation_events(
        app_name=APP, user_id="u1", session_id="s", invocation_id="inv-9"
    )
    assert none == []
    with pytest.raises(SessionNotFoundError):
        await store.list_invocation_events(
            app_name=APP, user_id="u1", session_id="missing", invocation_id="inv-1"
        )


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


async def test_a_position_cursor_reads_around_an_events_revision(
    store: BaseSessionService,
) -> None:
    """An event's position is the revision its append made (1 for the first), in every
    store and in a fork: the timeline route pages the log by it."""
    session = await store.create_session(app_name=APP, user_id="u1", session_id="s")
    ids = []
    for i in range(7):
        event = Event(author="a", state={"n": i})
        await store.append_event(session, event)
        ids.append(event.id)
    key = {"app_name": APP, "user_id": "u1"}
    before = await store.list_events(
        **key, session_id="s", limit=2, cursor=position_cursor("backward", 5), direction="backward"
    )
    assert [e.id for e in before.events] == ids[2:4]  # positions 3 and 4
    after = await store.list_events(**key, session_id="s", cursor=position_cursor("forward", 5))
    assert [e.id for e in after.events] == ids[5:7]
    await store.fork_session(**key, session_id="s", up_to_event_id=ids[3], new_session_id="f")
    forked = await store.list_events(
        **key, session_id="f", cursor=position_cursor("backward", 4), direction="backward"
    )
    assert [e.id for e in forked.events] == ids[0:3]


async def test_session_leases(store: BaseSessionService) -> None:
    key = {"app_name": APP, "user_id": "u1", "session_id": "s"}
    a = await store.acquire_session_lease(**key, holder="a", ttl=30)
    assert a == SessionLease(APP, "u1", "s", "a", a.generation)  # type: ignore[union-attr]
    assert isinstance(a, SessionLease)
    renewed = await store.acquire_session_lease(**key, holder="a", ttl=30, generation=a.generation)
    assert renewed == a  # a renewal keeps the generation
    # A fresh acquisition is never a renewal, even under the holder's own name.
    assert await store.acquire_session_lease(**key, holder="a", ttl=30) == "a"
    assert await store.acquire_session_lease(**key, holder="b", ttl=30) == "a"
    await store.release_session_lease(**key, holder="b")  # not the holder: no effect
    await store.release_session_lease(**key, holder="a", generation=a.generation + 1)  # nor this
    assert await store.acquire_session_lease(**key, holder="b", ttl=30) == "a"
    await store.release_session_lease(**key, holder="a", generation=a.generation)
    b = await store.acquire_session_lease(**key, holder="b", ttl=30)
    assert isinstance(b, SessionLease) and b.generation > a.generation
    # The released holder cannot renew what it gave back.
    assert (
        await store.acquire_session_lease(**key, holder="a", ttl=30, generation=a.generation) == "b"
    )
    other = {**key, "session_id": "t"}
    assert isinstance(await store.acquire_session_lease(**other, holder="a", ttl=30), SessionLease)


async def test_expired_lease_can_be_taken_over(store: BaseSessionService) -> None:
    key = {"app_name": APP, "user_id": "u1", "session_id": "s"}
    dead = await store.acquire_session_lease(**key, holder="dead", ttl=-1)
    assert isinstance(dead, SessionLease)
    alive = await store.acquire_session_lease(**key, holder="alive", ttl=30)
    assert isinstance(alive, SessionLease) and alive.generation > dead.generation
    assert await store.acquire_session_lease(**key, holder="dead", ttl=30) == "alive"
    assert (
        await store.acquire_session_lease(**key, holder="dead", ttl=30, generation=dead.generation)
        == "alive"
    )


async def test_a_live_lease_is_taken_over_only_from_the_holder_named_gone(
    store: BaseSessionService,
) -> None:
    key = {"app_name": APP, "user_id": "u1", "session_id": "s"}
    gone = await store.acquire_session_lease(**key, holder="gone", ttl=3600)
    assert isinstance(gone, SessionLease)
    assert await store.acquire_session_lease(**key, holder="new", ttl=30, replacing="x") == "gone"
    new = await store.acquire_session_lease(**key, holder="new", ttl=30, replacing="gone")
    assert isinstance(new, SessionLease) and new.generation > gone.generation
    assert (
        await store.acquire_session_lease(**key, holder="late", ttl=30, replacing="gone") == "new"
    )


async def test_a_holder_whose_lease_was_taken_over_can_never_append_again(
    store: BaseSessionService,
) -> None:
    """Fencing: A stalls past its lease's TTL, B takes the session over; A's appends are then
    refused (LeaseLostError naming both), atomically, and nothing of A's is stored."""
    key = {"app_name": APP, "user_id": "u1", "session_id": "s"}
    await store.create_session(**key, state={"k": "initial"})
    a = await store.acquire_session_lease(**key, holder="a@host:1", ttl=-1)  # A stalls at once
    assert isinstance(a, SessionLease)
    seen_by_a = await store.get_session(**key)
    assert seen_by_a is not None
    bind_lease(seen_by_a, a)
    # Expired, but nobody took it over: A's work still counts.
    await store.append_event(seen_by_a, Event(author="a", state={"k": "a-1"}))

    b = await store.acquire_session_lease(**key, holder="b@host:2", ttl=30)
    assert isinstance(b, SessionLease) and b.generation > a.generation
    with pytest.raises(LeaseLostError) as refused:
        await store.append_event(
            seen_by_a, Event(author="a", state={"k": "a-2", "user:u": 1, "app:x": 1})
        )
    assert (refused.value.holder, refused.value.current_holder) == ("a@host:1", "b@host:2")
    assert refused.value.session_id == "s"
    assert "'s'" in str(refused.value) and "'b@host:2'" in str(refused.value)
    assert seen_by_a.revision == 1 and seen_by_a.state["k"] == "a-1"  # the caller's view too
    stored = await store.get_session(**key)
    assert stored is not None
    assert [e.author for e in stored.events] == ["a"]
    assert stored.state == {"k": "a-1"}
    # A's renewal is refused too; B appends as usual.
    assert (
        await store.acquire_session_lease(**key, holder="a@host:1", ttl=30, generation=a.generation)
        == "b@host:2"
    )
    bind_lease(stored, b)
    await store.append_event(stored, Event(author="b", state={"k": "b-1"}))
    # Once B is done, A (even with a fresh view) still cannot append: the generation moved on.
    await store.release_session_lease(**key, holder="b@host:2", generation=b.generation)
    fresh = await store.get_session(**key)
    assert fresh is not None
    bind_lease(fresh, a)
    with pytest.raises(LeaseLostError):
        await store.append_event(fresh, Event(author="a", state={"k": "a-3"}))
    # Appends outside any lease (a user calling append_event) are not fenced.
    unbound = await store.get_session(**key)
    assert unbound is not None
    await store.append_event(unbound, Event(author="user", state={"k": "plain"}))
    final = await store.get_session(**key)
    assert final is not None
    assert [e.author for e in final.events] == ["a", "b", "user"]
    assert final.state["k"] == "plain"
    assert "user:u" not in final.state and "app:x" not in final.state


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


async def test_an_invocation_whose_lease_was_taken_over_is_stopped_before_it_commits(
    store: BaseSessionService,
) -> None:
    """The Runner's invocation stalls inside a tool; another holder takes the session over
    (as a process that found it gone would). The tool's result is refused, the invocation
    ends with LeaseLostError, and the new holder keeps the lease."""
    inside, proceed = asyncio.Event(), asyncio.Event()

    async def transfer(amount: int) -> dict[str, int]:
        inside.set()
        await proceed.wait()
        return {"sent": amount}

    model = ScriptedLlm(script=[Call("transfer", amount=5), "sent"])
    runner = Runner(
        app_name=APP,
        agent=Agent(name="banker", model=model, tools=[transfer]),
        session_service=store,
    )
    key = {"app_name": APP, "user_id": "u1", "session_id": "s"}
    await store.create_session(**key)
    seen: list[Event] = []

    async def invocation() -> None:
        async for event in runner.run_async(
            user_id="u1", session_id="s", new_message=types.UserContent("send 5")
        ):
            seen.append(event)

    running = asyncio.create_task(invocation())
    await asyncio.wait_for(inside.wait(), 60)
    holder = await store.acquire_session_lease(**key, holder="probe", ttl=30)
    assert isinstance(holder, str) and holder.startswith(seen[0].invocation_id + "@")
    taken = await store.acquire_session_lease(**key, holder="b", ttl=30, replacing=holder)
    assert isinstance(taken, SessionLease)
    proceed.set()
    with pytest.raises(LeaseLostError) as lost:
        await asyncio.wait_for(running, 60)
    assert (lost.value.holder, lost.value.current_holder) == (holder, "b")

    stored = await store.get_session(**key)
    assert stored is not None
    assert [e.author for e in stored.events] == ["user", "banker"]  # the message, the call
    assert [e.id for e in stored.events[1:]] == [e.id for e in seen]
    assert not any(e.get_function_responses() for e in stored.events)
    assert await store.acquire_session_lease(**key, holder="c", ttl=30) == "b"
