"""A busy session: the Runner's multitask strategies, on every store (guarantee 7).

``enqueue`` (the default) runs the invocations of one session one after another, in the
order they arrived; ``reject`` refuses at once; ``interrupt`` stops the running one (what it
committed stays) and runs; ``rollback`` also rewinds the stopped one away first.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.genai import types
from tests.support.waiting import BOUND_SECONDS, until, wait_until

from cairn import (
    Agent,
    BaseAgent,
    Event,
    InvocationContext,
    InvocationInterruptedError,
    MultitaskStrategy,
    RunConfig,
    Runner,
    SessionBusyError,
)
from cairn.events.rewind import live_events
from cairn.sessions import BaseSessionService
from cairn.sessions.lease import (
    SessionLease,
    hold_session,
    lease_holder,
    release_session,
    session_waiters,
    take_session_over,
)
from cairn.testing import Call, ScriptedLlm

APP = "multitask"
KEY = {"app_name": APP, "user_id": "u", "session_id": "s"}


class Steps(BaseAgent):
    """Yields three events per invocation, letting other tasks run between them; the first
    invocation says it started and waits for ``proceed`` (a threading.Event: any loop)."""

    started: Any = None
    proceed: Any = None
    invocations: int = 0

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        self.invocations += 1
        if self.invocations == 1:
            self.started.set()
            await asyncio.to_thread(self.proceed.wait, BOUND_SECONDS)
        for step in range(3):
            await asyncio.sleep(0)  # others may run here: they must still not get in
            yield Event(content=types.ModelContent(f"step {step}"))


def steps_runner(store: BaseSessionService, **options: Any) -> tuple[Runner, Steps]:
    agent = Steps(name="steps", started=threading.Event(), proceed=threading.Event())
    return Runner(app_name=APP, agent=agent, session_service=store, **options), agent


async def run(runner: Runner, text: str, **kwargs: Any) -> list[Event]:
    return [
        event
        async for event in runner.run_async(
            user_id="u", session_id="s", new_message=types.UserContent(text), **kwargs
        )
    ]


async def waiters(store: BaseSessionService, count: int) -> None:
    async def queued() -> bool:
        return session_waiters(store, **KEY) == count

    await until(queued, f"{count} callers waiting for the session")


def invocation_order(events: list[Event]) -> list[str]:
    """Invocation ids of maximal runs of consecutive events of one invocation."""
    return [invocation for invocation, _ in itertools.groupby(e.invocation_id for e in events)]


async def test_concurrent_invocations_on_one_session_run_one_after_another_in_arrival_order(
    store: BaseSessionService,
) -> None:
    runner, agent = steps_runner(store)
    await store.create_session(**KEY)
    callers = [asyncio.create_task(run(runner, "#0"))]
    await asyncio.to_thread(agent.started.wait, BOUND_SECONDS)
    for n in range(1, 5):  # each arrives while the earlier ones wait
        callers.append(asyncio.create_task(run(runner, f"#{n}")))
        await waiters(store, n)
    agent.proceed.set()
    results = await asyncio.wait_for(asyncio.gather(*callers), BOUND_SECONDS)

    session = await store.get_session(**KEY)
    assert session is not None
    order = invocation_order(session.events)
    assert order == [events[0].invocation_id for events in results], "not in arrival order"
    assert [e.content.parts[0].text for e in session.events if e.author == "user"] == [
        f"#{n}" for n in range(5)
    ]
    for events in results:  # each caller saw its own invocation, whole
        assert [e.content.parts[0].text for e in events] == ["step 0", "step 1", "step 2"]
    assert session_waiters(store, **KEY) == 0


async def test_invocations_from_other_event_loops_wait_in_line_too(
    store: BaseSessionService,
) -> None:
    """``Runner.run`` runs each call on an event loop of its own, in a thread."""
    runner, agent = steps_runner(store)
    await store.create_session(**KEY)
    seen: dict[str, list[Event]] = {}

    def call(name: str) -> None:
        seen[name] = list(
            runner.run(user_id="u", session_id="s", new_message=types.UserContent(name))
        )

    threads = {name: threading.Thread(target=call, args=(name,)) for name in ("a", "b", "c")}
    threads["a"].start()
    await asyncio.to_thread(agent.started.wait, BOUND_SECONDS)
    threads["b"].start()
    await waiters(store, 1)
    threads["c"].start()
    await waiters(store, 2)
    agent.proceed.set()
    for thread in threads.values():
        await asyncio.to_thread(thread.join, BOUND_SECONDS)
        assert not thread.is_alive()

    session = await store.get_session(**KEY)
    assert session is not None
    assert invocation_order(session.events) == [seen[n][0].invocation_id for n in "abc"]
    assert all(len(events) == 3 for events in seen.values())


async def test_reject_refuses_a_busy_session_at_once_and_stores_nothing(
    store: BaseSessionService,
) -> None:
    runner, agent = steps_runner(store, multitask_strategy=MultitaskStrategy.REJECT)
    await store.create_session(**KEY)
    first = asyncio.create_task(run(runner, "first"))
    await asyncio.to_thread(agent.started.wait, BOUND_SECONDS)
    with pytest.raises(SessionBusyError) as busy:
        await run(runner, "second")
    assert busy.value.session_id == "s" and busy.value.holder.startswith("e-")

    # With someone waiting in line, a rejecting caller is refused too (it would jump it).
    queued = asyncio.create_task(
        run(runner, "queued", run_config=RunConfig(multitask_strategy=MultitaskStrategy.ENQUEUE))
    )
    await waiters(store, 1)
    with pytest.raises(SessionBusyError, match="1 more wait before this one"):
        await run(runner, "third")
    agent.proceed.set()
    await asyncio.wait_for(asyncio.gather(first, queued), BOUND_SECONDS)
    session = await store.get_session(**KEY)
    assert session is not None
    assert [e.content.parts[0].text for e in session.events if e.author == "user"] == [
        "first",
        "queued",
    ]


async def test_a_waiter_gives_up_after_the_busy_timeout(store: BaseSessionService) -> None:
    runner, agent = steps_runner(store, session_busy_timeout=0.2)
    await store.create_session(**KEY)
    first = asyncio.create_task(run(runner, "first"))
    await asyncio.to_thread(agent.started.wait, BOUND_SECONDS)
    with pytest.raises(SessionBusyError, match="waited") as busy:
        await run(runner, "second")
    with pytest.raises(SessionBusyError):  # RunConfig overrides the Runner
        await run(runner, "third", run_config=RunConfig(session_busy_timeout=0))
    first_id = busy.value.holder.partition("@")[0]
    agent.proceed.set()
    assert (await asyncio.wait_for(first, BOUND_SECONDS))[0].invocation_id == first_id
    assert session_waiters(store, **KEY) == 0
    session = await store.get_session(**KEY)
    assert session is not None and {e.invocation_id for e in session.events} == {first_id}


def banker(store: BaseSessionService) -> tuple[Runner, asyncio.Event, list[int]]:
    """A Runner whose first invocation stops in its ``transfer`` tool until cancelled."""
    inside = asyncio.Event()
    sent: list[int] = []

    async def transfer(amount: int) -> dict[str, int]:
        inside.set()
        await asyncio.Event().wait()  # stays here until the invocation is stopped
        sent.append(amount)
        return {"sent": amount}

    model = ScriptedLlm(script=[Call("transfer", amount=5), "ok", "ok"])
    agent = Agent(name="banker", model=model, tools=[transfer])
    return Runner(app_name=APP, agent=agent, session_service=store), inside, sent


async def test_interrupt_stops_the_running_invocation_keeps_what_it_committed_and_runs(
    store: BaseSessionService,
) -> None:
    runner, inside, sent = banker(store)
    await store.create_session(**KEY, state={"mood": "calm"})
    seen: list[Event] = []

    async def first() -> None:
        async for event in runner.run_async(
            user_id="u",
            session_id="s",
            new_message=types.UserContent("send 5"),
            state_delta={"mood": "busy"},
        ):
            seen.append(event)

    running = asyncio.create_task(first())
    await asyncio.wait_for(inside.wait(), BOUND_SECONDS)
    second = await run(
        runner, "never mind", run_config=RunConfig(multitask_strategy=MultitaskStrategy.INTERRUPT)
    )
    with pytest.raises(asyncio.CancelledError):
        await running  # the interrupted invocation's caller sees a cancellation
    assert sent == []

    session = await store.get_session(**KEY)
    assert session is not None
    first_id = seen[0].invocation_id
    assert invocation_order(session.events) == [first_id, second[0].invocation_id]
    kept = [e for e in session.events if e.invocation_id == first_id]
    assert [e.id for e in kept[1:-1]] == [e.id for e in seen]  # the call it made stays,
    (stopped,) = kept[-1].get_function_responses()  # answered as stopped, so the next can run
    assert stopped.name == "transfer" and stopped.response is not None
    assert stopped.response["error"].startswith("interrupted: ")
    assert live_events(session.events) == session.events
    assert session.state == {"mood": "busy"}
    assert [e.content.parts[0].text for e in second] == ["ok"]


async def test_interrupt_answers_the_calls_of_an_invocation_stopped_by_anyone(
    store: BaseSessionService,
) -> None:
    """An invocation cancelled mid-call by its own caller (a Stop button, a cancelled run)
    leaves a call without an answer: a plain next message is refused as in doubt, while one
    sent with ``interrupt`` answers the call as stopped and runs."""
    runner, inside, sent = banker(store)
    await store.create_session(**KEY)
    running = asyncio.create_task(run(runner, "send 5"))
    await asyncio.wait_for(inside.wait(), BOUND_SECONDS)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running

    with pytest.raises(InvocationInterruptedError):
        await run(runner, "and now?")
    second = await run(
        runner, "never mind", run_config=RunConfig(multitask_strategy=MultitaskStrategy.INTERRUPT)
    )
    assert sent == []
    assert [e.content.parts[0].text for e in second] == ["ok"]
    session = await store.get_session(**KEY)
    assert session is not None
    answers = [r for e in session.events for r in e.get_function_responses()]
    assert [(r.name, r.response["error"][:13]) for r in answers if r.response] == [
        ("transfer", "interrupted: ")
    ]


async def test_rollback_rewinds_the_interrupted_invocation_away_then_runs(
    store: BaseSessionService,
) -> None:
    runner, inside, _ = banker(store)
    await store.create_session(**KEY, state={"mood": "calm"})
    first = asyncio.create_task(run(runner, "send 5", state_delta={"mood": "busy"}))
    await asyncio.wait_for(inside.wait(), BOUND_SECONDS)
    rolled = RunConfig(multitask_strategy=MultitaskStrategy.ROLLBACK)
    second = await run(runner, "forget it", run_config=rolled)
    with pytest.raises(asyncio.CancelledError):
        await first

    session = await store.get_session(**KEY)
    assert session is not None
    assert session.state == {"mood": "calm"}  # the first's state change is rewound
    live = live_events(session.events)
    assert {e.invocation_id for e in live} == {second[0].invocation_id}
    assert [e.author for e in live] == ["user", "banker"]
    first_events = [e for e in session.events if e.author == "banker" and e.get_function_calls()]
    assert len(first_events) == 1 and first_events[0] not in live  # in the log, not in effect

    # With nothing running, rollback simply runs.
    third = await run(runner, "hello", run_config=rolled)
    session = await store.get_session(**KEY)
    assert session is not None
    assert {e.invocation_id for e in live_events(session.events)} == {
        second[0].invocation_id,
        third[0].invocation_id,
    }


async def test_interrupt_goes_ahead_of_the_callers_waiting_in_line(
    store: BaseSessionService,
) -> None:
    runner, agent = steps_runner(store)
    await store.create_session(**KEY)
    first = asyncio.create_task(run(runner, "first"))
    await asyncio.to_thread(agent.started.wait, BOUND_SECONDS)
    queued = asyncio.create_task(run(runner, "queued"))
    await waiters(store, 1)
    interrupting = RunConfig(multitask_strategy=MultitaskStrategy.INTERRUPT)
    urgent = await run(runner, "urgent", run_config=interrupting)
    agent.proceed.set()  # the first's thread waits on it: let it go (it was cancelled)
    with pytest.raises(asyncio.CancelledError):
        await first
    await asyncio.wait_for(queued, BOUND_SECONDS)

    session = await store.get_session(**KEY)
    assert session is not None
    users = [e.content.parts[0].text for e in session.events if e.author == "user"]
    assert users == ["first", "urgent", "queued"]
    assert urgent[0].invocation_id in invocation_order(session.events)
    wait_until(lambda: session_waiters(store, **KEY) == 0, "the line emptied")


async def test_interrupt_cancels_an_invocation_running_on_another_event_loop(
    store: BaseSessionService,
) -> None:
    runner, agent = steps_runner(store)
    await store.create_session(**KEY)
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            list(runner.run(user_id="u", session_id="s", new_message=types.UserContent("a")))
        except BaseException as exc:  # what the synchronous caller gets
            outcome.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    await asyncio.to_thread(agent.started.wait, BOUND_SECONDS)
    interrupting = RunConfig(multitask_strategy=MultitaskStrategy.INTERRUPT)
    mine = await run(runner, "b", run_config=interrupting)
    agent.proceed.set()  # its worker thread still waits on it
    await asyncio.to_thread(thread.join, BOUND_SECONDS)
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], asyncio.CancelledError)
    session = await store.get_session(**KEY)
    assert session is not None
    assert [e.content.parts[0].text for e in session.events] == ["a", "b"] + [
        f"step {n}" for n in range(3)
    ]
    assert session.events[-1].invocation_id == mine[0].invocation_id


async def test_take_session_over_stops_only_the_holder_it_names(store: BaseSessionService) -> None:
    """The primitive a run's cancel uses, from this process or another one."""
    await store.create_session(**KEY)
    me = lease_holder("cancel")
    # A holder that does not hold the session: nothing is done, a free session stays free.
    assert await take_session_over(store, **KEY, holder=me, ttl=30, interrupting="x") is None
    free = await store.acquire_session_lease(**KEY, holder="probe", ttl=30)
    assert isinstance(free, SessionLease)
    await store.release_session_lease(**KEY, holder="probe")

    # A holder of another process (not known here): its lease is taken over, it is fenced.
    remote = await store.acquire_session_lease(**KEY, holder="remote@elsewhere:1", ttl=600)
    assert isinstance(remote, SessionLease)
    assert await take_session_over(store, **KEY, holder=me, ttl=30, interrupting="other") is None
    taken = await take_session_over(store, **KEY, holder=me, ttl=30, interrupting=remote.holder)
    assert taken is not None and taken.interrupted == remote.holder
    await release_session(store, taken)
    renewal = await store.acquire_session_lease(
        **KEY, holder=remote.holder, ttl=30, generation=remote.generation
    )
    assert renewal == ""  # taken from it, then released: it can never renew (or append) again

    # A holder of this process: its task is cancelled, and the lease is released by it.
    inside = asyncio.Event()

    async def holding() -> None:
        async with hold_session(store, **KEY, holder=lease_holder("local"), wait=0, ttl=30):
            inside.set()
            await asyncio.Event().wait()

    task = asyncio.create_task(holding())
    await asyncio.wait_for(inside.wait(), BOUND_SECONDS)
    taken = await take_session_over(
        store, **KEY, holder=me, ttl=30, interrupting=lease_holder("local")
    )
    assert taken is not None and taken.interrupted == lease_holder("local")
    with pytest.raises(asyncio.CancelledError):
        await task
    await release_session(store, taken)
    assert isinstance(await store.acquire_session_lease(**KEY, holder="next", ttl=30), SessionLease)
