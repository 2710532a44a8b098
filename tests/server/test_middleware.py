"""API key, body limit, CORS, request logs and the worker header, on the ASGI app."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator

import pytest
from tests.server.harness import AGENTS, asgi_client, run_body

from cairn.server import ServerSettings


async def test_the_api_key_guards_api_routes_only() -> None:
    async with asgi_client(api_key="s3cret") as api:
        missing = await api.get("/list-apps")
        assert missing.status_code == 401 and "X-API-Key" in missing.json()["detail"]
        assert missing.headers["x-cairn-worker"] == str(os.getpid())
        wrong = await api.get("/list-apps", headers={"X-API-Key": "nope"})
        assert wrong.status_code == 401 and "does not match" in wrong.json()["detail"]
        assert (await api.post("/run", json={})).status_code == 401
        assert (await api.get("/cairn/apps/echo")).status_code == 401
        right = await api.get("/list-apps", headers={"X-API-Key": "s3cret"})
        assert right.status_code == 200
        assert (await api.get("/openapi.json")).status_code == 200
        assert (await api.get("/docs")).status_code == 200


async def test_a_declared_body_over_the_limit_is_413() -> None:
    async with asgi_client(max_body_bytes=200) as api:
        big = run_body("echo", "s", "x" * 500)
        response = await api.post("/run", json=big)
        assert response.status_code == 413 and "200 bytes" in response.json()["detail"]
        small = await api.post("/apps/echo/users/ada/sessions", json={"sessionId": "s"})
        assert small.status_code == 200


async def test_a_streamed_body_over_the_limit_is_413() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"sessionId": "s", "state": {"k": "'
        for _ in range(10):
            yield b"x" * 100
        yield b'"}}'

    async with asgi_client(max_body_bytes=500) as api:
        response = await api.post(
            "/apps/echo/users/ada/sessions",
            content=chunks(),
            headers={"content-type": "application/json"},
        )
        assert "content-length" not in response.request.headers
        assert response.status_code == 413 and "500 bytes" in response.json()["detail"]
        assert (await api.get("/apps/echo/users/ada/sessions")).json() == []


async def test_cors_allows_the_configured_origins() -> None:
    async with asgi_client(cors_origins=["http://ui.example"], api_key="k") as api:
        preflight = await api.options(
            "/run",
            headers={
                "Origin": "http://ui.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "x-api-key,content-type",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "http://ui.example"
        denied = await api.get("/list-apps", headers={"Origin": "http://ui.example"})
        assert denied.status_code == 401  # the 401 still carries CORS headers for the UI
        assert denied.headers["access-control-allow-origin"] == "http://ui.example"
        other = await api.get(
            "/list-apps", headers={"Origin": "http://evil.example", "X-API-Key": "k"}
        )
        assert "access-control-allow-origin" not in other.headers
    async with asgi_client() as api:
        plain = await api.get("/list-apps", headers={"Origin": "http://ui.example"})
        assert "access-control-allow-origin" not in plain.headers


async def test_one_json_log_line_per_request(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="cairn.server.requests")
    async with asgi_client() as api:
        await api.get("/list-apps")
        await api.get("/apps/echo/users/ada/sessions/missing")
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name.endswith("requests")]
    assert [(line["method"], line["path"], line["status"]) for line in lines] == [
        ("GET", "/list-apps", 200),
        ("GET", "/apps/echo/users/ada/sessions/missing", 404),
    ]
    assert all(line["worker"] == os.getpid() and line["duration_ms"] >= 0 for line in lines)


async def test_settings_from_the_environment() -> None:
    settings = ServerSettings.from_env(
        {
            "CAIRN_AGENTS_DIR": "apps",
            "CAIRN_STORE": "memory://",
            "CAIRN_API_KEY": "k",
            "CAIRN_CORS_ORIGINS": "http://a, http://b",
            "CAIRN_MAX_BODY_BYTES": "10",
            "CAIRN_WEB": "1",
            "CAIRN_AUTO_CREATE_SESSION": "1",
            "CAIRN_LEASE_TTL": "2.5",
        }
    )
    assert settings.cors_origins == ["http://a", "http://b"]
    assert settings.lease_ttl == 2.5 and ServerSettings.from_env({}).lease_ttl == 30.0
    assert (settings.max_body_bytes, settings.web, settings.auto_create_session) == (10, True, True)
    assert ServerSettings.from_env({}).store is None
    with pytest.raises(ValueError, match="CAIRN_MAX_BODY_BYTES"):
        ServerSettings.from_env({"CAIRN_MAX_BODY_BYTES": "lots"})
    for ttl in ("soon", "0", "-1"):
        with pytest.raises(ValueError, match=r"lease_ttl|CAIRN_LEASE_TTL"):
            ServerSettings.from_env({"CAIRN_LEASE_TTL": ttl})


async def test_one_agent_file_is_served_as_the_only_app() -> None:
    async with asgi_client(agents_dir=AGENTS / "echo" / "agent.py") as api:
        assert (await api.get("/list-apps")).json() == ["agent"]
        assert (await api.get("/cairn/apps/agent")).json()["kind"] == "agent"
        assert (await api.get("/cairn/apps/echo")).status_code == 404


async def test_web_serves_the_dev_ui_without_the_key() -> None:
    pytest.importorskip("cairn.web")
    async with asgi_client(web=True, api_key="k") as api:
        page = await api.get("/")
        assert page.status_code == 200 and "<html" in page.text.lower()
        assert (await api.get("/list-apps")).status_code == 401
