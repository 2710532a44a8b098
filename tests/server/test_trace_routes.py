"""The trace routes: an invocation's span tree and the session's totals (cairn's routes),
ADK's /debug/trace routes, all read from the session store and only for their own user."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import Request
from tests.server.harness import asgi_client, text
from tests.support.waiting import until

from cairn.server import Principal, ServerSettings
from cairn.server.routes.traces import InvocationTrace, SessionTraces

AGENTS = Path(__file__).resolve().parents[1] / "support" / "trace_agents"
SESSION = "/apps/weather/users/alice/sessions/s1"
TRACES = "/cairn" + SESSION + "/traces"


def as_user(request: Request) -> Principal:
    """Whoever ``X-User`` names, without admin rights."""
    return Principal(user_id=request.headers.get("X-User", "alice"))


@pytest.fixture
async def api() -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(agents_dir=AGENTS, record_spans=True, hook=as_user) as client:
        yield client


async def run_weather(api: httpx.AsyncClient) -> list[dict[str, Any]]:
    assert (await api.post(SESSION, json={})).status_code == 200
    body = {"appName": "weather", "userId": "alice", "sessionId": "s1", "newMessage": text("?")}
    answer = await api.post("/run", json=body)
    assert answer.status_code == 200, answer.text
    events: list[dict[str, Any]] = answer.json()
    return events


async def recorded(api: httpx.AsyncClient, spans: int) -> dict[str, Any]:
    """The session's traces once ``spans`` spans are recorded (they are written in batches)."""
    found: dict[str, Any] = {}

    async def written() -> bool:
        found.update((await api.get(TRACES)).json())
        return bool(found["session"]["spans"] >= spans)

    await until(written, f"{spans} spans recorded")
    return found


async def test_an_invocations_spans_and_the_sessions_totals(api: httpx.AsyncClient) -> None:
    events = await run_weather(api)
    invocation = events[-1]["invocationId"]

    traces = await recorded(api, 7)
    assert traces["recording"] is True
    [totals] = traces["invocations"]
    assert totals["invocationId"] == invocation
    for found in (totals, traces["session"]):
        assert (found["inputTokens"], found["outputTokens"]) == (60, 12)
        assert (found["modelCalls"], found["toolCalls"], found["errors"]) == (3, 2, 1)
        assert found["durationMs"] >= found["modelMs"] > 0 and found["toolMs"] > 0

    tree = (await api.get(f"{TRACES}/{invocation}")).json()
    InvocationTrace.model_validate(tree)  # the JSON the OpenAPI document declares
    SessionTraces.model_validate(traces)
    assert tree["totals"] == totals
    spans = tree["spans"]
    names = {s["spanId"]: s["name"] for s in spans}
    assert [(s["name"], names.get(s["parentSpanId"] or "")) for s in spans] == [
        ("invocation", None),
        ("invoke_agent weather", "invocation"),
        ("chat scripted", "invoke_agent weather"),
        ("execute_tool get_weather", "invoke_agent weather"),
        ("chat scripted", "invoke_agent weather"),
        ("execute_tool get_forecast", "invoke_agent weather"),
        ("chat scripted", "invoke_agent weather"),
    ]
    assert spans[0]["offsetMs"] == 0 and all(s["offsetMs"] >= 0 for s in spans)
    failed = spans[5]
    assert failed["status"] == "ERROR"
    assert failed["statusMessage"] == "RuntimeError: the forecast service for Hangzhou is down"
    assert failed["events"][0]["name"] == "exception"
    answer = spans[6]
    assert (answer["inputTokens"], answer["outputTokens"]) == (30, 6)
    assert answer["eventId"] == events[-1]["id"]
    assert answer["attributes"]["gen_ai.response.finish_reasons"] == ["stop"]


async def test_adks_debug_trace_routes_read_the_store(api: httpx.AsyncClient) -> None:
    events = await run_weather(api)
    await recorded(api, 7)

    trace = (await api.get(f"/debug/trace/{events[-1]['id']}")).json()
    assert trace["gen_ai.usage.output_tokens"] == 6
    assert trace["cairn.event_id"] == events[-1]["id"]
    assert isinstance(trace["trace_id"], int) and isinstance(trace["span_id"], int)
    missing = await api.get("/debug/trace/no-such-event")
    assert (missing.status_code, missing.json()["detail"]) == (404, "Trace not found")

    spans = (await api.get("/debug/trace/session/s1")).json()
    assert len(spans) == 7
    root = spans[0]
    assert set(root) == {
        "name",
        "span_id",
        "trace_id",
        "start_time",
        "end_time",
        "attributes",
        "parent_span_id",
    }
    # The invocation's parent is the HTTP request's span (FastAPI's), which is not cairn's.
    assert root["name"] == "invocation"
    assert root["parent_span_id"] not in {s["span_id"] for s in spans}
    assert spans[1]["parent_span_id"] == root["span_id"]
    assert all(s["end_time"] >= s["start_time"] > 10**18 for s in spans)
    assert (await api.get("/debug/trace/session/no-such-session")).json() == []


async def test_another_user_sees_none_of_it(api: httpx.AsyncClient) -> None:
    events = await run_weather(api)
    await recorded(api, 7)
    bob = {"X-User": "bob"}

    assert (await api.get(TRACES, headers=bob)).status_code == 403
    assert (await api.get(f"{TRACES}/{events[-1]['invocationId']}", headers=bob)).status_code == 403
    assert (await api.get(f"/debug/trace/{events[-1]['id']}", headers=bob)).status_code == 404
    assert (await api.get("/debug/trace/session/s1", headers=bob)).json() == []


async def test_without_recording_the_routes_say_how_to_turn_it_on() -> None:
    async with asgi_client(agents_dir=AGENTS, hook=as_user) as api:
        events = await run_weather(api)
        traces = (await api.get(TRACES)).json()
        assert traces["recording"] is False and traces["invocations"] == []
        missing = await api.get(f"{TRACES}/{events[-1]['invocationId']}")
        assert missing.status_code == 404
        assert "cairn api-server --record-spans" in missing.json()["detail"]
        assert (
            await api.get("/cairn/apps/weather/users/alice/sessions/nope/traces")
        ).status_code == 404


@pytest.mark.parametrize(
    ("environ", "records"),
    [
        ({}, False),
        ({"CAIRN_WEB": "1"}, True),
        ({"CAIRN_WEB": "1", "CAIRN_RECORD_SPANS": "0"}, False),
        ({"CAIRN_RECORD_SPANS": "1"}, True),
    ],
)
def test_spans_are_recorded_with_the_web_ui_or_when_asked(
    environ: dict[str, str], records: bool
) -> None:
    assert ServerSettings.from_env(environ).records_spans is records
