"""A calendar whose tool signs the user in with OAuth2 at the test provider named by
``CAIRN_TEST_OAUTH``; the client secret comes from ``CAIRN_TEST_OAUTH_SECRET``, as a
deployed tool reads its secret from its environment."""

import json
import os
from typing import Any

from cairn import Agent, ToolContext
from cairn.auth import (
    AuthConfig,
    AuthCredential,
    AuthCredentialTypes,
    OAuth2,
    OAuth2Auth,
    OAuthFlowAuthorizationCode,
    OAuthFlows,
)
from cairn.models.llm_request import LlmRequest
from cairn.testing import Call, ScriptedLlm


def auth_config() -> AuthConfig:
    base = os.environ["CAIRN_TEST_OAUTH"]
    return AuthConfig(
        auth_scheme=OAuth2(
            flows=OAuthFlows(
                authorization_code=OAuthFlowAuthorizationCode(
                    authorization_url=f"{base}/authorize",
                    token_url=f"{base}/token",
                    scopes={"calendar.read": "Read your calendar"},
                )
            )
        ),
        raw_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.OAUTH2,
            oauth2=OAuth2Auth(
                client_id="cairn-test-client",
                client_secret=os.environ["CAIRN_TEST_OAUTH_SECRET"],
                redirect_uri="http://127.0.0.1/callback",
            ),
        ),
    )


def calendar(day: str, tool_context: ToolContext) -> dict[str, Any]:
    """Your calendar for a day (needs you to sign in)."""
    config = auth_config()
    credential = tool_context.get_auth_response(config)
    if credential is None or credential.oauth2 is None:
        tool_context.request_credential(config)
        return {"status": "waiting for sign-in"}
    return {"day": day, "token_ends": (credential.oauth2.access_token or "")[-6:]}


def respond(request: LlmRequest) -> Any:
    last = request.contents[-1]
    results = [p.function_response for p in last.parts or [] if p.function_response]
    if not results:
        day = "".join(p.text or "" for p in last.parts or []).strip("?")
        return Call("calendar", day=day)
    return "results: " + json.dumps({r.name: r.response for r in results}, sort_keys=True)


root_agent = Agent(name="calendar", model=ScriptedLlm(respond=respond), tools=[calendar])
