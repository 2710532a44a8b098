"""Recorded spans: ADK's dev-server trace routes, and cairn's per-invocation span trees and
totals (tokens in and out, model and tool time, calls) read from the session store."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from cairn.server.access import may_read
from cairn.server.auth import Caller
from cairn.server.context import Server, ServerContext
from cairn.server.errors import NotFoundError
from cairn.server.models import SERVER_ERRORS, Reply, camel, errors, ok
from cairn.sessions.span_store import SpanStore, SpanTotals, StoredSpan, empty_totals

router = APIRouter(tags=["traces"], responses=SERVER_ERRORS)
TRACES = "/cairn/apps/{app_name}/users/{user_id}/sessions/{session_id}/traces"
_MS = 1_000_000

NOT_RECORDING = (
    "Spans are recorded into the session store by `cairn web`, and by `cairn api-server "
    "--record-spans` (CAIRN_RECORD_SPANS=1); runs made without it have none."
)


class SpanJSON(Reply):
    """One span: ``offsetMs`` from the invocation's first span, times in milliseconds."""

    name: str
    span_id: str
    parent_span_id: str | None = None
    trace_id: str
    kind: str
    operation: str
    start_time: float
    """Milliseconds since the epoch."""
    offset_ms: float
    duration_ms: float
    status: str
    status_message: str | None = None
    event_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    attributes: dict[str, Any]
    events: list[dict[str, Any]]


class TotalsJSON(Reply):
    """What an invocation (or the session) cost; times in milliseconds."""

    invocation_id: str | None = None
    start_time: float
    duration_ms: float
    spans: int
    input_tokens: int
    output_tokens: int
    model_calls: int
    model_ms: float
    tool_calls: int
    tool_ms: float
    errors: int


class SessionTraces(Reply):
    recording: bool
    """Whether this server records spans now."""
    session: TotalsJSON
    invocations: list[TotalsJSON]
    """The newest invocations that have spans, newest first."""


class InvocationTrace(Reply):
    invocation_id: str
    totals: TotalsJSON
    spans: list[SpanJSON]
    """By start time; a span's parent is ``parentSpanId``."""


def totals_json(totals: SpanTotals) -> TotalsJSON:
    return TotalsJSON(
        invocation_id=totals.invocation_id,
        start_time=totals.start_time / _MS,
        duration_ms=(totals.end_time - totals.start_time) / _MS,
        spans=totals.spans,
        input_tokens=totals.input_tokens,
        output_tokens=totals.output_tokens,
        model_calls=totals.model_calls,
        model_ms=totals.model_time / _MS,
        tool_calls=totals.tool_calls,
        tool_ms=totals.tool_time / _MS,
        errors=totals.errors,
    )


def span_json(span: StoredSpan, origin: int) -> SpanJSON:
    return SpanJSON(
        name=span.name,
        span_id=span.span_id,
        parent_span_id=span.parent_span_id,
        trace_id=span.trace_id,
        kind=span.kind,
        operation=span.operation,
        start_time=span.start_time / _MS,
        offset_ms=(span.start_time - origin) / _MS,
        duration_ms=span.duration / _MS,
        status=span.status,
        status_message=span.status_message,
        event_id=span.event_id,
        input_tokens=span.input_tokens,
        output_tokens=span.output_tokens,
        attributes=span.attributes,
        events=span.events,
    )


def _store(ctx: ServerContext) -> SpanStore | None:
    return ctx.spans


@router.get(
    TRACES,
    summary="The session's span totals, and those of its newest invocations",
    response_model=None,
    responses=ok(SessionTraces, 404, 422),
)
async def session_traces(
    ctx: Server,
    app_name: str,
    user_id: str,
    session_id: str,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> Any:
    await ctx.session_head(app_name, user_id, session_id)
    store = _store(ctx)
    if store is None:
        return camel(
            SessionTraces(recording=False, session=totals_json(empty_totals()), invocations=[])
        )
    session = await store.session_totals(app_name, user_id, session_id)
    invocations = await store.invocation_totals(app_name, user_id, session_id, limit=limit)
    return camel(
        SessionTraces(
            recording=ctx.recorder is not None,
            session=totals_json(session),
            invocations=[totals_json(t) for t in invocations],
        )
    )


@router.get(
    TRACES + "/{invocation_id}",
    summary="An invocation's spans (its span tree) and totals",
    response_model=None,
    responses=ok(InvocationTrace, 404, 422),
)
async def invocation_trace(
    ctx: Server, app_name: str, user_id: str, session_id: str, invocation_id: str
) -> Any:
    await ctx.session_head(app_name, user_id, session_id)
    store = _store(ctx)
    spans = (
        []
        if store is None
        else await store.invocation_spans(app_name, user_id, session_id, invocation_id)
    )
    totals = SpanTotals.of(invocation_id, spans)
    if totals is None:
        raise NotFoundError(
            f"no spans of invocation {invocation_id!r} are recorded in session "
            f"{session_id!r}. {NOT_RECORDING} GET .../traces lists the invocations that have "
            "spans."
        )
    return camel(
        InvocationTrace(
            invocation_id=invocation_id,
            totals=totals_json(totals),
            spans=[span_json(span, totals.start_time) for span in spans],
        )
    )


# -- ADK's dev-server routes (google.adk.cli.adk_web_server), read from the store ----------


@router.get(
    "/debug/trace/{event_id}",
    summary="The attributes of the model call whose reply is the event (ADK)",
    responses=errors(404, 422),
)
async def event_trace(ctx: Server, principal: Caller, event_id: str) -> dict[str, Any]:
    store = _store(ctx)
    found = [] if store is None else await store.spans_of_event(event_id)
    visible = [s for s in found if may_read(principal, s.app_name, s.user_id)]
    if not visible:
        raise NotFoundError("Trace not found")
    span = visible[-1]
    return {
        **span.attributes,
        "trace_id": int(span.trace_id, 16),
        "span_id": int(span.span_id, 16),
    }


@router.get(
    "/debug/trace/session/{session_id}",
    summary="A session's spans (ADK)",
    responses=errors(422),
)
async def session_trace(ctx: Server, principal: Caller, session_id: str) -> list[dict[str, Any]]:
    store = _store(ctx)
    found = [] if store is None else await store.spans_of_session_id(session_id)
    return [
        {
            "name": span.name,
            "span_id": int(span.span_id, 16),
            "trace_id": int(span.trace_id, 16),
            "start_time": span.start_time,
            "end_time": span.end_time,
            "attributes": span.attributes,
            "parent_span_id": int(span.parent_span_id, 16) if span.parent_span_id else None,
        }
        for span in found
        if may_read(principal, span.app_name, span.user_id)
    ]
