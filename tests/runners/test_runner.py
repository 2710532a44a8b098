"""The Runner: one invocation per call, every event committed before it is seen."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.genai import types

from cairn import (
    App,
    BaseAgent,
    BasePlugin,
    CallbackContext,
    Context,
    Event,
    GetSessionConfig,
    InMemoryRunner,
    InMemorySessionService,
    InvocationContext,
    InvocationNotFoundError,
    MultitaskStrategy,
    ResumabilityConfig,
    RunConfig,
    Runner,
    SessionBusyError,
    SessionNotFoundError,
)


def text(value: str, role: str = "user") -> types.Content:
    return types.Content(role=role, parts=[types.Part(text=value)])


def texts(events: list[Event]) -> list[str]:
    return [p.text or "" for e in events if e.content and e.content.parts for p in e.content.parts]


class Echo(BaseAgent):
    """Replies with the user's text; counts its invocations in session state."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        step = Context(ctx)
        step.state["turns"] = step.state.get("turns", 0) + 1
        said = ctx.user_content.parts[0].text if ctx.user_content and ctx.user_content.parts else ""
        yield Event(content=text(f"echo: {said}", "model"), actions=step.actions)


async def collect(runner: Runner, **kwargs: Any) -> list[Event]:
    return [e async for e in runner.run_async(**kwargs)]


async def test_user_event_first_then_agent_events_with_defaults_filled() -> None:
    runner = InMemoryRunner(agent=Echo(name="echo"), app_name="demo")
    await runner.session_service.create_session(app_name="demo", user_id="u", session_id="s")
    events = await collect(
        runner, user_id="u", session_id="s", new_message=text("hi", role="model")
    )
    assert texts(events) == ["echo: hi"]
    reply = events[0]
    assert reply.author == "echo" and reply.invocation_id.startswith("e-")
    session = await runner.session_service.get_session(app_name="demo", user_id="u", session_id="s")
    assert session is not None
    user_event, stored_reply = session.events
    assert user_event.author == "user" and user_event.content is not None
    assert user_event.content.role == "user", "new_message is always stored with role user"
    assert user_event.invocation_id == reply.invocation_id
    assert stored_reply == reply and session.state == {"turns": 1}


async def test_yield_user_message_and_state_delta() -> None:
    runner = InMemoryRunner(agent=Echo(name="echo"), app_name="demo")
    await runner.session_service.create_session(app_name="demo", user_id="u", session_id="s")
    events = await collect(
        runner,
        user_id="u",
        session_id="s",
        new_message=text("hi"),
        state_delta={"user:plan": "pro"},
        yield_user_message=True,
    )
    assert [e.author for e in events] == ["user", "echo"]
    assert events[0].actions.state_delta == {"user:plan": "pro"}
    session = await runner.session_service.get_session(app_name="demo", user_id="u", session_id="s")
    assert session is not None and session.state == {"user:plan": "pro", "turns": 1}


async def test_missing_session_is_an_error_unless_auto_created() -> None:
    service = InMemorySessionService()
    strict = Runner(app_name="demo", agent=Echo(name="echo"), session_service=service)
    with pytest.raises(SessionNotFoundError, match=r"'nope'.*'u'.*'demo'"):
        await collect(strict, user_id="u", session_id="nope", new_message=text("hi"))
    lenient = Runner(
        app_name="demo", agent=Echo(name="echo"), session_service=service, auto_create_session=True
    )
    events = await collect(lenient, user_id="u", session_id="nope", new_message=text("hi"))
    assert texts(events) == ["echo: hi"]
    assert await service.get_session(app_name="demo", user_id="u", session_id="nope") is not None


async def test_continue_an_invocation_by_id() -> None:
    runner = InMemoryRunner(agent=Echo(name="echo"), app_name="demo")
    await runner.session_service.create_session(app_name="demo", user_id="u", session_id="s")
    first = await collect(runner, user_id="u", session_id="s", new_message=text("hi"))
    invocation_id = first[0].invocation_id
    again = await collect(
        runner, user_id="u", session_id="s", invocation_id=invocation_id, state_delta={"k": 1}
    )
    assert [e.invocation_id for e in again] == [invocation_id]
    session = await runner.session_service.get_session(app_name="demo", user_id="u", session_id="s")
    assert session is not None and session.state == {"turns": 2, "k": 1}
    with pytest.raises(InvocationNotFoundError, match="'e-unknown'"):
        await collect(runner, user_id="u", session_id="s", invocation_id="e-unknown")
    with pytest.raises(ValueError, match="new_message"):
        await collect(runner, user_id="u", session_id="s")


