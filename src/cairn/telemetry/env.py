"""Whether the standard OpenTelemetry environment variables ask for an export (read without
importing the SDK, so a server that exports nothing never loads it)."""

from __future__ import annotations

import os

ENDPOINTS = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
)


def export_requested() -> bool:
    """An OTLP endpoint is set, or ``OTEL_TRACES_EXPORTER``/``OTEL_METRICS_EXPORTER`` names
    ``console``; never with ``OTEL_SDK_DISABLED=true``."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if any(os.environ.get(name, "").strip() for name in ENDPOINTS):
        return True
    chosen = (
        os.environ.get("OTEL_TRACES_EXPORTER", "")
        + ","
        + os.environ.get("OTEL_METRICS_EXPORTER", "")
    )
    return "console" in chosen.lower()
