"""Rewind and fork on every store: state and artifacts come back, the log keeps everything."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.genai import types

from cairn import BaseAgent, Event, InvocationContext, Runner
from cairn.agents.context import Context
from cairn.artifacts import BaseArtifactService, InMemoryArtifactService
from cairn.artifacts.session_store_artifact_service import SessionStoreArtifactService
from cairn.errors import (
    EventNotFoundError,
    InvalidEventError,
    InvocationNotFoundError,
    SessionAlreadyExistsError,
)
from cairn.events import EventActions
from cairn.events.rewind import live_events, rewound_event_ids
from cairn.sessions import BaseSessionService, InMemorySessionService
from cairn.sessions.fold import session_state_of
from cairn.sessions.scopes import split_by_scope
from cairn.sessions.verify import verify_session, verify_store

APP, USER = "rewind", "u1"


class Writer(BaseAgent):
    """Applies the message: ``k=v`` sets state key k, ``-k`` marks nothing, ``file:f=t`` saves
    artifact f; records what it saw of the history."""

    seen: list[list[str]] = []

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        self.seen.append([e.id for e in ctx.session.events])
        step = Context(ctx)
        text = ctx.user_content.parts[0].text if ctx.user_content and ctx.user_content.parts else ""
        for item in (text or "").split():
            name, _, value = item.partition("=")
            if name.startswith("file:"):
                await step.save_artifact(name[5:], types.Part(text=value))
            else:
                step.state[name] = value
        yield Event(
            content=types.Content(role="model", parts=[types.Part(text=f"did {text}")]),
            actions=step.actions,
        )


def _artifacts_for(store: BaseSessionService) -> BaseArtifactService:
    if isinstance(store, InMemorySessionService):
        return InMemoryArtifactService()
    return SessionStoreArtifactService(store)  # type: ignore[arg-type]


async def _turn(runner: Runner, text: str, session_id: str = "s") -> str:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    invocation = ""
    async for event in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
        invocation = event.invocation_id
    return invocation


async def _session_scope(store: BaseSessionService, session_id: str = "s") -> dict[str, Any]:
    session = await store.get_session(app_name=APP, user_id=USER, session_id=session_id)
    assert session is not None
    return split_by_scope(session.state).session


async def _folds(store: BaseSessionService, session_id: str = "s") -> bool:
    """The session's stored state equals the fold of its log over its initial state."""
    session = await store.get_session(app_name=APP, user_id=USER, session_id=session_id)
    initial = await store.get_initial_state(app_name=APP, user_id=USER, session_id=session_id)
    assert session is not None and initial is not None
    return session_state_of(initial, session.events) == split_by_scope(session.state).session


async def test_removed_state_keys_delete_in_every_scope(store: BaseSessionService) -> None:
    session = await store.create_session(
        app_name=APP, user_id=USER, session_id="s", state={"a": 1, "user:b": 2, "app:c": 3, "d": 4}
    )
    removal = Event(
        author="x", actions=EventActions(removed_state_keys=["a", "user:b", "app:c", "temp:t"])
    )
    await store.append_event(session, removal)
    assert session.state == {"d": 4}
    reread = await store.get_session(app_name=APP, user_id=USER, session_id="s")
    assert reread is not None and reread.state == {"d": 4}
    stored = reread.events[-1].actions.removed_state_keys
    assert stored == ["a", "user:b", "app:c"]  # temp: keys never reach the store
    other = await store.create_session(app_name=APP, user_id=USER, session_id="t")
    assert other.state == {}  # the shared keys are gone for every session
    assert await _folds(store)

    both = Event(author="x", actions=EventActions(state_delta={"d": 5}, removed_state_keys=["d"]))
    with pytest.raises(InvalidEventError, match=r"both sets and removes .*'d'"):
        await store.append_event(reread, both)
    again = await store.get_session(app_name=APP, user_id=USER, session_id="s")
    assert again is not None and again.state == {"d": 4} and len(again.events) == 1


