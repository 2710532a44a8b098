"""An OAuth2 sign-in over HTTP, with the server restarted while the user signs in: the client
secret and the tokens are in no response (``/run``, ``/run_sse``, the interrupts, the
session, its events), in no server log line and in no stored row, on SQLite and PostgreSQL;
the new server process still completes the exchange with the tool's own secret."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.auth.token_server import FakeProvider
from tests.server.harness import run_body, sse_payloads, uvicorn_server
from tests.support.databases import postgres_database
from tests.support.stored_rows import stored_rows
from tests.support.waiting import BOUND_SECONDS

AGENTS = Path(__file__).resolve().parent / "oauth_agents"
SESSION = "/apps/calendar/users/ada/sessions/s1"


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "sessions.db")
    else:
        async with postgres_database() as url:  # type: ignore[attr-defined]
            yield url


@pytest.fixture
def provider() -> AsyncIterator[FakeProvider]:  # type: ignore[misc]
    with FakeProvider().running() as running:
        running.client_secret = f"cs-{secrets.token_hex(12)}"
        running.token_tag = f"-{secrets.token_hex(12)}"
        yield running


def answer_to(interrupt: dict[str, Any], redirected: str) -> dict[str, Any]:
    """What a UI sends: the asked config, the URL the provider redirected to filled in."""
    config = dict(interrupt["payload"])
    sign_in = config["exchangedAuthCredential"]["oauth2"]
    config["exchangedAuthCredential"] = {
        **config["exchangedAuthCredential"],
        "oauth2": {**sign_in, "authResponseUri": redirected},
    }
    return config


async def test_an_oauth2_sign_in_over_http_shows_and_stores_no_secret(
    store: str, provider: FakeProvider, tmp_path: Path
) -> None:
    env = {
        "CAIRN_AGENTS_DIR": str(AGENTS),
        "CAIRN_STORE": store,
        "CAIRN_TEST_OAUTH": provider.base_url,
        "CAIRN_TEST_OAUTH_SECRET": provider.client_secret,
    }
    bodies: list[str] = []

    def seen(response: httpx.Response) -> httpx.Response:
        assert response.status_code < 400, response.text
        bodies.append(response.text)
        return response

    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    with uvicorn_server(env, log=logs[0]) as url:
        async with httpx.AsyncClient(base_url=url, timeout=BOUND_SECONDS) as http:
            seen(await http.post(SESSION, json={}))
            seen(await http.post("/run", json=run_body("calendar", "s1", "monday?")))
            [interrupt] = seen(await http.get(f"/cairn{SESSION}/interrupts")).json()
    assert interrupt["name"] == "adk_request_credential"
    auth_uri = interrupt["payload"]["exchangedAuthCredential"]["oauth2"]["authUri"]
    redirected = provider.authorize(auth_uri)  # the user signs in while the server restarts

    with uvicorn_server(env, log=logs[1]) as url:
        async with httpx.AsyncClient(base_url=url, timeout=BOUND_SECONDS) as http:
            answered = seen(
                await http.post(
                    f"/cairn{SESSION}/interrupts/{interrupt['id']}",
                    json={"response": answer_to(interrupt, redirected)},
                )
            )
            assert f'\\"token_ends\\": \\"{provider.issued[0][-6:]}\\"' in answered.text
            # Without a credential service the next call asks again: over /run_sse, answered
            # with a function response over /run.
            body = run_body("calendar", "s1", "tuesday?", streaming=True)
            streamed = seen(await http.post("/run_sse", json=body))
            assert "adk_request_credential" in "".join(sse_payloads(streamed.text))
            [second] = seen(await http.get(f"/cairn{SESSION}/interrupts")).json()
            again = provider.authorize(
                second["payload"]["exchangedAuthCredential"]["oauth2"]["authUri"]
            )
            reply = {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": second["id"],
                            "name": second["name"],
                            "response": answer_to(second, again),
                        }
                    }
                ],
            }
            done = seen(
                await http.post(
                    "/run",
                    json={
                        "appName": "calendar",
                        "userId": "ada",
                        "sessionId": "s1",
                        "newMessage": reply,
                    },
                )
            )
            assert provider.issued[-2][-6:] in done.text  # the second sign-in's access token
            seen(await http.get(SESSION))
            seen(await http.get(f"/cairn{SESSION}/events"))
            assert seen(await http.get(f"/cairn{SESSION}/interrupts")).json() == []

    assert len(provider.requests) == 2  # both codes were exchanged, each by the server
    assert all(r.form["client_secret"] == provider.client_secret for r in provider.requests)
    rows = await stored_rows(store)
    assert rows["cairn_events"], "the flow was stored"
    logged = "\n".join(log.read_text(errors="replace") for log in logs)
    for secret in (provider.client_secret, *provider.issued):
        for text in bodies:
            assert secret not in text, f"{secret!r} was sent to the client: {text[:300]}"
        assert secret not in logged
        for table, lines in rows.items():
            found = [line for line in lines if secret in line]
            assert not found, f"{secret!r} is stored in {table}: {found[0][:300]}"
