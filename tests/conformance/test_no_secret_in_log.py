"""No secret in the log, on every store: an OAuth2 sign-in asked by one Runner and answered
through another (as after a restart: nothing of the first is in memory), with the client
secret and the tokens searched for in every row of every table the store holds."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from google.genai import types
from sqlalchemy import Connection, MetaData, select
from tests.auth.token_server import CLIENT_ID, REDIRECT_URI, FakeProvider
from tests.support.recorded_spans import recording

from cairn import Agent, Runner, ToolContext
from cairn.auth import (
    AuthConfig,
    AuthCredential,
    AuthCredentialTypes,
    OAuth2,
    OAuth2Auth,
    OAuthFlowAuthorizationCode,
    OAuthFlows,
    SessionStoreCredentialService,
    new_encryption_key,
)
from cairn.models.llm_request import LlmRequest
from cairn.sessions import BaseSessionService, InMemorySessionService
from cairn.sessions.sql.store import SqlSessionStore
from cairn.telemetry.content import CAPTURE_ENV
from cairn.testing import Call, ScriptedLlm

APP, USER, SESSION = "calendar", "ada", "s1"


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with FakeProvider().running() as running:
        running.client_secret = f"cs-{secrets.token_hex(12)}"
        running.token_tag = f"-{secrets.token_hex(12)}"
        yield running


def runner_on(store: BaseSessionService, provider: FakeProvider, key: str) -> Runner:
    """A Runner as a fresh process builds it: the tool's config read from its settings."""

    def config() -> AuthConfig:
        return AuthConfig(
            auth_scheme=OAuth2(
                flows=OAuthFlows(
                    authorization_code=OAuthFlowAuthorizationCode(
                        authorization_url=provider.authorization_url,
                        token_url=provider.token_url,
                        scopes={"calendar.read": "Read your calendar"},
                    )
                )
            ),
            raw_auth_credential=AuthCredential(
                auth_type=AuthCredentialTypes.OAUTH2,
                oauth2=OAuth2Auth(
                    client_id=CLIENT_ID,
                    client_secret=provider.client_secret,
                    redirect_uri=REDIRECT_URI,
                ),
            ),
        )

    async def calendar(day: str, tool_context: ToolContext) -> dict[str, Any]:
        """Your calendar for a day."""
        credential = tool_context.get_auth_response(config()) or (
            await tool_context.load_credential(config())
        )
        if credential is None or credential.oauth2 is None:
            tool_context.request_credential(config())
            return {"status": "waiting for sign-in"}
        return {"day": day, "token_ends": (credential.oauth2.access_token or "")[-6:]}

    def respond(request: LlmRequest) -> Any:
        answered = any(p.function_response for p in request.contents[-1].parts or [])
        return "Done." if answered else Call("calendar", day="monday")

    model = ScriptedLlm(respond=respond)
    return Runner(
        app_name=APP,
        agent=Agent(name="clerk", model=model, tools=[calendar]),
        session_service=store,
        credential_service=SessionStoreCredentialService(store, encryption_key=key),
    )


async def every_row(store: BaseSessionService) -> dict[str, list[str]]:
    """Each table's rows as text (the in-memory store: its session's events and state)."""
    if isinstance(store, InMemorySessionService):
        session = await store.get_session(app_name=APP, user_id=USER, session_id=SESSION)
        assert session is not None
        spans = await store.spans.spans_of_session_id(SESSION)
        return {
            "events": [e.to_json() for e in session.events],
            "state": [json.dumps(session.state)],
            "spans": [json.dumps([s.attributes, s.events, s.status_message]) for s in spans],
        }
    assert isinstance(store, SqlSessionStore)

    def read(connection: Connection) -> dict[str, list[str]]:
        tables = MetaData()
        tables.reflect(connection)
        return {
            name: [" | ".join(str(value) for value in row) for row in connection.execute(select(t))]
            for name, t in tables.tables.items()
        }

    return await store.database.transaction(read, write=False)


async def test_a_sign_in_leaves_no_secret_in_any_row(
    store: BaseSessionService, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Spans are recorded, with what each model and tool call sent and got: no secret there either.
    monkeypatch.setenv(CAPTURE_ENV, "true")
    async with recording(store):
        await sign_in_twice(store, provider)

    rows = await every_row(store)
    spans = rows["spans" if "spans" in rows else "cairn_spans"]
    assert any("execute_tool" in line and "calendar" in line for line in spans)
    for secret in (provider.client_secret, *provider.issued):
        for table, lines in rows.items():  # credentials are encrypted: not even there
            found = [line for line in lines if secret in line]
            assert not found, f"{secret!r} is stored in {table}: {found[0][:300]}"


async def sign_in_twice(store: BaseSessionService, provider: FakeProvider) -> None:
    key = new_encryption_key()
    await store.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    say = types.Content(role="user", parts=[types.Part(text="monday?")])
    asking = runner_on(store, provider, key)
    asked = [e async for e in asking.run_async(user_id=USER, session_id=SESSION, new_message=say)]
    [interrupt] = await asking.list_pending_interrupts(user_id=USER, session_id=SESSION)
    sign_in = interrupt.payload["exchangedAuthCredential"]["oauth2"]
    redirected = provider.authorize(sign_in["authUri"])
    answer = {
        **interrupt.payload,
        "exchangedAuthCredential": {
            "authType": "oauth2",
            "oauth2": {**sign_in, "authResponseUri": redirected},
        },
    }
    reply = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=interrupt.id, name=interrupt.name, response=answer
                )
            )
        ],
    )
    answering = runner_on(store, provider, key)  # nothing of the asking Runner is used
    done = [
        e async for e in answering.run_async(user_id=USER, session_id=SESSION, new_message=reply)
    ]
    [token, *_] = provider.issued
    results = [r.response for e in done for r in e.get_function_responses()]
    assert results == [{"day": "monday", "token_ends": token[-6:]}]

    shown = json.dumps([e.model_dump(mode="json") for e in asked + done])
    for secret in (provider.client_secret, *provider.issued):
        assert secret not in shown
