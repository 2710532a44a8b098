"""OpenTelemetry metrics of model calls, tool calls and invocations (GenAI conventions).

- ``gen_ai.client.operation.duration`` (histogram, s): model calls (``gen_ai.operation.name``
  ``chat``, ``gen_ai.request.model``) and tool calls (``execute_tool``, ``gen_ai.tool.name``),
  with ``error.type`` when one raised.
- ``gen_ai.client.token.usage`` (histogram, {token}): ``gen_ai.token.type`` ``input`` or
  ``output``, ``gen_ai.request.model``, ``gen_ai.response.model``.
- ``cairn.invocations`` (counter) and ``cairn.invocation.duration`` (histogram, s):
  ``cairn.app_name``, ``error.type``.
- ``cairn.tool.errors`` (counter): ``gen_ai.tool.name``, ``error.type``.

Only ``opentelemetry-api`` is used: the instruments are no-ops until an application
sets a ``MeterProvider``; one set later is used from then on.
"""

from __future__ import annotations

import functools
from typing import Any

from opentelemetry import metrics

from cairn.version import __version__

# The conventions' advised bucket boundaries.
_DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48]
_DURATION_BUCKETS += [40.96, 81.92]
_TOKEN_BUCKETS = [float(4**power) for power in range(14)]


@functools.cache
def _instruments() -> dict[str, Any]:
    # Made once: before a provider is set these are the API's proxies, which forward to it.
    meter = metrics.get_meter("cairn", __version__)
    return {
        "duration": meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="Duration of GenAI operations (model calls, tool calls)",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        ),
        "tokens": meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Tokens used by model calls",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        ),
        "invocations": meter.create_counter(
            "cairn.invocations", unit="{invocation}", description="Invocations run"
        ),
        "invocation_duration": meter.create_histogram(
            "cairn.invocation.duration",
            unit="s",
            description="Duration of invocations",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        ),
        "tool_errors": meter.create_counter(
            "cairn.tool.errors", unit="{error}", description="Tool calls that raised"
        ),
    }


def _with_error(attributes: dict[str, str], error_type: str | None) -> dict[str, str]:
    if error_type is not None:
        attributes["error.type"] = error_type
    return attributes


def record_model_call(model: str, seconds: float, error_type: str | None) -> None:
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
    _instruments()["duration"].record(seconds, _with_error(attributes, error_type))


def record_tool_call(tool: str, seconds: float, error_type: str | None) -> None:
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
    _instruments()["duration"].record(seconds, _with_error(attributes, error_type))
    if error_type is not None:
        errors = {"gen_ai.tool.name": tool, "error.type": error_type}
        _instruments()["tool_errors"].add(1, errors)


def record_tokens(
    model: str, response_model: str | None, input: int | None, output: int | None
) -> None:
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
    if response_model:
        attributes["gen_ai.response.model"] = response_model
    for token_type, count in (("input", input), ("output", output)):
        if count is not None:
            _instruments()["tokens"].record(count, {**attributes, "gen_ai.token.type": token_type})


def record_invocation(app_name: str, seconds: float, error_type: str | None) -> None:
    attributes = _with_error({"cairn.app_name": app_name}, error_type)
    _instruments()["invocations"].add(1, attributes)
    _instruments()["invocation_duration"].record(seconds, attributes)