def test_sync_run_streams_events_and_commits_them() -> None:
    runner = InMemoryRunner(agent=Echo(name="echo"), app_name="demo")
    asyncio.run(runner.session_service.create_session(app_name="demo", user_id="u", session_id="s"))
    events = list(runner.run(user_id="u", session_id="s", new_message=text("sync")))
    assert texts(events) == ["echo: sync"]
    session = asyncio.run(
        runner.session_service.get_session(app_name="demo", user_id="u", session_id="s")
    )
    assert session is not None and [e.id for e in session.events][1:] == [events[0].id]


def test_sync_run_raises_the_invocation_error() -> None:
    runner = InMemoryRunner(agent=Echo(name="echo"), app_name="demo")
    with pytest.raises(SessionNotFoundError):
        list(runner.run(user_id="u", session_id="missing", new_message=text("x")))


class Counter(BaseAgent):
    produced: list[int] = []

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        for i in range(100):
            self.produced.append(i)
            yield Event(content=text(str(i), "model"))


def test_sync_run_advances_only_as_the_caller_consumes() -> None:
    agent = Counter(name="counter", produced=[])
    runner = InMemoryRunner(agent=agent, app_name="demo")
    asyncio.run(runner.session_service.create_session(app_name="demo", user_id="u", session_id="s"))
    events = runner.run(user_id="u", session_id="s", new_message=text("go"))
    taken = [next(events) for _ in range(3)]
    assert texts(taken) == ["0", "1", "2"]
    assert len(agent.produced) <= 4
    events.close()  # stops the invocation
    assert len(agent.produced) <= 4
    session = asyncio.run(
        runner.session_service.get_session(app_name="demo", user_id="u", session_id="s")
    )
    assert session is not None and len(session.events) <= 1 + 4


def test_runner_needs_exactly_one_of_app_or_agent() -> None:
    service = InMemorySessionService()
    with pytest.raises(ValueError, match="exactly one"):
        Runner(session_service=service)
    with pytest.raises(ValueError, match="app_name"):
        Runner(agent=Echo(name="e"), session_service=service)
    app = App(name="demo", root_agent=Echo(name="e"), resumability_config=ResumabilityConfig())
    with pytest.raises(ValueError, match="differs"):
        Runner(app=app, app_name="other", session_service=service)
    assert Runner(app=app, session_service=service).app_name == "demo"
    assert InMemoryRunner(Echo(name="e")).app_name == "InMemoryRunner"


def test_app_name_and_agent_name_are_validated() -> None:
    with pytest.raises(ValueError, match="must start with a letter"):
        App(name="1weather", root_agent=Echo(name="a"))
    with pytest.raises(ValueError, match="reserved"):
        App(name="user", root_agent=Echo(name="a"))
    with pytest.raises(ValueError, match="identifier"):
        Echo(name="has space")
    with pytest.raises(ValueError, match="reserved"):
        Echo(name="user")
    with pytest.raises(ValueError, match="max_llm_calls should be less than"):
        RunConfig(max_llm_calls=sys.maxsize)


# -- plugins and callbacks -------------------------------------------------------------------
class Recorder(BasePlugin):
    def __init__(self, name: str, log: list[str]) -> None:
        super().__init__(name)
        self.log = log
        self.closed = False

    async def on_user_message_callback(self, *, invocation_context, user_message):  # type: ignore[no-untyped-def]
        self.log.append(f"{self.name}:user_message")
        return None

    async def before_run_callback(self, *, invocation_context):  # type: ignore[no-untyped-def]
        self.log.append(f"{self.name}:before_run")
        return None

    async def on_event_callback(self, *, invocation_context, event):  # type: ignore[no-untyped-def]
        self.log.append(f"{self.name}:event")
        return None

    async def after_run_callback(self, *, invocation_context):  # type: ignore[no-untyped-def]
        self.log.append(f"{self.name}:after_run")

    async def before_agent_callback(self, *, agent, callback_context):  # type: ignore[no-untyped-def]
        self.log.append(f"{self.name}:before_agent:{agent.name}")
        return None

    async def after_agent_callback(self, *, agent, callback_context):  # type: ignore[no-untyped-def]
        self.log.append(f"{self.name}:after_agent:{agent.name}")
        return None

    async def close(self) -> None:
        self.closed = True


