"""A workflow whose node needs a credential (``node(auth_config=...)``), and one step of it.

test_node_auth.py runs steps in its own process or, through ``main``, in a new one:
``python node_auth_worker.py <store> <kind> <base_url> <step JSON>`` prints the step's
outcome as JSON. ``kind`` is ``api_key`` or ``oauth2`` (at the provider at ``base_url``).
With CAIRN_NODE_AUTH_DIE=1 the node's body kills its process (a crash after the answer).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from typing import Any

from google.genai import types
from tests.auth.token_server import CLIENT_ID, CLIENT_SECRET, REDIRECT_URI

from cairn import Runner
from cairn.agents.context import Context
from cairn.auth import (
    APIKey,
    APIKeyIn,
    AuthConfig,
    AuthCredential,
    AuthCredentialTypes,
    OAuth2,
    OAuth2Auth,
    OAuthFlowAuthorizationCode,
    OAuthFlows,
)
from cairn.auth.credential_service import (
    BaseCredentialService,
    InMemoryCredentialService,
    SessionStoreCredentialService,
)
from cairn.sessions import BaseSessionService
from cairn.sessions.factory import session_service_from_url
from cairn.sessions.sql.store import SqlSessionStore
from cairn.workflow import START, Workflow, node

APP, USER, SESSION = "node_auth", "u", "s"


def auth_config(kind: str, base_url: str) -> AuthConfig:
    if kind == "api_key":
        return AuthConfig(auth_scheme=APIKey(in_=APIKeyIn.header, name="X-Api-Key"))
    return AuthConfig(
        auth_scheme=OAuth2(
            flows=OAuthFlows(
                authorization_code=OAuthFlowAuthorizationCode(
                    authorization_url=f"{base_url}/authorize?prompt=consent",
                    token_url=f"{base_url}/token",
                    scopes={"calendar.read": "Read your calendar"},
                )
            )
        ),
        raw_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.OAUTH2,
            oauth2=OAuth2Auth(
                client_id=CLIENT_ID, client_secret=CLIENT_SECRET, redirect_uri=REDIRECT_URI
            ),
        ),
    )


def workflow(kind: str, base_url: str) -> Workflow:
    config = auth_config(kind, base_url)

    @node(auth_config=config)
    def fetch(ctx: Context) -> dict[str, Any]:
        """Reads the credential the node asked for."""
        if os.environ.get("CAIRN_NODE_AUTH_DIE") == "1":
            os.kill(os.getpid(), signal.SIGKILL)
        credential = ctx.get_auth_response(config)
        assert credential is not None
        ctx.state["runs"] = ctx.state.get("runs", 0) + 1
        secret = credential.api_key or (credential.oauth2 and credential.oauth2.access_token)
        return {"ends": (secret or "")[-6:]}

    return Workflow(name="calendar", edges=[(START, fetch)])


def credential_service_for(store: BaseSessionService) -> BaseCredentialService:
    if isinstance(store, SqlSessionStore):
        return SessionStoreCredentialService(store)
    return InMemoryCredentialService()


def runner_for(store: BaseSessionService, kind: str, base_url: str) -> Runner:
    return Runner(
        app_name=APP,
        agent=workflow(kind, base_url),
        session_service=store,
        credential_service=credential_service_for(store),
        auto_create_session=True,
    )


async def run_step(runner: Runner, step: dict[str, Any]) -> dict[str, Any]:
    """``{"say": text}``, ``{"answer": [interrupt id, response]}`` or ``{"continue": id}``
    (an invocation its process left): the outputs, the credential requests (id and args)
    and the error (its class name and message)."""
    message: types.Content | None = None
    if "say" in step:
        message = types.Content(role="user", parts=[types.Part(text=step["say"])])
    elif "answer" in step:
        call_id, response = step["answer"]
        reply = types.FunctionResponse(id=call_id, name="adk_request_credential", response=response)
        message = types.Content(role="user", parts=[types.Part(function_response=reply)])
    outcome: dict[str, Any] = {"outputs": [], "requests": [], "error": None}
    try:
        async for event in runner.run_async(
            user_id=USER,
            session_id=SESSION,
            new_message=message,
            invocation_id=step.get("continue"),
        ):
            if event.output is not None and event.node_info.path.startswith("calendar@1/"):
                outcome["outputs"].append(event.output)
            for call in event.get_function_calls():
                if call.name == "adk_request_credential":
                    outcome["requests"].append({"id": call.id, "args": call.args})
    except Exception as error:
        outcome["error"] = [type(error).__name__, str(error)]
    return outcome


async def main(store_url: str, kind: str, base_url: str, step: str) -> None:
    store = session_service_from_url(store_url)
    try:
        print(json.dumps(await run_step(runner_for(store, kind, base_url), json.loads(step))))
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
