"""No secret enters the log or reaches the caller (issue 13, item 4): an OAuth2 sign-in and
an API-key answer, on every store, each step in this process or in a new one.

The client secret is in no stored row of any table, in no event or interrupt the caller
gets, in no log record or span; tokens and keys are only in the credential service's
table. The tool still gets its credential, and the request keeps ADK's shape.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from tests.auth.token_server import CLIENT_ID, FakeProvider
from tests.hitl.driver import SESSION, USER, Driver, Outcome
from tests.hitl.scenarios import APP, runs
from tests.hitl.test_interrupts import with_credential
from tests.support.databases import postgres_database
from tests.support.stored_rows import stored_rows

CREDENTIALS_TABLE = "cairn_credentials"


class _Spans(SpanProcessor):
    def __init__(self) -> None:
        self.ended: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.ended.append(span)


@pytest.fixture
def spans() -> Iterator[_Spans]:
    """Spans cairn emits in this process while the test runs."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())
    provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    collected = _Spans()
    provider.add_span_processor(collected)
    yield collected
    collected.ended.clear()  # a provider cannot drop a processor: keep this one empty


def span_text(collected: _Spans) -> str:
    return "\n".join(
        f"{s.name} {dict(s.attributes or {})} {s.status.description} "
        f"{[(e.name, dict(e.attributes or {})) for e in s.events]}"
        for s in collected.ended
    )


