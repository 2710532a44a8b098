"""OpenTelemetry for cairn: spans (``spans``), metrics (``metrics``), what a model call sent
and got (``content``), and providers set from the standard environment variables
(``cairn.telemetry.setup``, imported on demand: it needs ``opentelemetry-sdk``)."""

from cairn.telemetry.spans import (
    Invocation,
    ModelResponse,
    agent_span,
    in_span,
    invocation_span,
    model_span,
    record_request,
    record_response,
    record_tool_arguments,
    record_tool_result,
    tool_span,
)

__all__ = [
    "Invocation",
    "ModelResponse",
    "agent_span",
    "in_span",
    "invocation_span",
    "model_span",
    "record_request",
    "record_response",
    "record_tool_arguments",
    "record_tool_result",
    "tool_span",
]
