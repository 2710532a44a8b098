"""``SqlSpanStore``: spans in the table ``cairn_spans`` of a SQL session store's database.

Every read is bounded and served by the index ``cairn_spans_by_session`` (or
``cairn_spans_by_event``); totals are computed by the database, per invocation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, and_, case, func, insert, select
from sqlalchemy.sql.elements import ColumnElement

from cairn.sessions.span_store import (
    MAX_SPANS_PER_READ,
    ROOT,
    SpanStore,
    SpanTotals,
    StoredSpan,
    empty_totals,
)
from cairn.sessions.sql.database import Database
from cairn.sessions.sql.schema import spans

_COLUMNS = [c for c in spans.c if c.name != "pk"]


def _row(span: StoredSpan) -> dict[str, Any]:
    return {
        "app_name": span.app_name,
        "user_id": span.user_id,
        "session_id": span.session_id,
        "invocation_id": span.invocation_id,
        "event_id": span.event_id,
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_span_id": span.parent_span_id,
        "name": span.name[:255],
        "kind": span.kind,
        "operation": span.operation[:32],
        "start_time": span.start_time,
        "end_time": span.end_time,
        "status": span.status,
        "status_message": span.status_message,
        "input_tokens": span.input_tokens,
        "output_tokens": span.output_tokens,
        "attributes": json.dumps(span.attributes),
        "events": json.dumps(span.events),
    }


def _span(row: Any) -> StoredSpan:
    return StoredSpan(
        app_name=row.app_name,
        user_id=row.user_id,
        session_id=row.session_id,
        invocation_id=row.invocation_id,
        event_id=row.event_id,
        trace_id=row.trace_id,
        span_id=row.span_id,
        parent_span_id=row.parent_span_id,
        name=row.name,
        kind=row.kind,
        operation=row.operation,
        start_time=int(row.start_time),
        end_time=int(row.end_time),
        status=row.status,
        status_message=row.status_message,
        input_tokens=None if row.input_tokens is None else int(row.input_tokens),
        output_tokens=None if row.output_tokens is None else int(row.output_tokens),
        attributes=json.loads(row.attributes),
        events=json.loads(row.events),
    )


def _of_session(app_name: str, user_id: str, session_id: str) -> ColumnElement[bool]:
    return and_(
        spans.c.session_id == session_id,
        spans.c.app_name == app_name,
        spans.c.user_id == user_id,
    )


def _write(connection: Connection, rows: list[dict[str, Any]]) -> None:
    connection.execute(insert(spans), rows)


def _select_spans(connection: Connection, where: ColumnElement[bool]) -> list[StoredSpan]:
    statement = (
        select(*_COLUMNS)
        .where(where)
        .order_by(spans.c.start_time, spans.c.pk)
        .limit(MAX_SPANS_PER_READ)
    )
    return [_span(row) for row in connection.execute(statement)]


def _duration_of(operation: str) -> Any:
    return func.sum(
        case((spans.c.operation == operation, spans.c.end_time - spans.c.start_time), else_=0)
    )


def _count_of(operation: str) -> Any:
    return func.sum(case((spans.c.operation == operation, 1), else_=0))


_TOTALS = (
    func.min(spans.c.start_time).label("start_time"),
    func.max(spans.c.end_time).label("end_time"),
    func.count().label("spans"),
    func.sum(func.coalesce(spans.c.input_tokens, 0)).label("input_tokens"),
    func.sum(func.coalesce(spans.c.output_tokens, 0)).label("output_tokens"),
    _count_of("chat").label("model_calls"),
    _duration_of("chat").label("model_time"),
    _count_of("execute_tool").label("tool_calls"),
    _duration_of("execute_tool").label("tool_time"),
    func.sum(case((spans.c.status == "ERROR", 1), else_=0)).label("errors"),
)


def _totals(invocation_id: str | None, row: Any) -> SpanTotals:
    return SpanTotals(
        invocation_id=invocation_id,
        start_time=int(row.start_time),
        end_time=int(row.end_time),
        spans=int(row.spans),
        input_tokens=int(row.input_tokens or 0),
        output_tokens=int(row.output_tokens or 0),
        model_calls=int(row.model_calls or 0),
        model_time=int(row.model_time or 0),
        tool_calls=int(row.tool_calls or 0),
        tool_time=int(row.tool_time or 0),
        errors=int(row.errors or 0),
    )


def _invocation_totals(
    connection: Connection, key: tuple[str, str, str], limit: int
) -> list[SpanTotals]:
    # The newest invocations by their root span (index cairn_spans_by_operation), then the
    # totals of their spans only (cairn_spans_by_session): the read grows with ``limit``,
    # not with the session.
    newest = (
        select(spans.c.invocation_id)
        .where(_of_session(*key), spans.c.operation == ROOT)
        .order_by(spans.c.start_time.desc())
        .limit(limit)
    )
    ids = list(connection.execute(newest).scalars())
    if not ids:
        return []
    statement = (
        select(spans.c.invocation_id, *_TOTALS)
        .where(_of_session(*key), spans.c.invocation_id.in_(ids))
        .group_by(spans.c.invocation_id)
    )
    found = [_totals(row.invocation_id, row) for row in connection.execute(statement)]
    return sorted(found, key=lambda t: t.start_time, reverse=True)


def _session_totals(connection: Connection, key: tuple[str, str, str]) -> SpanTotals:
    row = connection.execute(select(*_TOTALS).where(_of_session(*key))).one()
    return empty_totals() if not row.spans else _totals(None, row)


class SqlSpanStore(SpanStore):
    """Spans in ``cairn_spans`` of ``database`` (the session store's ``database``)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def write_spans(self, spans: Sequence[StoredSpan]) -> None:
        if spans:
            # Not durable (as a lease): a crash may lose the last spans, never an event.
            rows = [_row(s) for s in spans]
            await self.database.transaction(_write, rows, write=True, durable=False)

    async def invocation_spans(
        self, app_name: str, user_id: str, session_id: str, invocation_id: str
    ) -> list[StoredSpan]:
        where = and_(
            _of_session(app_name, user_id, session_id), spans.c.invocation_id == invocation_id
        )
        return await self.database.transaction(_select_spans, where, write=False)

    async def invocation_totals(
        self, app_name: str, user_id: str, session_id: str, *, limit: int = 100
    ) -> list[SpanTotals]:
        key = (app_name, user_id, session_id)
        return await self.database.transaction(_invocation_totals, key, limit, write=False)

    async def session_totals(self, app_name: str, user_id: str, session_id: str) -> SpanTotals:
        key = (app_name, user_id, session_id)
        return await self.database.transaction(_session_totals, key, write=False)

    async def spans_of_session_id(self, session_id: str) -> list[StoredSpan]:
        where = spans.c.session_id == session_id
        return await self.database.transaction(_select_spans, where, write=False)

    async def spans_of_event(self, event_id: str) -> list[StoredSpan]:
        where = spans.c.event_id == event_id
        return await self.database.transaction(_select_spans, where, write=False)
