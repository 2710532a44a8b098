"""Finished OpenTelemetry spans kept beside the sessions they belong to.

A ``SpanStore`` keeps ``StoredSpan`` rows keyed by app, user, session and invocation (the
``cairn.*`` attributes every cairn span carries), and answers bounded reads: one
invocation's spans, a session's per-invocation totals, the spans that produced an event.
``span_store_for(session_service)`` gives the store beside a session service: the table
``cairn_spans`` of a SQL store, or the in-memory store of an ``InMemorySessionService``.
Deleting a session deletes its spans with it.
"""

from __future__ import annotations

import abc
import dataclasses
import threading
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

MAX_SPANS_PER_READ = 5_000
"""The most spans one read returns (an invocation's spans, a session's spans)."""

ROOT = "invocation"
"""The operation (and name) of an invocation's root span, which ends last."""


@dataclasses.dataclass(frozen=True)
class StoredSpan:
    """One finished span; times in nanoseconds since the epoch, ids in lowercase hex."""

    app_name: str
    user_id: str
    session_id: str
    invocation_id: str
    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: str
    operation: str
    """``gen_ai.operation.name`` (``chat``, ``execute_tool``, ``invoke_agent``), else the name."""
    start_time: int
    end_time: int
    status: str
    """``UNSET``, ``OK`` or ``ERROR``."""
    status_message: str | None
    attributes: dict[str, Any]
    events: list[dict[str, Any]]
    event_id: str | None = None
    """The event a model call's reply became (``cairn.event_id``)."""
    input_tokens: int | None = None
    output_tokens: int | None = None

    @property
    def duration(self) -> int:
        return self.end_time - self.start_time


@dataclasses.dataclass(frozen=True)
class SpanTotals:
    """What an invocation (or a whole session) cost: tokens, model and tool time, calls."""

    invocation_id: str | None
    start_time: int
    end_time: int
    spans: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    model_calls: int = 0
    model_time: int = 0
    """Nanoseconds spent in model calls (summed; concurrent calls count each)."""
    tool_calls: int = 0
    tool_time: int = 0
    errors: int = 0

    @classmethod
    def of(cls, invocation_id: str | None, spans: Iterable[StoredSpan]) -> SpanTotals | None:
        """The totals of ``spans`` (None if there are none)."""
        found = list(spans)
        if not found:
            return None
        chats = [s for s in found if s.operation == "chat"]
        tools = [s for s in found if s.operation == "execute_tool"]
        return cls(
            invocation_id=invocation_id,
            start_time=min(s.start_time for s in found),
            end_time=max(s.end_time for s in found),
            spans=len(found),
            input_tokens=sum(s.input_tokens or 0 for s in found),
            output_tokens=sum(s.output_tokens or 0 for s in found),
            model_calls=len(chats),
            model_time=sum(s.duration for s in chats),
            tool_calls=len(tools),
            tool_time=sum(s.duration for s in tools),
            errors=sum(1 for s in found if s.status == "ERROR"),
        )


class SpanStore(abc.ABC):
    """Where finished spans are written (by ``SpanRecorder``) and read (by the server)."""

    @abc.abstractmethod
    async def write_spans(self, spans: Sequence[StoredSpan]) -> None:
        """Keep ``spans`` (in one transaction, where the store has them)."""

    @abc.abstractmethod
    async def invocation_spans(
        self, app_name: str, user_id: str, session_id: str, invocation_id: str
    ) -> list[StoredSpan]:
        """One invocation's spans by start time (at most ``MAX_SPANS_PER_READ``)."""

    @abc.abstractmethod
    async def invocation_totals(
        self, app_name: str, user_id: str, session_id: str, *, limit: int = 100
    ) -> list[SpanTotals]:
        """The totals of the session's ``limit`` newest finished invocations (those whose
        root span is recorded), newest first."""

    @abc.abstractmethod
    async def session_totals(self, app_name: str, user_id: str, session_id: str) -> SpanTotals:
        """The totals of all the session's spans."""

    @abc.abstractmethod
    async def spans_of_session_id(self, session_id: str) -> list[StoredSpan]:
        """The spans of every session with this id (any app or user), by start time (at most
        ``MAX_SPANS_PER_READ``): ADK's ``/debug/trace/session/{session_id}``."""

    @abc.abstractmethod
    async def spans_of_event(self, event_id: str) -> list[StoredSpan]:
        """The spans whose reply became event ``event_id``: ADK's ``/debug/trace/{event_id}``."""


def empty_totals(invocation_id: str | None = None) -> SpanTotals:
    return SpanTotals(invocation_id=invocation_id, start_time=0, end_time=0)


class InMemorySpanStore(SpanStore):
    """Spans in this process, for the in-memory session store; each session keeps its
    newest ``max_spans_per_session`` spans."""

    def __init__(self, *, max_spans_per_session: int = 20_000) -> None:
        self.max_spans_per_session = max_spans_per_session
        self._lock = threading.Lock()
        self._spans: dict[tuple[str, str, str], deque[StoredSpan]] = {}

    async def write_spans(self, spans: Sequence[StoredSpan]) -> None:
        with self._lock:
            for span in spans:
                key = (span.app_name, span.user_id, span.session_id)
                kept = self._spans.setdefault(key, deque(maxlen=self.max_spans_per_session))
                kept.append(span)

    def _session(self, app_name: str, user_id: str, session_id: str) -> list[StoredSpan]:
        with self._lock:
            return list(self._spans.get((app_name, user_id, session_id), ()))

    async def invocation_spans(
        self, app_name: str, user_id: str, session_id: str, invocation_id: str
    ) -> list[StoredSpan]:
        found = [
            s
            for s in self._session(app_name, user_id, session_id)
            if s.invocation_id == invocation_id
        ]
        return sorted(found, key=lambda s: s.start_time)[:MAX_SPANS_PER_READ]

    async def invocation_totals(
        self, app_name: str, user_id: str, session_id: str, *, limit: int = 100
    ) -> list[SpanTotals]:
        by_invocation: dict[str, list[StoredSpan]] = {}
        for span in self._session(app_name, user_id, session_id):
            by_invocation.setdefault(span.invocation_id, []).append(span)
        ended = [
            key for key, spans in by_invocation.items() if any(s.operation == ROOT for s in spans)
        ]
        totals = [SpanTotals.of(key, by_invocation[key]) for key in ended]
        found = [t for t in totals if t is not None]
        return sorted(found, key=lambda t: t.start_time, reverse=True)[:limit]

    async def session_totals(self, app_name: str, user_id: str, session_id: str) -> SpanTotals:
        totals = SpanTotals.of(None, self._session(app_name, user_id, session_id))
        return totals or empty_totals()

    async def spans_of_session_id(self, session_id: str) -> list[StoredSpan]:
        with self._lock:
            found = [s for key, kept in self._spans.items() if key[2] == session_id for s in kept]
        return sorted(found, key=lambda s: s.start_time)[:MAX_SPANS_PER_READ]

    async def spans_of_event(self, event_id: str) -> list[StoredSpan]:
        with self._lock:
            return [s for kept in self._spans.values() for s in kept if s.event_id == event_id]

    def delete_session(self, app_name: str, user_id: str, session_id: str) -> None:
        with self._lock:
            self._spans.pop((app_name, user_id, session_id), None)
