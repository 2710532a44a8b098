"""ADK's hooks on a remote agent's requests: interceptors before and after, the card fetch's
headers, request metadata, a static credential, the newer-integration extension."""

from __future__ import annotations

from typing import Any

import pytest
from a2a.client import ClientCallContext
from a2a.types import Message
from tests.a2a.client.steps import SESSION, USER, texts, turn
from tests.support.a2a_scripted_server import ScriptedA2aServer

from cairn import Event, InMemoryRunner, Runner
from cairn.a2a.agent import (
    A2aCardRequestConfig,
    A2aRemoteAgentConfig,
    CardRequestInterceptor,
    ParametersConfig,
    RequestInterceptor,
)
from cairn.agents.invocation_context import InvocationContext
from cairn.agents.remote_a2a_agent import RemoteA2aAgent
from cairn.auth import AuthCredential, AuthCredentialTypes
from cairn.auth.auth_schemes import APIKey


async def runner_for(agent: RemoteA2aAgent) -> Runner:
    runner = InMemoryRunner(agent=agent, app_name="app")
    await runner.session_service.create_session(app_name="app", user_id=USER, session_id=SESSION)
    return runner


def posted_headers(server: ScriptedA2aServer) -> list[dict[str, str]]:
    return [r["headers"] for r in server.requests() if r["method"] == "POST"]


def card_headers(server: ScriptedA2aServer) -> list[dict[str, str]]:
    return [r["headers"] for r in server.requests() if r["path"].endswith("agent-card.json")]


async def test_interceptors_see_and_change_the_request_and_the_answer(
    server: ScriptedA2aServer,
) -> None:
    async def before(
        ctx: InvocationContext, message: Message, parameters: ParametersConfig
    ) -> tuple[Message | Event, ParametersConfig]:
        parameters.client_call_context = ClientCallContext(service_parameters={"X-Trace": "t-1"})
        message.parts[0].text = message.parts[0].text + " (checked)"
        return message, parameters

    async def after(ctx: InvocationContext, response: Any, event: Event) -> Event | None:
        if event.content and event.content.parts and event.content.parts[0].text:
            event.content.parts[0].text = event.content.parts[0].text.upper()
        return event

    async def card_token(ctx: InvocationContext) -> A2aCardRequestConfig:
        return A2aCardRequestConfig(headers={"X-Card-Token": f"for-{ctx.session.user_id}"})

    config = A2aRemoteAgentConfig(
        request_interceptors=[RequestInterceptor(before_request=before, after_request=after)],
        card_request_interceptors=[CardRequestInterceptor(before_request=card_token)],
    )
    server.script({"answer": "echo {input}"})
    agent = RemoteA2aAgent(
        name="helper",
        agent_card=server.card_url,
        config=config,
        a2a_request_meta_provider=lambda ctx, message: {"tenant": "acme"},
    )
    events = await turn(await runner_for(agent), "hello")
    assert texts(events) == ["ECHO HELLO (CHECKED)"]
    [sent] = server.received()
    assert sent["text"] == "hello (checked)" and sent["requestMetadata"] == {"tenant": "acme"}
    assert all(h.get("x-trace") == "t-1" for h in posted_headers(server))
    assert card_headers(server) and card_headers(server)[0]["x-card-token"] == f"for-{USER}"


async def test_an_interceptor_may_answer_instead_and_nothing_is_sent(
    server: ScriptedA2aServer,
) -> None:
    async def refuse(
        ctx: InvocationContext, message: Message, parameters: ParametersConfig
    ) -> tuple[Message | Event, ParametersConfig]:
        return Event(author="helper", message="not today"), parameters

    config = A2aRemoteAgentConfig(request_interceptors=[RequestInterceptor(before_request=refuse)])
    agent = RemoteA2aAgent(name="helper", agent_card=server.card_url, config=config)
    events = await turn(await runner_for(agent), "hello")
    assert texts(events) == ["not today"] and server.received() == []


async def test_a_static_api_key_goes_with_the_card_fetch_and_every_request(
    server: ScriptedA2aServer,
) -> None:
    server.script({"answer": "hi"})
    agent = RemoteA2aAgent(
        name="helper",
        agent_card=server.card_url,
        auth_scheme=APIKey(in_="header", name="X-Api-Key"),
        auth_credential=AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key="k-123"),
        use_legacy=False,
    )
    assert texts(await turn(await runner_for(agent), "hello")) == ["hi"]
    assert card_headers(server)[0]["x-api-key"] == "k-123"
    posted = posted_headers(server)
    assert posted and all(h.get("x-api-key") == "k-123" for h in posted)
    assert all("a2a-extension" in h.get("a2a-extensions", "") for h in posted)


def test_a_credential_it_cannot_send_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="in a header"):
        RemoteA2aAgent(
            name="helper",
            agent_card="card.json",
            auth_scheme=APIKey(in_="query", name="key"),
            auth_credential=AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key="k"),
        )
