"""One test per guarantee of ARCHITECTURE.md that a session store must keep.

Guarantee 9 (resume never re-runs completed work) is a property of the
workflow/agent engine, not of a store; it is tested with the engine.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.genai import types

from cairn import (
    BaseAgent,
    Context,
    DuplicateEventError,
    Event,
    EventActions,
    EventCompaction,
    InvalidEventError,
    InvalidStateValueError,
    InvocationContext,
    MultitaskStrategy,
    Runner,
    SessionBusyError,
    StaleSessionError,
)
from cairn.sessions import BaseSessionService, GetSessionConfig, Session

APP, USER = "conformance", "u1"


def text(value: str, role: str = "model") -> types.Content:
    return types.Content(role=role, parts=[types.Part(text=value)])


async def new_session(store: BaseSessionService, session_id: str = "s1", **state: Any) -> Session:
    return await store.create_session(
        app_name=APP, user_id=USER, session_id=session_id, state=state or None
    )


async def reload(store: BaseSessionService, session: Session) -> Session:
    loaded = await store.get_session(
        app_name=session.app_name, user_id=session.user_id, session_id=session.id
    )
    assert loaded is not None
    return loaded


class ScriptedAgent(BaseAgent):
    """Yields a fixed list of events."""

    script: list[Event]

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        for event in self.script:
            yield event


# -- 1. committed before seen ------------------------------------------------------------
async def test_committed_before_seen(store: BaseSessionService) -> None:
    await new_session(store)
    agent = ScriptedAgent(
        name="scripted",
        script=[Event(content=text("one")), Event(content=text("two"), state={"k": 1})],
    )
    runner = Runner(app_name=APP, agent=agent, session_service=store)
    async for event in runner.run_async(
        user_id=USER, session_id="s1", new_message=text("go", "user")
    ):
        stored = await store.get_session(app_name=APP, user_id=USER, session_id="s1")
        assert stored is not None
        assert event.id in [e.id for e in stored.events], "yielded before it was committed"


async def test_committed_before_seen_failed_append_is_never_yielded(
    store: BaseSessionService,
) -> None:
    await new_session(store)
    good = Event(content=text("fine"))
    bad = Event(content=text("bad"), state={"when": object()})
    after = Event(content=text("never produced"))
    agent = ScriptedAgent(name="scripted", script=[good, bad, after])
    runner = Runner(app_name=APP, agent=agent, session_service=store)
    seen: list[str] = []
    with pytest.raises(InvalidStateValueError, match="'when'"):
        async for event in runner.run_async(
            user_id=USER, session_id="s1", new_message=text("go", "user")
        ):
            seen.append(event.id)
    assert seen == [good.id]
    stored = await store.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert stored is not None
    assert [e.id for e in stored.events][1:] == [good.id]  # user event, then only `good`
    assert "when" not in stored.state


# -- 2. the log is the truth -----------------------------------------------------------------
async def test_log_is_the_truth(store: BaseSessionService) -> None:
    initial = {"topic": "weather", "user:lang": "en", "app:region": "eu", "temp:x": 1}
    s1 = await store.create_session(app_name=APP, user_id=USER, session_id="s1", state=initial)
    s2 = await new_session(store, "s2")
    writes = [
        (s1, {"topic": "rain", "user:unit": "C", "n": 1}),
        (s2, {"user:unit": "F", "app:region": "us", "other": True}),
        (s1, {"n": 2, "nested": {"a": [1, 2]}, "temp:t": "gone"}),
        (s2, {"user:lang": "de"}),
    ]
    for session, delta in writes:
        await store.append_event(session, Event(author="agent", state=delta))

    # Fold the log: initial state, then each stored event's delta in commit order.
    async def fold(session_id: str) -> dict[str, Any]:
        state = dict(
            await store.get_initial_state(app_name=APP, user_id=USER, session_id=session_id) or {}
        )
        for event in (await reload(store, await_session(session_id))).events:
            state.update(event.actions.state_delta)
        return state

    def await_session(session_id: str) -> Session:
        return Session(id=session_id, app_name=APP, user_id=USER)

    s1_fold, s2_fold = await fold("s1"), await fold("s2")
    # Shared scopes fold over every session in commit order: s1's initial, then the writes.
    shared: dict[str, Any] = {"user:lang": "en", "app:region": "eu"}
    for _, delta in writes:
        shared.update({k: v for k, v in delta.items() if k.startswith(("user:", "app:"))})
    s1_state = (await reload(store, s1)).state
    s2_state = (await reload(store, s2)).state
    assert s1_state == {**{k: v for k, v in s1_fold.items() if ":" not in k}, **shared}
    assert s2_state == {**{k: v for k, v in s2_fold.items() if ":" not in k}, **shared}
    assert s1_state == {
        "topic": "rain",
        "n": 2,
        "nested": {"a": [1, 2]},
        "user:lang": "de",
        "user:unit": "F",
        "app:region": "us",
    }
    assert await store.get_initial_state(app_name=APP, user_id=USER, session_id="s1") == {
        "topic": "weather",
        "user:lang": "en",
        "app:region": "eu",
    }


# -- 3. temp: never persists -----------------------------------------------------------------
async def test_temp_never_persists(store: BaseSessionService) -> None:
    session = await new_session(store, **{"temp:from_create": 1, "kept": 1})
    assert "temp:from_create" not in session.state
    event = Event(author="agent", state={"temp:scratch": "x", "kept": 2})
    await store.append_event(session, event)
    # The caller keeps seeing what the invocation wrote ...
    assert event.actions.state_delta == {"temp:scratch": "x", "kept": 2}
    assert session.state["temp:scratch"] == "x"
    # ... but nothing of it is stored: not in state, not in the event read back.
    loaded = await reload(store, session)
    assert loaded.state == {"kept": 2}
    assert loaded.events[0].actions.state_delta == {"kept": 2}
    assert await store.get_initial_state(app_name=APP, user_id=USER, session_id="s1") == {"kept": 1}


class TempWriter(BaseAgent):
    seen_at_start: list[Any] = []
    seen_later: list[Any] = []

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        step = Context(ctx)
        self.seen_at_start.append(step.state.get("temp:token"))
        step.state["temp:token"] = "t-123"
        yield Event(content=text("wrote temp"), actions=step.actions)
        self.seen_later.append(Context(ctx).state.get("temp:token"))
        yield Event(content=text("done"))


async def test_temp_never_persists_but_is_visible_for_the_whole_invocation(
    store: BaseSessionService,
) -> None:
    await new_session(store)
    agent = TempWriter(name="writer", seen_at_start=[], seen_later=[])
    runner = Runner(app_name=APP, agent=agent, session_service=store)
    yielded = [
        e
        async for e in runner.run_async(
            user_id=USER, session_id="s1", new_message=text("go", "user")
        )
    ]
    assert agent.seen_later == ["t-123"]
    assert yielded[0].actions.state_delta == {"temp:token": "t-123"}
    loaded = await store.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert loaded is not None
    assert "temp:token" not in loaded.state
    assert all("temp:token" not in e.actions.state_delta for e in loaded.events)
    # A later invocation starts without it.
    async for _ in runner.run_async(user_id=USER, session_id="s1", new_message=text("again")):
        pass
    assert agent.seen_at_start == [None, None]
    loaded = await store.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert loaded is not None and "temp:token" not in loaded.state


# -- 4. partial events never persist ---------------------------------------------------------
async def test_partial_events_never_persist(store: BaseSessionService) -> None:
    session = await new_session(store)
    chunk = Event(author="agent", content=text("Hel"), partial=True, state={"leak": 1})
    returned = await store.append_event(session, chunk)
    assert returned is chunk
    assert session.events == [] and "leak" not in session.state and session.revision == 0
    loaded = await reload(store, session)
    assert loaded.events == [] and loaded.state == {} and loaded.revision == 0

    agent = ScriptedAgent(
        name="streamer",
        script=[
            Event(content=text("Hel"), partial=True, state={"leak": 1}),
            Event(content=text("Hello")),
        ],
    )
    runner = Runner(app_name=APP, agent=agent, session_service=store)
    yielded = [
        e
        async for e in runner.run_async(
            user_id=USER, session_id="s1", new_message=text("hi", "user")
        )
    ]
    assert [e.partial for e in yielded] == [True, None]
    loaded = await reload(store, session)
    assert [e.id for e in loaded.events][1:] == [yielded[1].id]
    assert "leak" not in loaded.state


# -- 5. compaction events persist -----------------------------------------------------------
async def test_compaction_events_persist(store: BaseSessionService) -> None:
    session = await new_session(store)
    compaction = Event(
        author="user",
        actions=EventActions(compaction=EventCompaction(start_timestamp=1.0, end_timestamp=2.5)),
    )
    assert compaction.content is None and not compaction.is_final_response()
    await store.append_event(session, compaction)
    loaded = await reload(store, session)
    assert loaded.events == [compaction]
    assert loaded.events[0].actions.compaction == EventCompaction(
        start_timestamp=1.0, end_timestamp=2.5
    )


# -- 6. atomic append --------------------------------------------------------------------------
async def test_atomic_append(store: BaseSessionService) -> None:
    session = await new_session(store, topic="a")
    await store.append_event(session, Event(author="agent", state={"user:u": 1, "app:a": 1}))
    before = session.model_copy(deep=True)
    stored_before = await reload(store, session)

    bad_state = Event(
        author="agent",
        state={"topic": "b", "user:u": 2, "app:a": 2, "bad": {"deep": [1, {2, 3}]}},
    )
    with pytest.raises(InvalidStateValueError, match=r"'bad'.*\['deep'\]\[1\]"):
        await store.append_event(session, bad_state)
    bad_output = Event(author="agent", state={"topic": "c", "user:u": 3}, output=object())
    with pytest.raises(InvalidEventError, match=bad_output.id):
        await store.append_event(session, bad_output)

    assert session == before, "the caller's Session changed although nothing was stored"
    assert await reload(store, session) == stored_before
    other = await new_session(store, "s2")
    assert other.state["user:u"] == 1 and other.state["app:a"] == 1


# -- 7. no silent lost update -----------------------------------------------------------------
async def test_no_silent_lost_update_stale_holder_is_refused(store: BaseSessionService) -> None:
    await new_session(store)
    first = await store.get_session(app_name=APP, user_id=USER, session_id="s1")
    second = await store.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert first is not None and second is not None
    await store.append_event(first, Event(author="a", state={"owner": "first"}))
    second_before = second.model_copy(deep=True)
    with pytest.raises(StaleSessionError) as raised:
        await store.append_event(second, Event(author="b", state={"owner": "second"}))
    assert raised.value.held_revision == 0 and raised.value.stored_revision == 1
    assert "'s1'" in str(raised.value) and USER in str(raised.value) and APP in str(raised.value)
    assert second == second_before
    loaded = await reload(store, first)
    assert loaded.state["owner"] == "first" and len(loaded.events) == 1
    # After reloading, the second writer can go on.
    await store.append_event(loaded, Event(author="b", state={"owner": "second"}))
    assert (await reload(store, first)).state["owner"] == "second"


async def test_no_silent_lost_update_shared_keys_from_concurrent_sessions(
    store: BaseSessionService,
) -> None:
    sessions = [await new_session(store, f"s{i}") for i in range(8)]

    async def writer(index: int, session: Session) -> None:
        for step in range(10):
            delta = {f"user:k{index}_{step}": step, f"app:k{index}_{step}": step}
            await store.append_event(session, Event(author="w", state=delta))
            await asyncio.sleep(0)

    await asyncio.gather(*(writer(i, s) for i, s in enumerate(sessions)))
    state = (await reload(store, sessions[0])).state
    for index in range(8):
        for step in range(10):
            assert state[f"user:k{index}_{step}"] == step
            assert state[f"app:k{index}_{step}"] == step


class SlowAgent(BaseAgent):
    pause: float = 0.05

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        for step in range(3):
            await asyncio.sleep(self.pause)
            yield Event(content=text(f"step {step}"))


async def _drain(runner: Runner, message: str) -> list[Event]:
    return [
        e
        async for e in runner.run_async(
            user_id=USER, session_id="s1", new_message=text(message, "user")
        )
    ]


async def test_no_silent_lost_update_one_invocation_per_session(
    store: BaseSessionService,
) -> None:
    await new_session(store)
    busy = Runner(
        app_name=APP,
        agent=SlowAgent(name="slow"),
        session_service=store,
        multitask_strategy=MultitaskStrategy.REJECT,
    )
    first = asyncio.create_task(_drain(busy, "first"))
    await asyncio.sleep(0.01)
    with pytest.raises(SessionBusyError, match="'s1'"):
        await _drain(busy, "second")
    await first

    patient = Runner(
        app_name=APP, agent=SlowAgent(name="slow"), session_service=store, session_busy_timeout=5
    )
    results = await asyncio.gather(_drain(patient, "a"), _drain(patient, "b"))
    assert all(len(r) == 3 for r in results)
    loaded = await store.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert loaded is not None
    # Each invocation's events are contiguous: never interleaved.
    order = [e.invocation_id for e in loaded.events]
    runs = [order[0]] + [b for a, b in itertools.pairwise(order) if a != b]
    assert len(runs) == len(set(runs)) == 3


# -- 8. bounded work ----------------------------------------------------------------------------
async def test_bounded_work_windows_are_applied_by_the_store(store: BaseSessionService) -> None:
    session = await new_session(store)
    timestamps = [10.0, 11.0, 12.0, 12.0, 13.0, 9.0, 14.0]  # one out of order
    events = [
        Event(author="a", timestamp=ts, content=text(str(i))) for i, ts in enumerate(timestamps)
    ]
    for event in events:
        await store.append_event(session, event)

    async def ids(**config: Any) -> list[str]:
        loaded = await store.get_session(
            app_name=APP, user_id=USER, session_id="s1", config=GetSessionConfig(**config)
        )
        assert loaded is not None
        return [e.id for e in loaded.events]

    every = [e.id for e in events]
    assert await ids() == every  # append order, not timestamp order
    assert await ids(num_recent_events=3) == every[-3:]
    assert await ids(num_recent_events=0) == []
    assert await ids(num_recent_events=100) == every
    assert await ids(after_timestamp=12.0) == [every[i] for i in (2, 3, 4, 6)]  # inclusive
    assert await ids(after_timestamp=0.0) == every  # 0.0 is a filter like any other
    assert await ids(after_timestamp=0.0, num_recent_events=2) == every[-2:]
    assert await ids(after_timestamp=12.0, num_recent_events=3) == [every[i] for i in (3, 4, 6)]
    assert await ids(after_timestamp=99.0) == []
    with pytest.raises(ValueError, match="num_recent_events"):
        GetSessionConfig(num_recent_events=-1)
    listed = await store.list_sessions(app_name=APP, user_id=USER)
    assert [s.id for s in listed.sessions] == ["s1"] and listed.sessions[0].events == []


# -- 10. lossless JSON ------------------------------------------------------------------------
async def test_lossless_json(store: BaseSessionService) -> None:
    session = await new_session(store)
    rich = Event(
        author="agent",
        invocation_id="e-1",
        branch="root.child",
        content=types.Content(
            role="model",
            parts=[
                types.Part(text="calling"),
                types.Part(
                    function_call=types.FunctionCall(
                        id="fc-1", name="pay", args={"amount": 12.5, "meta": {}, "tags": []}
                    )
                ),
            ],
        ),
        long_running_tool_ids={"fc-1"},
        custom_metadata={},
        output={"value": None, "items": [1, 2.0, "x", True]},
        node_path="wf@1/pay@1",
        actions=EventActions(
            state_delta={"none": None, "empty": {}, "list": []},
            agent_state={},
            route=["a", 1, True],
        ),
    )
    plain = Event(author="agent", content=text("plain"))
    for event in (rich, plain):
        await store.append_event(session, event)
    loaded = await reload(store, session)
    assert loaded.events == [rich, plain]
    assert [e.to_json() for e in loaded.events] == [rich.to_json(), plain.to_json()]
    assert loaded.events[1].custom_metadata is None and loaded.events[0].custom_metadata == {}
    assert loaded.events[1].actions.agent_state is None
    assert loaded.events[0].actions.agent_state == {}


async def test_lossless_json_reappending_the_same_event_is_a_no_op(
    store: BaseSessionService,
) -> None:
    session = await new_session(store)
    event = Event(author="agent", state={"n": 1})
    await store.append_event(session, event)
    stale_copy = await reload(store, session)
    await store.append_event(session, event)  # e.g. a retry after a lost acknowledgement
    assert len((await reload(store, session)).events) == 1
    changed = event.model_copy(update={"author": "someone-else"})
    with pytest.raises(DuplicateEventError, match=event.id):
        await store.append_event(stale_copy, changed)
    assert (await reload(store, session)).revision == 1