async def test_rewind_restores_state_and_artifacts_and_keeps_the_log(
    store: BaseSessionService,
) -> None:
    artifacts = _artifacts_for(store)
    agent = Writer(name="writer", seen=[])
    runner = Runner(app_name=APP, agent=agent, session_service=store, artifact_service=artifacts)
    await store.create_session(
        app_name=APP, user_id=USER, session_id="s", state={"kept": "initial", "user:lang": "en"}
    )
    await _turn(runner, "color=red file:notes.txt=one")
    second = await _turn(runner, "color=blue size=big user:lang=fr file:notes.txt=two file:b.txt=x")
    await _turn(runner, "kept=changed shape=round")
    before_rewind = await store.get_session(app_name=APP, user_id=USER, session_id="s")
    assert before_rewind is not None

    rewind = await runner.rewind_async(
        user_id=USER, session_id="s", rewind_before_invocation_id=second
    )

    assert rewind.actions.rewind_before_invocation_id == second
    assert await _session_scope(store) == {"kept": "initial", "color": "red"}
    session = await store.get_session(app_name=APP, user_id=USER, session_id="s")
    assert session is not None
    assert session.state["user:lang"] == "fr"  # shared with the user's other sessions
    # Nothing is deleted from the log; the rewound events are marked by the rewind.
    assert [e.id for e in session.events] == [e.id for e in before_rewind.events] + [rewind.id]
    taken = rewound_event_ids(session.events)
    assert taken == {e.id for e in before_rewind.events[2:]}
    assert [e.id for e in live_events(session.events)] == [e.id for e in before_rewind.events[:2]]
    owner = {"app_name": APP, "user_id": USER, "session_id": "s"}
    notes = await artifacts.load_artifact(**owner, filename="notes.txt")
    assert notes is not None and notes.text == "one"
    assert await artifacts.load_artifact(**owner, filename="b.txt") is None
    assert rewind.actions.artifact_delta == {"notes.txt": 2}  # restored as a new version
    assert await _folds(store)

    # The next turn sees only the live history, and appends after the rewind.
    third = await _turn(runner, "color=green")
    assert agent.seen[-1][:2] == [e.id for e in before_rewind.events[:2]]
    assert len(agent.seen[-1]) == 3  # two live events and this turn's message
    assert await _session_scope(store) == {"kept": "initial", "color": "green"}
    assert await _folds(store)

    # A rewound invocation cannot be rewound (or resumed) again; a later one can.
    with pytest.raises(InvocationNotFoundError):
        await runner.rewind_async(user_id=USER, session_id="s", rewind_before_invocation_id=second)
    with pytest.raises(InvocationNotFoundError):
        await runner.rewind_async(user_id=USER, session_id="s", rewind_before_invocation_id="zz")
    await runner.rewind_async(user_id=USER, session_id="s", rewind_before_invocation_id=third)
    assert await _session_scope(store) == {"kept": "initial", "color": "red"}
    assert await _folds(store)


async def test_rewinding_the_first_invocation_keeps_only_the_initial_state(
    store: BaseSessionService,
) -> None:
    runner = Runner(app_name=APP, agent=Writer(name="writer", seen=[]), session_service=store)
    await store.create_session(app_name=APP, user_id=USER, session_id="s", state={"k": "v"})
    first = await _turn(runner, "k=w x=1")
    await _turn(runner, "y=2")
    await runner.rewind_async(user_id=USER, session_id="s", rewind_before_invocation_id=first)
    assert await _session_scope(store) == {"k": "v"}
    # A second runner (another process) reads the same live history.
    fresh = Writer(name="writer", seen=[])
    other = Runner(app_name=APP, agent=fresh, session_service=store)
    await _turn(other, "z=3")
    assert len(fresh.seen[-1]) == 1
    assert await _session_scope(store) == {"k": "v", "z": "3"}
    assert await _folds(store)