@pytest.fixture
def provider(oauth_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    """The provider with a client secret and tokens unique to this test (to search for)."""
    oauth_provider.client_secret = f"cs-{secrets.token_hex(12)}"
    oauth_provider.token_tag = f"-{secrets.token_hex(12)}"
    monkeypatch.setenv("CAIRN_HITL_OAUTH_SECRET", oauth_provider.client_secret)
    return oauth_provider


def shown(*outcomes: Outcome) -> str:
    """Everything the caller got: events, pending interrupts, errors."""
    return "\n".join(
        json.dumps(
            {
                "events": [event.model_dump(mode="json") for event in outcome.events],
                "pending": [interrupt.model_dump(mode="json") for interrupt in outcome.pending],
                "error": outcome.error,
            }
        )
        for outcome in outcomes
    )


async def everything_stored(driver: Driver) -> dict[str, list[str]]:
    """Every stored row by table; for the in-memory store, what it keeps of the session."""
    if driver.store_url == "memory://":
        assert driver._runner is not None
        session = await driver._runner.session_service.get_session(
            app_name=APP, user_id=USER, session_id=SESSION
        )
        assert session is not None
        return {
            "events": [event.to_json() for event in session.events],
            "state": [json.dumps(session.state)],
        }
    return await stored_rows(driver.store_url)


def assert_nowhere(secret: str, rows: dict[str, list[str]], *, but: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    for table, lines in rows.items():
        if table in but:
            continue
        found = [line for line in lines if secret in line]
        assert not found, f"{secret!r} is stored in {table}: {found[0][:300]}"


async def test_an_oauth2_sign_in_stores_and_shows_no_secret(  # type: ignore[no-untyped-def]
    drive, provider: FakeProvider, spans: _Spans, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.DEBUG)
    driver = drive("credential_oauth")
    asked = await driver.step({"say": "what is on monday?"})
    [interrupt] = asked.pending
    # ADK's call name and argument keys; the config names the tool's config, not its secret.
    assert interrupt.name == "adk_request_credential"
    assert {"functionCallId", "authConfig"} <= set(interrupt.args)
    config: dict[str, Any] = interrupt.payload
    assert config["credentialKey"].startswith("oauth2_")
    assert config["authScheme"]["flows"]["authorizationCode"]["tokenUrl"] == provider.token_url
    assert config["rawAuthCredential"]["oauth2"]["clientId"] == CLIENT_ID
    sign_in = config["exchangedAuthCredential"]["oauth2"]
    assert {"authUri", "state", "clientId"} <= set(sign_in)
    # A confidential client's PKCE verifier is derived from its secret: not in the request.
    assert "clientSecret" not in json.dumps(config) and "codeVerifier" not in json.dumps(config)

    redirected = provider.authorize(sign_in["authUri"])
    # A client that echoes ADK's whole config, the secret and tokens included, stores none.
    answer = with_credential(
        interrupt,
        {"oauth2": {**sign_in, "authResponseUri": redirected, "clientSecret": "echoed-secret"}},
    )
    done = await driver.step({"answer": [[interrupt.id, interrupt.name, answer]]})
    assert done.error is None and done.pending == [], done.error
    access_token = provider.issued[0]
    assert f'"token_ends": "{access_token[-6:]}"' in done.text  # the tool got the token
    [exchange] = provider.requests
    assert exchange.form["client_secret"] == provider.client_secret
    assert exchange.form["code_verifier"]  # derived again from the tool's own secret

    again = await driver.step({"say": "and tuesday?"})  # the kept token is used
    assert again.pending == [] and f'"token_ends": "{access_token[-6:]}"' in again.text
    assert runs(tmp_path / "runs.txt") == {"calendar": 2}

    rows = await everything_stored(driver)
    seen = shown(asked, done, again)
    logged = caplog.text + span_text(spans)
    for secret in (provider.client_secret, "echoed-secret"):
        assert_nowhere(secret, rows)
        assert secret not in seen and secret not in logged
    for token in provider.issued:  # tokens belong to the credential service only
        assert_nowhere(token, rows, but={CREDENTIALS_TABLE})
        assert token not in seen and token not in logged
    if driver.store_url != "memory://":
        [kept] = rows[CREDENTIALS_TABLE]
        assert access_token in kept and provider.client_secret not in kept


async def test_an_api_key_answer_stores_and_shows_no_key(  # type: ignore[no-untyped-def]
    drive, spans: _Spans, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    key = f"k-{secrets.token_hex(12)}"
    driver = drive("credential_key")
    asked = await driver.step({"say": "weather in Paris"})
    [interrupt] = asked.pending
    answer = with_credential(interrupt, {"authType": "apiKey", "apiKey": key})
    done = await driver.step({"answer": [[interrupt.id, interrupt.name, answer]]})
    assert done.error is None and done.pending == [], done.error
    assert f'"key_ends": "{key[-3:]}"' in done.text
    again = await driver.step({"say": "and tomorrow?"})
    assert again.pending == [] and f'"key_ends": "{key[-3:]}"' in again.text

    rows = await everything_stored(driver)
    assert_nowhere(key, rows, but={CREDENTIALS_TABLE})
    assert key not in shown(asked, done, again)
    assert key not in caplog.text + span_text(spans)


@pytest.fixture(params=["sqlite", "postgres"])
async def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "sessions.db")
    else:
        async with postgres_database() as url:  # type: ignore[attr-defined]
            yield url


async def test_an_answer_whose_process_died_is_asked_for_again(
    store_url: str, tmp_path: Path
) -> None:
    """The key was only in the process that got the answer: the one that continues the
    invocation asks again, and the key is stored nowhere meanwhile."""
    crash = {"CAIRN_HITL_TTL": "1", "CAIRN_HITL_WAIT": "10"}
    key = f"k-{secrets.token_hex(12)}"
    driver = Driver(store_url, "credential_key", "new", tmp_path / "runs.txt")
    [interrupt] = (await driver.step({"say": "weather in Paris"})).pending
    answer = with_credential(interrupt, {"authType": "apiKey", "apiKey": key})
    died = await driver.step(
        {"answer": [[interrupt.id, interrupt.name, answer]]}, CAIRN_HITL_DIE="weather", **crash
    )
    assert died.killed
    assert_nowhere(key, await stored_rows(store_url))
    resumed = await driver.step({"continue": interrupt.invocation_id}, **crash)
    assert resumed.error is None, resumed.error
    [asked_again] = resumed.pending
    assert asked_again.kind == "credential" and asked_again.id != interrupt.id
    assert asked_again.function_call is not None
    assert asked_again.function_call.id == interrupt.function_call.id  # the same call
    answer = with_credential(asked_again, {"authType": "apiKey", "apiKey": key})
    done = await driver.step({"answer": [[asked_again.id, asked_again.name, answer]]}, **crash)
    assert done.error is None and done.pending == [], done.error
    assert f'"key_ends": "{key[-3:]}"' in done.text
    assert_nowhere(key, await stored_rows(store_url), but={CREDENTIALS_TABLE})
