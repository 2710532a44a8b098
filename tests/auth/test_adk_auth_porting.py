"""Auth as ADK apps write it: schemes from fastapi.openapi.models, SessionStateCredentialService."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.openapi import models as openapi
from google.genai import types

from cairn import Agent, InMemoryRunner, ToolContext
from cairn.auth import (
    APIKey,
    AuthConfig,
    AuthCredential,
    AuthCredentialTypes,
    HTTPBearer,
    OAuth2,
    OAuth2Auth,
)
from cairn.auth.credential_service import SessionStateCredentialService
from cairn.testing import Call, ScriptedLlm


def test_auth_config_takes_fastapis_scheme_models() -> None:
    oauth = AuthConfig(
        auth_scheme=openapi.OAuth2(
            flows=openapi.OAuthFlows(
                authorizationCode=openapi.OAuthFlowAuthorizationCode(
                    authorizationUrl="https://accounts.example.com/auth",
                    tokenUrl="https://accounts.example.com/token",
                    scopes={"calendar": "See your calendar"},
                )
            )
        ),
        raw_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.OAUTH2,
            oauth2=OAuth2Auth(client_id="id", client_secret="secret"),
        ),
    )
    assert isinstance(oauth.auth_scheme, OAuth2)
    code = oauth.auth_scheme.flows.authorization_code
    assert code is not None and code.token_url == "https://accounts.example.com/token"
    assert code.scopes == {"calendar": "See your calendar"}
    key = AuthConfig(auth_scheme=openapi.APIKey(**{"in": openapi.APIKeyIn.header}, name="X-Key"))
    assert isinstance(key.auth_scheme, APIKey) and key.auth_scheme.name == "X-Key"
    bearer = AuthConfig(auth_scheme=openapi.HTTPBearer(bearerFormat="JWT"))
    assert isinstance(bearer.auth_scheme, HTTPBearer)
    assert bearer.auth_scheme.bearer_format == "JWT"
    # The same scheme gives the same credential key, whichever library built it.
    again = AuthConfig(auth_scheme=APIKey.model_validate({"in": "header", "name": "X-Key"}))
    assert key.credential_key == again.credential_key


def test_an_openid_scheme_without_endpoints_says_what_to_write() -> None:
    url = "https://id.example.com/.well-known/openid-configuration"
    with pytest.raises(ValueError, match="OpenIdConnectWithConfig\\(authorization_endpoint="):
        AuthConfig(auth_scheme=openapi.OpenIdConnect(openIdConnectUrl=url))


API = AuthConfig(auth_scheme=APIKey.model_validate({"in": "header", "name": "X-Key"}))


async def keep_key(tool_context: ToolContext) -> str:
    """Remember the user's API key."""
    credential = AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key="sk-SECRET-1")
    await tool_context.save_credential(
        API.model_copy(update={"exchanged_auth_credential": credential})
    )
    return "kept"


async def use_key(tool_context: ToolContext) -> str:
    """Use the user's API key."""
    found = await tool_context.load_credential(API)
    return "none" if found is None else f"key of {len(found.api_key or '')} characters"


async def test_session_state_credentials_last_for_the_session_and_stay_out_of_its_log() -> None:
    llm = ScriptedLlm(script=[Call("keep_key"), "ok", Call("use_key"), "ok", Call("use_key"), "ok"])
    agent = Agent(name="a", model=llm, tools=[keep_key, use_key])
    runner = InMemoryRunner(agent=agent, app_name="app")
    runner.credential_service = SessionStateCredentialService()
    first = await runner.session_service.create_session(app_name="app", user_id="u")
    second = await runner.session_service.create_session(app_name="app", user_id="u")

    async def answers(session_id: str) -> list[Any]:
        message = types.Content(role="user", parts=[types.Part(text="go")])
        return [
            r.response
            async for e in runner.run_async(user_id="u", session_id=session_id, new_message=message)
            for r in e.get_function_responses()
        ]

    assert await answers(first.id) == [{"result": "kept"}]
    assert await answers(first.id) == [{"result": "key of 11 characters"}]
    assert await answers(second.id) == [{"result": "none"}]  # another session's key
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=first.id
    )
    assert stored is not None
    assert "sk-SECRET-1" not in str(stored.state) + "".join(e.to_json() for e in stored.events)
