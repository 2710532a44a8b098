"""``SpanRecorder``: an OpenTelemetry span processor that writes finished cairn spans into
the store the sessions live in, so the dev UI and the trace routes can read them.

Recording never slows or breaks a run: ``on_end`` only queues the span (a bounded queue;
past ``max_queue`` spans are dropped and counted in ``dropped``), and a task on the running
event loop writes the queue in batches a moment later, through the store's own
connections. A write that fails is logged once and counted; nothing raises into the run.
Spans without cairn's ids (another library's) are not recorded. Needs ``opentelemetry-sdk``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import deque
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.span_store import SpanStore, StoredSpan

logger = logging.getLogger(__name__)

_IDS = ("cairn.app_name", "cairn.user_id", "cairn.session_id", "cairn.invocation_id")


def span_store_for(session_service: BaseSessionService) -> SpanStore | None:
    """The span store beside ``session_service`` (None for a store cairn does not know)."""
    if isinstance(session_service, InMemorySessionService):
        return session_service.spans
    from cairn.sessions.sql.span_table import SqlSpanStore  # SQL stores only
    from cairn.sessions.sql.store import SqlSessionStore

    if isinstance(session_service, SqlSessionStore):
        return SqlSpanStore(session_service.database)
    return None


def _json_value(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def stored_span(span: ReadableSpan) -> StoredSpan | None:
    """The row of a finished span, or None if it carries no cairn ids."""
    attributes = {key: _json_value(value) for key, value in (span.attributes or {}).items()}
    ids = [attributes.get(name) for name in _IDS]
    context = span.context
    if not all(isinstance(i, str) for i in ids) or context is None:
        return None
    app_name, user_id, session_id, invocation_id = (str(i) for i in ids)
    operation = attributes.get("gen_ai.operation.name")
    event_id = attributes.get("cairn.event_id")
    return StoredSpan(
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        invocation_id=invocation_id,
        event_id=event_id if isinstance(event_id, str) else None,
        trace_id=format(context.trace_id, "032x"),
        span_id=format(context.span_id, "016x"),
        parent_span_id=format(span.parent.span_id, "016x") if span.parent else None,
        name=span.name,
        kind=span.kind.name,
        operation=operation if isinstance(operation, str) else span.name,
        start_time=span.start_time or 0,
        end_time=span.end_time or span.start_time or 0,
        status=span.status.status_code.name,
        status_message=span.status.description,
        input_tokens=_int(attributes.get("gen_ai.usage.input_tokens")),
        output_tokens=_int(attributes.get("gen_ai.usage.output_tokens")),
        attributes=attributes,
        events=[
            {
                "name": event.name,
                "timestamp": event.timestamp,
                "attributes": {k: _json_value(v) for k, v in (event.attributes or {}).items()},
            }
            for event in span.events
        ],
    )


class SpanRecorder(SpanProcessor):
    """Queues finished cairn spans and writes them to ``store`` in batches (see the module)."""

    def __init__(
        self,
        store: SpanStore,
        *,
        max_queue: int = 10_000,
        batch_size: int = 500,
        delay: float = 0.1,
    ) -> None:
        self.store = store
        self.max_queue = max_queue
        self.batch_size = batch_size
        self.delay = delay
        self.dropped = 0
        """Spans not recorded: the queue was full, or their write failed."""
        self._queue: deque[StoredSpan] = deque()
        self._lock = threading.Lock()
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._warned = False

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        try:
            row = stored_span(span)
        except Exception:  # a span this code cannot read is not worth breaking a run for
            logger.debug("span %r not recorded", span.name, exc_info=True)
            row = None
        if row is None:
            return
        with self._lock:
            if len(self._queue) >= self.max_queue:
                self.dropped += 1
                return
            self._queue.append(row)
        self._schedule()

    def _schedule(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop here: the spans wait for the next flush
            return
        task = self._task
        if task is None or task.done() or task.get_loop() is not loop:
            self._task = loop.create_task(self._drain())

    async def _drain(self) -> None:
        wake = self._wake = asyncio.Event()
        with contextlib.suppress(TimeoutError):  # a burst of spans shares one write
            await asyncio.wait_for(wake.wait(), self.delay)
        await self.flush()

    async def flush(self) -> None:
        """Write every queued span now (call it before a short-lived process exits)."""
        while True:
            with self._lock:
                batch = [
                    self._queue.popleft() for _ in range(min(self.batch_size, len(self._queue)))
                ]
            if not batch:
                return
            try:
                await self.store.write_spans(batch)
            except Exception as error:
                self.dropped += len(batch)
                if not self._warned:
                    self._warned = True
                    logger.warning(
                        "cairn could not record %d spans in the session store (%s: %s); "
                        "runs go on, and later failures are counted in SpanRecorder.dropped",
                        len(batch),
                        type(error).__name__,
                        error,
                    )

    async def close(self) -> None:
        """Write what is queued and stop."""
        task, self._task = self._task, None
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            self._wake.set()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.flush()

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True