async def test_fork_copies_a_prefix_and_evolves_independently(store: BaseSessionService) -> None:
    runner = Runner(app_name=APP, agent=Writer(name="writer", seen=[]), session_service=store)
    await store.create_session(
        app_name=APP, user_id=USER, session_id="s", state={"base": 0, "user:u": "shared"}
    )
    await _turn(runner, "step=1")
    await _turn(runner, "step=2 extra=yes")
    source = await store.get_session(app_name=APP, user_id=USER, session_id="s")
    assert source is not None
    cut = source.events[1]  # the reply of turn 1

    fork = await store.fork_session(
        app_name=APP, user_id=USER, session_id="s", up_to_event_id=cut.id, new_session_id="f"
    )

    assert fork.id == "f"
    assert [e.id for e in fork.events] == [e.id for e in source.events[:2]]
    assert fork.events == source.events[:2]
    assert split_by_scope(fork.state).session == {"base": 0, "step": "1"}
    assert fork.state["user:u"] == "shared"
    assert await _folds(store, "f")

    await _turn(runner, "step=fork", session_id="f")
    await _turn(runner, "step=3")
    assert await _session_scope(store, "f") == {"base": 0, "step": "fork"}
    assert await _session_scope(store, "s") == {"base": 0, "step": "3", "extra": "yes"}
    assert await _folds(store, "f") and await _folds(store, "s")

    whole = await store.fork_session(app_name=APP, user_id=USER, session_id="s")
    assert len(whole.events) == 6 and whole.id not in {"s", "f"}
    with pytest.raises(SessionAlreadyExistsError):
        await store.fork_session(app_name=APP, user_id=USER, session_id="s", new_session_id="f")
    with pytest.raises(EventNotFoundError, match="'nope'"):
        await store.fork_session(app_name=APP, user_id=USER, session_id="s", up_to_event_id="nope")


async def test_a_fork_brings_back_a_rewound_branch(store: BaseSessionService) -> None:
    runner = Runner(app_name=APP, agent=Writer(name="writer", seen=[]), session_service=store)
    await store.create_session(app_name=APP, user_id=USER, session_id="s")
    await _turn(runner, "a=1")
    second = await _turn(runner, "a=2 b=2")
    before = await store.get_session(app_name=APP, user_id=USER, session_id="s")
    assert before is not None
    await runner.rewind_async(user_id=USER, session_id="s", rewind_before_invocation_id=second)
    assert await _session_scope(store) == {"a": "1"}

    fork = await store.fork_session(
        app_name=APP, user_id=USER, session_id="s", up_to_event_id=before.events[-1].id
    )
    assert split_by_scope(fork.state).session == {"a": "2", "b": "2"}
    assert rewound_event_ids(fork.events) == set()
    assert await _folds(store, fork.id)


async def test_verify_finds_every_store_consistent_after_rewinds_and_forks(
    store: BaseSessionService,
) -> None:
    runner = Runner(app_name=APP, agent=Writer(name="writer", seen=[]), session_service=store)
    await store.create_session(
        app_name=APP, user_id=USER, session_id="s", state={"app:mode": "a", "user:x": 0, "k": 1}
    )
    await store.create_session(app_name=APP, user_id="u2", session_id="s", state={"user:x": 9})
    await _turn(runner, "app:mode=b user:x=1 k=2")
    second = await _turn(runner, "user:x=2 k=3 new=1")
    await runner.rewind_async(user_id=USER, session_id="s", rewind_before_invocation_id=second)
    await store.fork_session(app_name=APP, user_id=USER, session_id="s", new_session_id="f")
    await _turn(runner, "k=fork", session_id="f")

    report = await verify_store(store)

    assert report.ok, [d.describe() for d in report.differences]
    assert (report.sessions_checked, report.users_checked, report.apps_checked) == (3, 2, 1)
    assert await verify_session(store, app_name=APP, user_id=USER, session_id="f") == []
    assert await store.list_app_names() == [APP]
