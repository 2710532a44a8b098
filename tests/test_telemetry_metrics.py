"""Model calls, tool calls and invocations are measured with OpenTelemetry metrics under the
GenAI semantic conventions' names (read with the SDK's InMemoryMetricReader)."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from tests.support.recorded_spans import run_weather

from cairn.sessions import InMemorySessionService


@pytest.fixture(scope="module")
def reader() -> InMemoryMetricReader:
    # The global provider can be set once per process: this module's tests share it.
    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    return reader


def points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    data = reader.get_metrics_data()
    assert data is not None
    found: dict[str, list[Any]] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            if scope.scope.name != "cairn":
                continue
            for metric in scope.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)
    return found


def where(found: list[Any], **attributes: Any) -> Any:
    [point] = [p for p in found if dict(p.attributes) == attributes]
    return point


async def test_runs_record_token_usage_durations_invocations_and_tool_errors(
    reader: InMemoryMetricReader,
) -> None:
    await run_weather(InMemorySessionService(), "s1")
    await run_weather(InMemorySessionService(), "s1")
    found = points(reader)

    tokens = found["gen_ai.client.token.usage"]
    model = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "scripted",
        "gen_ai.response.model": "scripted-1",
    }
    sent = where(tokens, **model, **{"gen_ai.token.type": "input"})
    got = where(tokens, **model, **{"gen_ai.token.type": "output"})
    assert isinstance(sent, HistogramDataPoint)
    assert (sent.count, sent.sum, sent.min, sent.max) == (6, 122, 11, 30)
    assert (got.count, got.sum) == (6, 24)

    durations = found["gen_ai.client.operation.duration"]
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "scripted"}
    chats = where(durations, **chat)
    assert chats.count == 6 and chats.sum > 0
    ok_tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather"}
    assert where(durations, **ok_tool).count == 2
    failed_tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_forecast",
        "error.type": "RuntimeError",
    }
    assert where(durations, **failed_tool).count == 2
    errors = where(
        found["cairn.tool.errors"],
        **{"gen_ai.tool.name": "get_forecast", "error.type": "RuntimeError"},
    )
    assert errors.value == 2

    app = {"cairn.app_name": "weather_app"}
    assert where(found["cairn.invocations"], **app).value == 2
    invocations = where(found["cairn.invocation.duration"], **app)
    assert invocations.count == 2 and invocations.sum >= chats.sum / 2
    assert list(chats.explicit_bounds)[:3] == [0.01, 0.02, 0.04]
