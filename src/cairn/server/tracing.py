"""A server's tracing: OpenTelemetry providers from the environment, and the recorder that
writes finished spans into the session store (on with the dev UI, else when asked)."""

from __future__ import annotations

import os

from cairn.server.context import ServerContext
from cairn.telemetry.content import CAPTURE_ENV


def install_tracing(context: ServerContext) -> None:
    """Set up what ``context.settings`` asks for; nothing at all (no SDK imported) when it
    records no spans and no ``OTEL_*`` variable asks for an export."""
    from cairn.telemetry.env import export_requested

    settings = context.settings
    if not settings.records_spans and not export_requested():
        return
    from cairn.sessions.span_recorder import SpanRecorder, span_store_for
    from cairn.telemetry.setup import add_span_processor, setup_telemetry

    setup_telemetry()
    context.spans = span_store_for(context.sessions)
    if settings.records_spans and context.spans is not None:
        if settings.web:
            # The dev UI shows what each model call sent and got; OTEL_... =false keeps it off.
            os.environ.setdefault(CAPTURE_ENV, "true")
        context.recorder = SpanRecorder(context.spans)
        add_span_processor(context.recorder)
