"""A server failure tells the client only that the server failed, and an error id; the
detail (SQL, paths, the exception's text, its traceback) is in the server's log under it."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from tests.server.fault_agents.leaky.agent import SECRET
from tests.server.harness import FAULT_AGENTS, asgi_client, run_body, sse_payloads
from tests.support.databases import postgres_database


def assert_safe(response: httpx.Response, *leaks: str) -> str:
    """``response`` is a server failure's (a 5xx, or a stream's last event): a generic detail
    naming its error id, and none of ``leaks``. Returns the error id."""
    if response.headers["content-type"].startswith("text/event-stream"):
        assert response.status_code == 200
        last = json.loads(sse_payloads(response.text)[-1])
        assert set(last) == {"error", "errorId"}, last
        detail, error_id = last["error"], last["errorId"]
    else:
        assert response.status_code >= 500
        body = response.json()
        assert set(body) == {"detail", "errorId"}, body
        detail, error_id = body["detail"], body["errorId"]
    assert len(error_id) == 32 and error_id in detail
    for leak in leaks:
        assert leak not in response.text, (leak, response.text)
    return str(error_id)


def logged(caplog: pytest.LogCaptureFixture, error_id: str) -> str:
    """What the server logged under ``error_id``: its message and traceback."""
    found = [
        record
        for record in caplog.records
        if record.name == "cairn.server" and error_id in record.getMessage()
    ]
    assert len(found) == 1, [r.getMessage() for r in caplog.records]
    record = found[0]
    assert record.levelno == logging.ERROR and record.exc_text
    return f"{record.getMessage()}\n{record.exc_text}"


SQL_LEAKS = ("SELECT", "INSERT", "cairn_sessions", "[SQL", "parameters", "does not exist")


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/apps/leaky/users/ada/sessions", None),
        ("POST", "/apps/leaky/users/ada/sessions", {}),
        ("GET", "/cairn/apps/leaky/users/ada/sessions", None),
        ("POST", "/run", run_body("leaky", "s", "hi")),
        ("POST", "/run_sse", run_body("leaky", "s", "hi")),
    ],
)
async def test_a_database_failure_on_postgres_shows_no_sql(
    caplog: pytest.LogCaptureFixture, method: str, path: str, body: dict[str, Any] | None
) -> None:
    # A real failure inside PostgreSQL whose text quotes the statement: the sessions table
    # is moved away under the running server (ids the server refuses never get that far).
    caplog.set_level(logging.ERROR, logger="cairn.server")
    async with postgres_database() as url, asgi_client(agents_dir=FAULT_AGENTS, store=url) as api:
        made = await api.post("/apps/leaky/users/ada/sessions", json={"sessionId": "s"})
        assert made.status_code == 200
        admin = create_async_engine(url, isolation_level="AUTOCOMMIT")
        async with admin.connect() as connection:
            await connection.execute(text("ALTER TABLE cairn_sessions RENAME TO moved_away"))
        await admin.dispose()
        response = await api.request(method, path, json=body)
        error_id = assert_safe(response, *SQL_LEAKS)
        detail = logged(caplog, error_id)
        assert "cairn_sessions" in detail and "does not exist" in detail


async def test_an_over_long_artifact_name_shows_no_path(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.ERROR, logger="cairn.server")
    root = tmp_path / "artifact-root"
    async with asgi_client(agents_dir=FAULT_AGENTS, artifact_store=str(root)) as api:
        await api.post("/apps/leaky/users/ada/sessions", json={"sessionId": "s"})
        too_long = "save-as " + "n" * 300
        leaks = (str(tmp_path), "artifact-root", "File name too long", "OSError", "n" * 100)

        for route in ("/run", "/run_sse"):
            response = await api.post(route, json=run_body("leaky", "s", too_long))
            error_id = assert_safe(response, *leaks)
            detail = logged(caplog, error_id)
            assert str(root) in detail and "File name too long" in detail


async def test_an_agent_that_raises_shows_neither_its_message_nor_its_type(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="cairn.server")
    leaks = (SECRET, "hunter2", "/srv/vault", "RuntimeError", "unlock")
    async with asgi_client(agents_dir=FAULT_AGENTS) as api:
        await api.post("/apps/leaky/users/ada/sessions", json={"sessionId": "s"})

        for route in ("/run", "/run_sse"):
            response = await api.post(route, json=run_body("leaky", "s", "leak"))
            assert SECRET in logged(caplog, assert_safe(response, *leaks))


async def test_an_unreachable_store_is_503_without_its_location(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="cairn.server")
    store = "postgresql+asyncpg://cairn_user@127.0.0.1:9/cairn_secret_db"
    async with asgi_client(agents_dir=FAULT_AGENTS, store=store) as api:
        response = await api.get("/apps/leaky/users/ada/sessions")
        assert response.status_code == 503
        leaks = ("127.0.0.1", ":9", "cairn_secret_db", "cairn_user", "refused", "Errno")
        error_id = assert_safe(response, *leaks)
        assert "retry" in response.json()["detail"]
        assert "cairn_secret_db" in logged(caplog, error_id)


async def test_request_errors_keep_their_message_and_have_no_error_id(
    api: httpx.AsyncClient,
) -> None:
    missing = await api.get("/apps/echo/users/ada/sessions/nope")
    assert missing.status_code == 404
    assert set(missing.json()) == {"detail"} and "'nope'" in missing.json()["detail"]
