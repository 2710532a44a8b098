"""The standard OTEL_* variables send a run's spans and metrics to an OTLP backend: here a
real OTLP/HTTP receiver decoding the protobuf bodies, and `cairn run` or
``cairn.telemetry.setup.setup_telemetry()`` in a fresh process, as a user runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
from tests.server.harness import uvicorn_server
from tests.support.otlp_receiver import Received, attributes, otlp_receiver
from tests.support.waiting import BOUND_SECONDS, wait_until

ROOT = Path(__file__).resolve().parent.parent

AGENT = """\
from tests.support.recorded_spans import weather_agent

root_agent = weather_agent()
"""


def cairn_run(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "weather.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "turns.txt").write_text("Weather in Hangzhou?\n", encoding="utf-8")
    command = [sys.executable, "-m", "cairn.cli", "run", str(tmp_path / "weather.py")]
    command += ["--replay", str(tmp_path / "turns.txt"), "--store", "memory://"]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    pythonpath = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    return subprocess.run(
        command,
        env={**clean, "PYTHONPATH": pythonpath, **env},
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )


def test_cairn_run_exports_spans_and_metrics_to_the_otlp_endpoint(tmp_path: Path) -> None:
    with otlp_receiver() as received:
        done = cairn_run(
            tmp_path,
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": received.url,
                "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20t0ken,x-team=agents",
                "OTEL_SERVICE_NAME": "weather-service",
                "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=test",
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
            },
        )
    assert done.returncode == 0, done.stderr
    assert "It is 23°C." in done.stdout

    spans = received.spans()
    names = sorted(span.name for _, span in spans)
    assert names == sorted(
        ["invocation", "invoke_agent weather", "execute_tool get_weather"]
        + ["execute_tool get_forecast"]
        + ["chat scripted"] * 3
    )
    resource = spans[0][0]
    assert resource["service.name"] == "weather-service"
    assert resource["deployment.environment"] == "test"
    chat = next(span for _, span in spans if span.name == "chat scripted")
    held = attributes(chat.attributes)
    assert held["gen_ai.usage.input_tokens"] == 11
    assert '"Weather in Hangzhou?"' in held["gen_ai.input.messages"]
    failed = next(span for _, span in spans if span.name == "execute_tool get_forecast")
    assert failed.status.code == failed.status.STATUS_CODE_ERROR
    assert all(h["authorization"] == "Bearer t0ken" for h in received.headers)
    assert all(h["x-team"] == "agents" for h in received.headers)
    assert {
        "gen_ai.client.token.usage",
        "gen_ai.client.operation.duration",
        "cairn.invocations",
        "cairn.invocation.duration",
        "cairn.tool.errors",
    } <= received.metric_names()


SETUP = """\
import asyncio
from cairn.sessions import InMemorySessionService
from cairn.telemetry.setup import flush_telemetry, setup_telemetry
from tests.support.recorded_spans import run_weather

setup_telemetry()
asyncio.run(run_weather(InMemorySessionService(), "s1"))
flush_telemetry()
"""


def run_setup(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    pythonpath = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    return subprocess.run(
        [sys.executable, "-c", SETUP],
        env={**clean, "PYTHONPATH": pythonpath, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_traces_endpoint_exports_spans_only_to_that_url() -> None:
    received: Received
    with otlp_receiver() as received:
        done = run_setup(
            {
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": received.url + "/v1/traces",
                "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            }
        )
    assert done.returncode == 0, done.stderr
    assert len(received.spans()) == 7
    assert received.metrics == []
    assert received.spans()[0][0]["service.name"] == "cairn"


def test_an_unsupported_protocol_is_refused_with_what_to_use_instead() -> None:
    done = run_setup(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
        }
    )
    assert done.returncode != 0
    assert "OTEL_EXPORTER_OTLP_PROTOCOL='http/json' is not supported" in done.stderr
    assert "use http/protobuf" in done.stderr


def test_an_api_server_exports_its_runs_spans_to_the_otlp_endpoint() -> None:
    agents = ROOT / "tests" / "support" / "trace_agents"
    with otlp_receiver() as received:
        env = {
            "CAIRN_AGENTS_DIR": str(agents),
            "CAIRN_STORE": "memory://",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": received.url + "/v1/traces",
            "OTEL_SERVICE_NAME": "weather-api",
            # An api-server as started plainly: neither the web UI nor recording asked for,
            # whatever an earlier test left in this process's environment.
            "CAIRN_WEB": "",
            "CAIRN_RECORD_SPANS": "",
        }
        with uvicorn_server(env) as url:
            session = "/apps/weather/users/ada/sessions/s1"
            assert httpx.post(url + session, json={}, timeout=BOUND_SECONDS).status_code == 200
            message = {"role": "user", "parts": [{"text": "Weather?"}]}
            body = {"appName": "weather", "userId": "ada", "sessionId": "s1", "newMessage": message}
            assert httpx.post(url + "/run", json=body, timeout=BOUND_SECONDS).status_code == 200

            def exported() -> bool:
                return "invocation" in {span.name for _, span in received.spans()}

            wait_until(exported, "the invocation's span exported")
            traces = httpx.get(url + "/cairn" + session + "/traces", timeout=BOUND_SECONDS)
    cairn_spans = [span for _, span in received.spans() if span.name != "invocation"]
    assert {"invoke_agent weather", "execute_tool get_forecast"} <= {s.name for s in cairn_spans}
    assert received.spans()[0][0]["service.name"] == "weather-api"
    # api-server records nothing into the store unless asked: OTLP export is separate.
    assert traces.json()["recording"] is False