async def test_plugin_hooks_run_in_order() -> None:
    log: list[str] = []
    first, second = Recorder("first", log), Recorder("second", log)
    app = App(name="demo", root_agent=Echo(name="echo"), plugins=[first])
    async with Runner(
        app=app,
        plugins=[second],
        session_service=InMemorySessionService(),
        auto_create_session=True,
    ) as runner:
        await collect(runner, user_id="u", session_id="s", new_message=text("hi"))
    assert log == [
        "first:user_message",
        "second:user_message",
        "first:before_run",
        "second:before_run",
        "first:before_agent:echo",
        "second:before_agent:echo",
        "first:event",
        "second:event",
        "first:after_agent:echo",
        "second:after_agent:echo",
        "first:after_run",
        "second:after_run",
    ]
    assert first.closed and second.closed


class Rewriter(BasePlugin):
    async def on_user_message_callback(self, *, invocation_context, user_message):  # type: ignore[no-untyped-def]
        return text("rewritten")

    async def on_event_callback(self, *, invocation_context, event):  # type: ignore[no-untyped-def]
        return event.model_copy(update={"custom_metadata": {"seen_by": self.name}})


async def test_plugins_can_replace_the_message_and_events_before_they_are_stored() -> None:
    runner = Runner(
        app_name="demo",
        agent=Echo(name="echo"),
        plugins=[Rewriter("rw")],
        session_service=InMemorySessionService(),
        auto_create_session=True,
    )
    events = await collect(runner, user_id="u", session_id="s", new_message=text("original"))
    assert texts(events) == ["echo: rewritten"]
    assert events[0].custom_metadata == {"seen_by": "rw"}
    session = await runner.session_service.get_session(app_name="demo", user_id="u", session_id="s")
    assert session is not None and session.events[-1].custom_metadata == {"seen_by": "rw"}
    assert texts(session.events[:1]) == ["rewritten"]


class Gate(BasePlugin):
    async def before_run_callback(self, *, invocation_context):  # type: ignore[no-untyped-def]
        return text("maintenance window", "model")


async def test_before_run_plugin_can_answer_instead_of_the_agent() -> None:
    runner = Runner(
        app_name="demo",
        agent=Echo(name="echo"),
        plugins=[Gate("gate")],
        session_service=InMemorySessionService(),
        auto_create_session=True,
    )
    events = await collect(runner, user_id="u", session_id="s", new_message=text("hi"))
    assert texts(events) == ["maintenance window"]
    session = await runner.session_service.get_session(app_name="demo", user_id="u", session_id="s")
    assert session is not None and "turns" not in session.state and len(session.events) == 2


async def test_agent_callbacks_short_circuit_and_record_state() -> None:
    def refuse(callback_context: CallbackContext) -> types.Content | None:
        callback_context.state["refused"] = True
        if callback_context.user_content and "secret" in str(callback_context.user_content):
            return text("I can't talk about that.", "model")
        return None

    async def sign(callback_context: CallbackContext) -> types.Content | None:
        return text("-- echo bot", "model")

    agent = Echo(name="echo", before_agent_callback=refuse, after_agent_callback=[sign])
    runner = InMemoryRunner(agent=agent, app_name="demo")
    await runner.session_service.create_session(app_name="demo", user_id="u", session_id="s")
    refused = await collect(runner, user_id="u", session_id="s", new_message=text("a secret"))
    assert texts(refused) == ["I can't talk about that."]
    assert refused[0].actions.state_delta == {"refused": True}
    normal = await collect(runner, user_id="u", session_id="s", new_message=text("hello"))
    assert texts(normal) == ["echo: hello", "-- echo bot"]
    session = await runner.session_service.get_session(app_name="demo", user_id="u", session_id="s")
    assert session is not None and session.state == {"refused": True, "turns": 1}


class Stopper(BaseAgent):
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(content=text("first", "model"))
        ctx.end_invocation = True
        yield Event(content=text("second", "model"))
        yield Event(content=text("never", "model"))


async def test_end_invocation_stops_after_the_current_event() -> None:
    runner = InMemoryRunner(agent=Stopper(name="stopper"), app_name="demo")
    await runner.session_service.create_session(app_name="demo", user_id="u", session_id="s")
    events = await collect(runner, user_id="u", session_id="s", new_message=text("go"))
    assert texts(events) == ["first", "second"]


def test_sub_agents_know_their_parent_and_names_are_unique() -> None:
    leaf = Echo(name="leaf")
    mid = Echo(name="mid", sub_agents=[leaf])
    root = Echo(name="root", sub_agents=[mid])
    assert leaf.parent_agent is mid and mid.parent_agent is root and leaf.root_agent is root
    assert root.find_agent("leaf") is leaf and root.find_sub_agent("root") is None
    with pytest.raises(ValueError, match="already a sub-agent of 'mid'"):
        Echo(name="other", sub_agents=[leaf])
    with pytest.raises(ValueError, match="two sub-agents named"):
        Echo(name="dup", sub_agents=[Echo(name="x"), Echo(name="x")])


