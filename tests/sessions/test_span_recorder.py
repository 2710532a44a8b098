"""Recording spans never slows or breaks a run: a full queue drops (and counts) spans, a
store that fails is logged once and counted, spans without cairn's ids are left out."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from opentelemetry import trace
from tests.support.recorded_spans import APP, USER, recording, run_weather

from cairn.sessions import InMemorySessionService
from cairn.sessions.span_recorder import SpanRecorder
from cairn.sessions.span_store import InMemorySpanStore, StoredSpan
from cairn.telemetry.setup import add_span_processor, remove_span_processor

SPANS_PER_RUN = 7


class BrokenStore(InMemorySpanStore):
    """A store whose writes fail (its database is gone)."""

    async def write_spans(self, spans: Sequence[StoredSpan]) -> None:
        raise ConnectionError("the database went away")


async def test_a_store_that_fails_does_not_break_the_run(caplog: pytest.LogCaptureFixture) -> None:
    service = InMemorySessionService()
    recorder = SpanRecorder(BrokenStore())
    add_span_processor(recorder)
    try:
        first = await run_weather(service, "s1")
        await recorder.flush()
        second = await run_weather(service, "s1", "Again?")
    finally:
        remove_span_processor(recorder)
        await recorder.close()

    assert first and second  # both runs ended with their events
    assert recorder.dropped == 2 * SPANS_PER_RUN
    warnings = [r.getMessage() for r in caplog.records if r.name == "cairn.sessions.span_recorder"]
    assert len(warnings) == 1
    assert "ConnectionError: the database went away" in warnings[0]


async def test_past_its_queue_the_recorder_drops_spans_and_counts_them() -> None:
    service = InMemorySessionService()
    recorder = SpanRecorder(service.spans, max_queue=3, delay=60)
    add_span_processor(recorder)
    try:
        invocation = await run_weather(service, "s1")
    finally:
        remove_span_processor(recorder)
    await recorder.close()

    kept = await service.spans.invocation_spans(APP, USER, "s1", invocation)
    assert len(kept) == 3
    assert recorder.dropped == SPANS_PER_RUN - 3


async def test_spans_without_cairn_ids_are_not_recorded() -> None:
    service = InMemorySessionService()
    async with recording(service) as (spans, _):
        with trace.get_tracer("someone.else").start_as_current_span("their work"):
            invocation = await run_weather(service, "s1")

    names = [s.name for s in await spans.invocation_spans(APP, USER, "s1", invocation)]
    assert "their work" not in names and len(names) == SPANS_PER_RUN
    assert await spans.spans_of_session_id("s1") != []
