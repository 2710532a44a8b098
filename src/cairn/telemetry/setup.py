"""OpenTelemetry providers from the standard environment variables (ADK's
``google.adk.telemetry.setup``): ``setup_telemetry()`` once per process, ``flush_telemetry()``
before a short-lived one exits.

- ``OTEL_EXPORTER_OTLP_ENDPOINT``: export spans and metrics over OTLP (for HTTP,
  ``/v1/traces`` and ``/v1/metrics`` are appended); ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``
  or ``..._METRICS_ENDPOINT``: export that signal only, to this exact URL.
- ``OTEL_EXPORTER_OTLP_PROTOCOL`` (or ``..._TRACES_PROTOCOL``, ``..._METRICS_PROTOCOL``):
  ``http/protobuf`` (default) or ``grpc`` (needs ``opentelemetry-exporter-otlp-proto-grpc``).
- ``OTEL_EXPORTER_OTLP_HEADERS``, ``..._TIMEOUT``, ``..._COMPRESSION``: read by the exporters.
- ``OTEL_TRACES_EXPORTER``, ``OTEL_METRICS_EXPORTER``: ``otlp`` (default), ``console`` or
  ``none``, comma-separated.
- ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``: the resource (``service.name`` is
  ``cairn`` unless they name one); ``OTEL_METRIC_EXPORT_INTERVAL``: milliseconds between
  metric exports; ``OTEL_SDK_DISABLED=true``: set up nothing.

Needs ``opentelemetry-sdk`` and ``opentelemetry-exporter-otlp-proto-http`` (cairn's
dependencies); this module is imported only when telemetry is set up, never by ``import cairn``.
A provider the application set itself is kept: cairn's processors join it.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import os
import threading
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

logger = logging.getLogger(__name__)

_HTTP, _GRPC = "http/protobuf", "grpc"


class TelemetrySetupError(ValueError):
    """An OpenTelemetry environment variable asks for something cairn cannot set up."""


@dataclasses.dataclass
class OTelHooks:
    """Processors and readers to add to the providers (as ADK's ``OTelHooks``; no logs)."""

    span_processors: list[SpanProcessor] = dataclasses.field(default_factory=list)
    metric_readers: list[MetricReader] = dataclasses.field(default_factory=list)


class _Joined(SpanProcessor):
    """The processors added after setup (``add_span_processor``): the SDK's provider cannot
    remove a processor, this one can."""

    def __init__(self) -> None:
        self.processors: tuple[SpanProcessor, ...] = ()
        self.lock = threading.Lock()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        for processor in self.processors:
            processor.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        for processor in self.processors:
            processor.on_end(span)

    def shutdown(self) -> None:
        for processor in self.processors:
            processor.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return all(p.force_flush(timeout_millis) for p in self.processors)


_joined = _Joined()
_setup_lock = threading.Lock()
_set_up = False


def _env(name: str, signal: str | None = None) -> str:
    if signal is not None:
        specific = os.environ.get(name.replace("OTLP_", f"OTLP_{signal}_"), "").strip()
        if specific:
            return specific
    return os.environ.get(name, "").strip()


def _exporter_names(variable: str) -> list[str]:
    names = [n.strip().lower() for n in os.environ.get(variable, "otlp").split(",") if n.strip()]
    unknown = sorted(set(names) - {"otlp", "console", "none"})
    if unknown:
        raise TelemetrySetupError(
            f"{variable}={os.environ[variable]!r} names {', '.join(unknown)}, which cairn "
            "cannot set up: use otlp, console or none (comma-separated)"
        )
    return [] if "none" in names else names


def _protocol(signal: str) -> str:
    protocol = _env("OTEL_EXPORTER_OTLP_PROTOCOL", signal) or _HTTP
    if protocol not in (_HTTP, _GRPC):
        raise TelemetrySetupError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r} is not supported: use http/protobuf "
            "(the default) or grpc"
        )
    return protocol


def _grpc_module(name: str) -> Any:
    try:
        return importlib.import_module(f"opentelemetry.exporter.otlp.proto.grpc.{name}")
    except ImportError as error:
        raise TelemetrySetupError(
            "OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs the gRPC exporter: pip install "
            f"opentelemetry-exporter-otlp-proto-grpc (or use http/protobuf) ({error})"
        ) from None


def _otlp_span_exporter() -> SpanExporter:
    if _protocol("TRACES") == _GRPC:
        span_exporter: SpanExporter = _grpc_module("trace_exporter").OTLPSpanExporter()
        return span_exporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
        OTLPSpanExporter as HttpSpanExporter,
    )

    return HttpSpanExporter()


