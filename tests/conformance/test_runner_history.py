"""The Runner reads only what is new in a session, yet always sees the whole stored history."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from google.genai import types

from cairn import BaseAgent, Event, InvocationContext, Runner
from cairn.sessions import BaseSessionService

APP, USER = "history", "u1"


class HistoryReader(BaseAgent):
    """Records the ids of the events it was given, then says something."""

    seen: list[list[str]] = []

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        self.seen.append([e.id for e in ctx.session.events])
        yield Event(content=types.Content(role="model", parts=[types.Part(text="ok")]))


async def _turn(runner: Runner, text: str = "hi") -> None:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for _ in runner.run_async(user_id=USER, session_id="s", new_message=message):
        pass


async def _stored_ids(store: BaseSessionService) -> list[str]:
    session = await store.get_session(app_name=APP, user_id=USER, session_id="s")
    assert session is not None
    return [e.id for e in session.events]


async def test_every_invocation_sees_the_whole_stored_history(store: BaseSessionService) -> None:
    first = HistoryReader(name="reader", seen=[])
    second = HistoryReader(name="reader", seen=[])
    runner_a = Runner(app_name=APP, agent=first, session_service=store)
    runner_b = Runner(app_name=APP, agent=second, session_service=store)  # "another process"
    await store.create_session(app_name=APP, user_id=USER, session_id="s")

    await _turn(runner_a)
    await _turn(runner_b)
    session = await store.get_session(app_name=APP, user_id=USER, session_id="s")
    assert session is not None
    await store.append_event(session, Event(author="someone-else", state={"x": 1}))
    await _turn(runner_a)
    # A's third look includes B's turn and the direct append, in stored order.
    assert first.seen[-1] == (await _stored_ids(store))[:-1]

    # Delete and recreate the session with the same id: nothing old may show up.
    await store.delete_session(app_name=APP, user_id=USER, session_id="s")
    await store.create_session(app_name=APP, user_id=USER, session_id="s")
    for _ in range(4):
        await _turn(runner_b)  # the new session grows past the old one's length
    await _turn(runner_a)
    assert first.seen[-1] == (await _stored_ids(store))[:-1]
    assert len(first.seen[-1]) == 4 * 2 + 1


class RecordWriter(BaseAgent):
    """Records the events it was given as JSON, then writes one a read cannot give back as
    is: a tuple output (JSON has lists), a ``temp:`` key (never stored)."""

    seen: list[list[str]] = []

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        self.seen.append([e.to_json() for e in ctx.session.events])
        yield Event(
            content=types.Content(role="model", parts=[types.Part(text="ok")]),
            output=(1, "two"),
            state={"temp:scratch": 1, "kept": [1, 2]},
        )


async def test_a_runner_sees_its_own_events_as_the_store_returns_them(
    store: BaseSessionService,
) -> None:
    writer = RecordWriter(name="writer", seen=[])
    runner = Runner(app_name=APP, agent=writer, session_service=store)
    await store.create_session(app_name=APP, user_id=USER, session_id="s")
    message = types.Content(role="user", parts=[types.Part(text="hi")])
    async for event in runner.run_async(user_id=USER, session_id="s", new_message=message):
        if event.author == "writer":
            # The caller keeps what the invocation wrote (temp: key included) and may change
            # its copy; neither reaches what the next turn reads.
            assert event.actions.state_delta["temp:scratch"] == 1
            event.output = "changed by the caller"
            event.actions.state_delta["kept"].append(3)
    await _turn(runner)
    stored = await store.get_session(app_name=APP, user_id=USER, session_id="s")
    assert stored is not None
    assert writer.seen[-1] == [e.to_json() for e in stored.events][:-1]
    written = Event.from_json(writer.seen[-1][1])
    assert written.output == [1, "two"]
    assert written.actions.state_delta == {"kept": [1, 2]}
