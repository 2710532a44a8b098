"""One id rule on every store: app names, user ids and session ids are non-empty strings of at
most 128 characters without control characters or lone surrogates. Anything else is refused by
every method with ``InvalidIdError`` naming the id, and nothing is stored."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from cairn import Event, InvalidIdError
from cairn.sessions import BaseSessionService, Session, SessionLease

APP, USER = "ids", "u1"

BAD_IDS: list[tuple[Any, str]] = [
    ("", "it is empty"),
    ("a\x00b", r"control character \(U\+0000\)"),
    ("a\x1b[31m", r"control character \(U\+001B\)"),
    ("line\nbreak", r"control character \(U\+000A\)"),
    ("c1\x9b", r"control character \(U\+009B\)"),
    ("a\ud800b", r"lone surrogate \(U\+D800\)"),
    ("x" * 129, "it is 129 characters"),
    ("y" * 100_000, "it is 100000 characters"),
    (b"bytes", "it is bytes"),
    (7, "it is int"),
]
GOOD_IDS = ["x" * 128, "ünïcödé 🙂 id", "with space", "a/b:c", "*"]

Call = Callable[[BaseSessionService, str, str, str], Awaitable[Any]]


async def append(store: BaseSessionService, app: str, user: str, session: str) -> Any:
    return await store.append_event(
        Session.model_construct(id=session, app_name=app, user_id=user, state={}, events=[]),
        Event(author="a", state={"k": 1}),
    )


CALLS: dict[str, Call] = {
    "create": lambda s, a, u, i: s.create_session(app_name=a, user_id=u, session_id=i),
    "get": lambda s, a, u, i: s.get_session(app_name=a, user_id=u, session_id=i),
    "delete": lambda s, a, u, i: s.delete_session(app_name=a, user_id=u, session_id=i),
    "initial_state": lambda s, a, u, i: s.get_initial_state(app_name=a, user_id=u, session_id=i),
    "events": lambda s, a, u, i: s.list_events(app_name=a, user_id=u, session_id=i),
    "append": append,
    "import": lambda s, a, u, i: s.import_session(app_name=a, user_id=u, session_id=i, events=[]),
    "fork": lambda s, a, u, i: s.fork_session(
        app_name=APP, user_id=USER, session_id="source", new_session_id=i
    ),
    "acquire_lease": lambda s, a, u, i: s.acquire_session_lease(
        app_name=a, user_id=u, session_id=i, holder="h", ttl=30
    ),
    "release_lease": lambda s, a, u, i: s.release_session_lease(
        app_name=a, user_id=u, session_id=i, holder="h"
    ),
    "list": lambda s, a, u, i: s.list_sessions(app_name=a, user_id=u),
    "list_page": lambda s, a, u, i: s.list_sessions_page(app_name=a, user_id=u),
    "count": lambda s, a, u, i: s.count_sessions(app_name=a, user_id=u),
}
TAKES_SESSION = {"create", "get", "delete", "initial_state", "events", "append", "import"}
TAKES_SESSION |= {"acquire_lease", "release_lease"}


async def test_bad_ids_are_refused_by_every_method_naming_the_id(
    store: BaseSessionService,
) -> None:
    source = await store.create_session(app_name=APP, user_id=USER, session_id="source")
    await store.append_event(source, Event(author="a", state={"n": 1}))
    for name, call in CALLS.items():
        for bad, reason in BAD_IDS:
            positions = [("app name", (bad, USER, "s1")), ("user id", (APP, bad, "s1"))]
            if name in TAKES_SESSION or name == "fork":
                positions.append(("session id", (APP, USER, bad)))
            if name == "fork":
                positions = positions[-1:]
            for which, ids in positions:
                with pytest.raises(InvalidIdError, match=rf"the {which} .* {reason}") as caught:
                    await call(store, *ids)
                assert caught.value.which == which and caught.value.value == bad, name
    assert await store.list_app_names() == [APP]
    listed = await store.list_sessions(app_name=APP, user_id=USER)
    assert [s.id for s in listed.sessions] == ["source"]
    assert listed.sessions[0].revision == 1


async def test_an_empty_or_blank_session_id_is_refused_not_replaced(
    store: BaseSessionService,
) -> None:
    for blank in ("", "   "):
        with pytest.raises(InvalidIdError, match=r"session id '' .* it is empty"):
            await store.create_session(app_name=APP, user_id=USER, session_id=blank)
    assert await store.count_sessions(app_name=APP) == 0
    generated = await store.create_session(app_name=APP, user_id=USER, session_id=None)
    assert len(generated.id) == 36  # only None asks for a generated id
    stripped = await store.create_session(app_name=APP, user_id=USER, session_id="  s2 ")
    assert stripped.id == "s2"  # surrounding blanks are stripped, as ADK does


@pytest.mark.parametrize("good", GOOD_IDS, ids=["128-chars", "unicode", "space", "punct", "star"])
async def test_ids_within_the_rule_work_everywhere(store: BaseSessionService, good: str) -> None:
    session = await store.create_session(
        app_name=good, user_id=good, session_id=good, state={"user:u": 1}
    )
    await store.append_event(session, Event(author="a", state={"k": 1}))
    lease = await store.acquire_session_lease(
        app_name=good, user_id=good, session_id=good, holder="h", ttl=30
    )
    assert isinstance(lease, SessionLease) and lease.session_id == good
    await store.release_session_lease(
        app_name=good, user_id=good, session_id=good, holder="h", generation=lease.generation
    )
    loaded = await store.get_session(app_name=good, user_id=good, session_id=good)
    assert loaded is not None and loaded.state == {"k": 1, "user:u": 1}
    assert (loaded.app_name, loaded.user_id, loaded.id) == (good, good, good)
    page = await store.list_events(app_name=good, user_id=good, session_id=good)
    assert len(page.events) == 1
    assert [s.id for s in (await store.list_sessions(app_name=good, user_id=good)).sessions] == [
        good
    ]
    assert await store.list_app_names() == [good]
    await store.delete_session(app_name=good, user_id=good, session_id=good)
    assert await store.get_session(app_name=good, user_id=good, session_id=good) is None