def _otlp_metric_exporter() -> MetricExporter:
    if _protocol("METRICS") == _GRPC:
        metric_exporter: MetricExporter = _grpc_module("metric_exporter").OTLPMetricExporter()
        return metric_exporter
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
        OTLPMetricExporter as HttpMetricExporter,
    )

    return HttpMetricExporter()


def _exports(signal: str) -> bool:
    return bool(_env("OTEL_EXPORTER_OTLP_ENDPOINT", signal))


def otel_exporters() -> OTelHooks:
    """The exporters the environment asks for (none without an OTLP endpoint or ``console``)."""
    hooks = OTelHooks()
    for name in _exporter_names("OTEL_TRACES_EXPORTER"):
        if name == "console":
            hooks.span_processors.append(BatchSpanProcessor(ConsoleSpanExporter()))
        elif _exports("TRACES"):
            hooks.span_processors.append(BatchSpanProcessor(_otlp_span_exporter()))
    for name in _exporter_names("OTEL_METRICS_EXPORTER"):
        if name == "console":
            hooks.metric_readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter()))
        elif _exports("METRICS"):
            hooks.metric_readers.append(PeriodicExportingMetricReader(_otlp_metric_exporter()))
    return hooks


def resource_from_env() -> Resource:
    """The resource from ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES``;
    ``service.name`` is ``cairn`` unless they name one."""
    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "cairn"}))
    return resource


def _sdk_tracer_provider(resource: Resource) -> TracerProvider:
    provider = trace.get_tracer_provider()
    if isinstance(provider, TracerProvider):
        return provider
    created = TracerProvider(resource=resource)
    trace.set_tracer_provider(created)
    found = trace.get_tracer_provider()
    if not isinstance(found, TracerProvider):  # another kind of provider was set first
        raise TelemetrySetupError(
            f"the global tracer provider is a {type(found).__name__}, not the SDK's "
            "TracerProvider: cairn cannot add its span processors to it"
        )
    return found


def maybe_set_otel_providers(
    otel_hooks_to_setup: list[OTelHooks] | None = None, otel_resource: Resource | None = None
) -> None:
    """Add ``otel_hooks_to_setup`` and the exporters of the environment to the global
    providers, making them (with ``otel_resource``) where none was set. A ``MeterProvider``
    set before cannot take readers: those are then left out, with a warning."""
    hooks = [*(otel_hooks_to_setup or []), otel_exporters()]
    resource = otel_resource or resource_from_env()
    processors = [p for h in hooks for p in h.span_processors]
    readers = [r for h in hooks for r in h.metric_readers]
    if processors:
        provider = _sdk_tracer_provider(resource)
        for processor in processors:
            provider.add_span_processor(processor)
    if readers:
        if isinstance(metrics.get_meter_provider(), MeterProvider):
            logger.warning(
                "a MeterProvider was set before cairn's telemetry setup: the metric exporters "
                "of OTEL_EXPORTER_OTLP_* are not added; add them to your MeterProvider"
            )
            return
        metrics.set_meter_provider(MeterProvider(metric_readers=readers, resource=resource))


def setup_telemetry(internal_exporters: list[SpanProcessor] | None = None) -> None:
    """Set up the providers from the environment, once per process (later calls only add
    ``internal_exporters``). Raises ``TelemetrySetupError`` for a variable it cannot honour."""
    global _set_up
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return
    with _setup_lock:
        if not _set_up:
            maybe_set_otel_providers()
            _sdk_tracer_provider(resource_from_env()).add_span_processor(_joined)
            _set_up = True
    for processor in internal_exporters or []:
        add_span_processor(processor)


def add_span_processor(processor: SpanProcessor) -> None:
    """Send finished spans to ``processor`` too, until ``remove_span_processor``."""
    if not _set_up:
        setup_telemetry()
    with _joined.lock:
        _joined.processors = (*_joined.processors, processor)


def remove_span_processor(processor: SpanProcessor) -> None:
    with _joined.lock:
        _joined.processors = tuple(p for p in _joined.processors if p is not processor)


def flush_telemetry(timeout_millis: int = 30_000) -> None:
    """Export what the global providers hold (call it before a short-lived process exits)."""
    for name, provider in (
        ("tracer", trace.get_tracer_provider()),
        ("meter", metrics.get_meter_provider()),
    ):
        force_flush = getattr(provider, "force_flush", None)
        if force_flush is not None and not force_flush(timeout_millis):
            logger.warning(
                "the OpenTelemetry %s provider did not flush within %d ms", name, timeout_millis
            )


__all__ = [
    "OTelHooks",
    "TelemetrySetupError",
    "add_span_processor",
    "flush_telemetry",
    "maybe_set_otel_providers",
    "otel_exporters",
    "remove_span_processor",
    "resource_from_env",
    "setup_telemetry",
]