async def test_custom_agent_without_implementation_says_what_to_override() -> None:
    runner = InMemoryRunner(agent=BaseAgent(name="bare"), app_name="demo")
    await runner.session_service.create_session(app_name="demo", user_id="u", session_id="s")
    with pytest.raises(NotImplementedError, match="_run_async_impl"):
        await collect(runner, user_id="u", session_id="s", new_message=text("go"))


class Delegator(BaseAgent):
    """Runs its sub-agents in order, then says goodbye."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        for child in self.sub_agents:
            async for event in child.run_async(ctx):
                yield event
        yield Event(content=text("goodbye", "model"))


async def test_sub_agents_run_under_their_own_name_and_can_end_the_invocation() -> None:
    root = Delegator(name="root", sub_agents=[Echo(name="helper")])
    runner = InMemoryRunner(agent=root, app_name="demo")
    await runner.session_service.create_session(app_name="demo", user_id="u", session_id="s")
    events = await collect(runner, user_id="u", session_id="s", new_message=text("x"))
    assert [(e.author, texts([e])) for e in events] == [
        ("helper", ["echo: x"]),
        ("root", ["goodbye"]),
    ]

    stopping = Delegator(name="root", sub_agents=[Stopper(name="stopper")])
    runner = InMemoryRunner(agent=stopping, app_name="demo")
    await runner.session_service.create_session(app_name="demo", user_id="u", session_id="s")
    events = await collect(runner, user_id="u", session_id="s", new_message=text("x"))
    assert texts(events) == ["first", "second"], "end_invocation must stop the parent too"


class RecentReader(BaseAgent):
    """Reads only the last two stored events; records what it was given."""

    seen: list[tuple[int, dict[str, Any]]] = []

    def history_window(self) -> GetSessionConfig | None:
        return GetSessionConfig(num_recent_events=2)

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        self.seen.append((len(ctx.session.events), dict(ctx.session.state)))
        step = Context(ctx)
        step.state["n"] = step.state.get("n", 0) + 1
        yield Event(content=text("ok", "model"), actions=step.actions)


async def test_the_runner_loads_only_the_window_the_agent_reads() -> None:
    agent = RecentReader(name="reader", seen=[])
    runner = InMemoryRunner(agent=agent, app_name="demo")
    await runner.session_service.create_session(
        app_name="demo", user_id="u", session_id="s", state={"user:tier": "gold"}
    )
    for _ in range(5):
        await collect(runner, user_id="u", session_id="s", new_message=text("x"))
    # The two latest events stored before this turn, plus this turn's message; state is complete.
    assert [count for count, _ in agent.seen] == [1, 3, 3, 3, 3]
    assert agent.seen[-1][1] == {"user:tier": "gold", "n": 4}
    session = await runner.session_service.get_session(app_name="demo", user_id="u", session_id="s")
    assert session is not None and len(session.events) == 10 and session.state["n"] == 5


class Gated(BaseAgent):
    """Says it started, then waits for the test to let it finish."""

    started: Any = None
    proceed: Any = None

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        self.started.set()
        await self.proceed.wait()
        yield Event(content=text("done", "model"))


async def test_run_config_chooses_whether_a_busy_session_waits() -> None:
    agent = Gated(name="gated", started=asyncio.Event(), proceed=asyncio.Event())
    runner = InMemoryRunner(agent=agent, app_name="demo")
    await runner.session_service.create_session(app_name="demo", user_id="u", session_id="s")
    first = asyncio.create_task(collect(runner, user_id="u", session_id="s", new_message=text("a")))
    await asyncio.wait_for(agent.started.wait(), 60)
    for fail_fast in (
        RunConfig(session_busy_timeout=0),
        RunConfig(multitask_strategy=MultitaskStrategy.REJECT),
    ):
        with pytest.raises(SessionBusyError, match=r"'s'.*busy: invocation 'e-"):
            await collect(
                runner, user_id="u", session_id="s", new_message=text("b"), run_config=fail_fast
            )
    waiting = asyncio.create_task(
        collect(
            runner,
            user_id="u",
            session_id="s",
            new_message=text("c"),
            run_config=RunConfig(session_busy_timeout=60),
        )
    )
    agent.proceed.set()
    waited = await asyncio.wait_for(waiting, 60)
    assert texts(waited) == ["done"] and first.done()
