"""The invocation log read as the invocation goes on (event by event) says exactly what it
says when read once at the end: the incremental index never drifts from a fresh read."""

from __future__ import annotations

from typing import Any

from tests.support.workflow_runners import SESSION, USER, answer, said

from cairn import Event, InMemoryRunner
from cairn.events.invocation_log import InvocationLog
from cairn.workflow import START, RequestInput, Workflow, node


def double(node_input: int) -> int:
    return node_input * 2


def ask(node_input: Any):  # type: ignore[no-untyped-def]
    yield RequestInput(interrupt_id="ok?", message="go on?", response_schema={"type": "string"})


@node(rerun_on_resume=True)
async def planner(ctx: Any, node_input: Any) -> str:
    total = 0
    for number in range(3):
        total += await ctx.run_node(double, node_input=number)
    inner = Workflow(name="inner", edges=[(START, double)])
    total += await ctx.run_node(inner, node_input=5)
    said_ok = await ctx.run_node(ask)
    return f"{said_ok} {total}"


async def _session_events() -> tuple[list[Event], list[str]]:
    """A session with two invocations, each paused and resumed, the second's events between
    the first's pause and its answer."""
    runner = InMemoryRunner(agent=Workflow(name="wf", edges=[(START, planner)]), app_name="log")
    await runner.session_service.create_session(app_name="log", user_id=USER, session_id=SESSION)
    async for _ in runner.run_async(user_id=USER, session_id=SESSION, new_message=said("go")):
        pass
    async for _ in runner.run_async(user_id=USER, session_id=SESSION, new_message=said("again")):
        pass
    for message in (answer("ok?", "yes"), answer("ok?", "sure")):
        async for _ in runner.run_async(user_id=USER, session_id=SESSION, new_message=message):
            pass
    session = await runner.session_service.get_session(
        app_name="log", user_id=USER, session_id=SESSION
    )
    assert session is not None
    invocations = list(dict.fromkeys(e.invocation_id for e in session.events))
    return session.events, invocations


def _paths(events: list[Event]) -> set[str]:
    found = {""}
    for event in events:
        parts = event.node_info.path.split("/")
        found.update("/".join(parts[: n + 1]) for n in range(len(parts)))
        found.update(event.node_info.output_for or ())
    return found


def _view(log: InvocationLog, paths: set[str]) -> dict[str, Any]:
    end = len(log.events)
    return {
        "events": [e.id for e in log.events],
        "at": {p: [(e.id, own) for e, own in log.at(p, end)] for p in paths},
        "started": {p: log.started(p, end) for p in paths},
        "answers": log.answers(end),
        "schemas": log.schemas,
    }


async def test_the_log_read_event_by_event_matches_a_fresh_read() -> None:
    events, invocations = await _session_events()
    assert len(invocations) == 2
    paths = _paths(events)
    for invocation_id in invocations:
        growing: list[Event] = []
        log = InvocationLog(invocation_id)
        for event in events:
            growing.append(event)
            log.update(growing)
            fresh = InvocationLog(invocation_id).update(list(growing))
            assert _view(log, paths) == _view(fresh, paths)
    paused = InvocationLog(invocations[0]).update(events)
    assert paused.schemas == {"ok?": {"type": "string"}}
    answer_at = next(
        n for n, e in enumerate(paused.events) if e.author == "user" and e.get_function_responses()
    )
    given = paused.events[answer_at].get_function_responses()[0].response
    assert given in ({"result": "yes"}, {"result": "sure"})
    assert paused.answers(len(paused.events)) == {"ok?": given}
    # Positions give the log as it stood: before the answer, it had none.
    assert paused.answers(answer_at) == {}
    # The other invocation's events (between the pause and its answer) are not in it.
    assert {e.invocation_id for e in paused.events} == {invocations[0]}


async def test_a_different_list_is_read_afresh() -> None:
    events, invocations = await _session_events()
    log = InvocationLog(invocations[1]).update(events)
    shorter = events[: len(events) // 2]
    assert _view(log.update(shorter), _paths(events)) == _view(
        InvocationLog(invocations[1]).update(shorter), _paths(events)
    )
