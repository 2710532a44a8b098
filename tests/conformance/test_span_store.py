"""Every session store keeps the spans of its sessions' runs: recorded, read back per
invocation with their totals, and deleted with their session."""

from __future__ import annotations

from tests.support.recorded_spans import APP, USER, recording, run_weather

from cairn.sessions import BaseSessionService


async def test_an_invocations_spans_are_recorded_as_a_tree_with_totals(
    store: BaseSessionService,
) -> None:
    async with recording(store) as (spans, _):
        invocation = await run_weather(store, "s1")

    found = await spans.invocation_spans(APP, USER, "s1", invocation)
    names = [span.name for span in found]
    assert names == [
        "invocation",
        "invoke_agent weather",
        "chat scripted",
        "execute_tool get_weather",
        "chat scripted",
        "execute_tool get_forecast",
        "chat scripted",
    ]
    by_id = {span.span_id: span for span in found}
    parents = [by_id[s.parent_span_id].name if s.parent_span_id else None for s in found]
    assert parents == [None, "invocation"] + ["invoke_agent weather"] * 5
    assert len({span.trace_id for span in found}) == 1
    failed = found[5]
    assert (failed.status, failed.attributes["error.type"]) == ("ERROR", "RuntimeError")
    assert [e["name"] for e in failed.events] == ["exception"]
    assert all(span.end_time >= span.start_time for span in found)
    chats = [span for span in found if span.operation == "chat"]
    assert [(c.input_tokens, c.output_tokens) for c in chats] == [(11, 3), (20, 4), (30, 5)]
    assert all(c.event_id for c in chats)

    totals = await spans.invocation_totals(APP, USER, "s1")
    assert len(totals) == 1
    total = totals[0]
    assert (total.invocation_id, total.spans, total.errors) == (invocation, 7, 1)
    assert (total.input_tokens, total.output_tokens) == (61, 12)
    assert (total.model_calls, total.tool_calls) == (3, 2)
    assert total.model_time == sum(c.duration for c in chats)
    assert total.start_time == found[0].start_time


async def test_totals_come_newest_invocation_first_and_sum_to_the_sessions(
    store: BaseSessionService,
) -> None:
    async with recording(store) as (spans, _):
        first = await run_weather(store, "s1", "Weather?")
        second = await run_weather(store, "s1", "And now?")
        await run_weather(store, "s2")

    totals = await spans.invocation_totals(APP, USER, "s1")
    assert [t.invocation_id for t in totals] == [second, first]
    assert [t.invocation_id for t in await spans.invocation_totals(APP, USER, "s1", limit=1)] == [
        second
    ]
    session = await spans.session_totals(APP, USER, "s1")
    assert (session.input_tokens, session.output_tokens, session.spans) == (122, 24, 14)
    assert (session.model_calls, session.tool_calls, session.errors) == (6, 4, 2)
    assert session.invocation_id is None
    assert {s.session_id for s in await spans.spans_of_session_id("s2")} == {"s2"}


async def test_deleting_a_session_deletes_its_spans(store: BaseSessionService) -> None:
    async with recording(store) as (spans, _):
        gone = await run_weather(store, "s1")
        kept = await run_weather(store, "s2")
    event_id = next(s.event_id for s in await spans.spans_of_session_id("s1") if s.event_id)

    await store.delete_session(app_name=APP, user_id=USER, session_id="s1")

    assert await spans.invocation_spans(APP, USER, "s1", gone) == []
    assert await spans.invocation_totals(APP, USER, "s1") == []
    assert (await spans.session_totals(APP, USER, "s1")).spans == 0
    assert await spans.spans_of_event(event_id) == []
    assert len(await spans.invocation_spans(APP, USER, "s2", kept)) == 7


async def test_the_spans_of_an_event_are_those_of_the_model_call_it_came_from(
    store: BaseSessionService,
) -> None:
    async with recording(store) as (spans, _):
        await run_weather(store, "s1")
    session = await store.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert session is not None
    answer = session.events[-1]
    assert answer.content is not None and answer.content.parts[0].text == "It is 23°C."

    [span] = await spans.spans_of_event(answer.id)
    assert (span.name, span.output_tokens) == ("chat scripted", 5)
