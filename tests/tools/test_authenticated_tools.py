"""AuthenticatedFunctionTool, BaseAuthenticatedTool and CredentialManager as ADK apps use
them: a ready key, a key or an OAuth2 sign-in asked of the user through the credential
request, a client-credentials token, and custom schemes served by a BaseAuthProvider."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.genai import types
from pydantic import Field
from tests.auth.token_server import CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, FakeProvider

from cairn import Agent, InMemorySessionService, Runner
from cairn.auth import (
    APIKey,
    APIKeyIn,
    AuthConfig,
    AuthCredential,
    AuthCredentialTypes,
    AuthSchemeType,
    BaseAuthProvider,
    CredentialManager,
    CustomAuthScheme,
    HttpAuth,
    HttpCredentials,
    InMemoryCredentialService,
    OAuth2,
    OAuth2Auth,
    OAuthFlowAuthorizationCode,
    OAuthFlowClientCredentials,
    OAuthFlows,
    OAuthGrantType,
)
from cairn.testing import Call, ScriptedLlm
from cairn.tools.authenticated_function_tool import AuthenticatedFunctionTool
from cairn.tools.base_authenticated_tool import BaseAuthenticatedTool

KEY_SCHEME = APIKey(in_=APIKeyIn.header, name="X-Key")


def key_credential(value: str) -> AuthCredential:
    return AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=value)


async def weather(city: str, credential: AuthCredential) -> dict[str, Any]:
    """The weather in a city."""
    return {"city": city, "key_ends": (credential.api_key or "")[-3:]}


def runner_for(tool: Any, script: list[Any]) -> Runner:
    return Runner(
        app_name="app",
        agent=Agent(name="a", model=ScriptedLlm(script=script), tools=[tool]),
        session_service=InMemorySessionService(),
        credential_service=InMemoryCredentialService(),
    )


async def turn(runner: Runner, message: types.Content | str) -> list[Any]:
    if isinstance(message, str):
        message = types.Content(role="user", parts=[types.Part(text=message)])
    return [
        r.response
        async for e in runner.run_async(user_id="u", session_id="s", new_message=message)
        for r in e.get_function_responses()
    ]


def answer(asked: Any, credential: dict[str, Any]) -> types.Content:
    filled = dict(asked.payload)
    filled["exchangedAuthCredential"] = {
        **(filled.get("exchangedAuthCredential") or {}),
        **credential,
    }
    response = types.FunctionResponse(id=asked.id, name=asked.name, response=filled)
    return types.Content(role="user", parts=[types.Part(function_response=response)])


async def test_a_configured_key_reaches_the_function_and_the_model_never_sees_the_parameter() -> (
    None
):
    config = AuthConfig(auth_scheme=KEY_SCHEME, raw_auth_credential=key_credential("k-123"))
    tool = AuthenticatedFunctionTool(func=weather, auth_config=config)
    declared = tool.declaration().parameters_json_schema
    assert set(declared["properties"]) == {"city"}
    assert await tool.run_async(args={"city": "Oslo"}, tool_context=None) == {
        "city": "Oslo",
        "key_ends": "123",
    }
    # Without an auth config the function runs with no credential.
    plain = AuthenticatedFunctionTool(func=lambda city, credential=None: credential)
    assert await plain.run_async(args={"city": "x"}, tool_context=None) is None


async def test_a_key_is_asked_of_the_user_once_then_kept() -> None:
    tool = AuthenticatedFunctionTool(
        func=weather,
        auth_config=AuthConfig(auth_scheme=KEY_SCHEME),
        response_for_auth_required={"status": "waiting for a key"},
    )
    runner = runner_for(
        tool, [Call("weather", city="Oslo"), "Done.", Call("weather", city="Rome"), "Done."]
    )
    await runner.session_service.create_session(app_name="app", user_id="u", session_id="s")
    await turn(runner, "Oslo?")
    [asked] = await runner.list_pending_interrupts(user_id="u", session_id="s")
    assert asked.kind == "credential" and asked.payload["authScheme"]["name"] == "X-Key"
    done = await turn(runner, answer(asked, {"authType": "apiKey", "apiKey": "user-key-789"}))
    assert {"city": "Oslo", "key_ends": "789"} in done
    assert await turn(runner, "Rome?") == [{"city": "Rome", "key_ends": "789"}]
    stored = await runner.session_service.get_session(app_name="app", user_id="u", session_id="s")
    assert stored is not None and "user-key-789" not in "".join(e.to_json() for e in stored.events)


async def test_an_oauth2_sign_in_gives_the_function_its_access_token() -> None:
    with FakeProvider().running() as provider:
        config = AuthConfig(
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
                    client_id=CLIENT_ID, client_secret=CLIENT_SECRET, redirect_uri=REDIRECT_URI
                ),
            ),
        )

        async def agenda(day: str, credential: AuthCredential) -> dict[str, str]:
            """The user's agenda of a day."""
            assert credential.oauth2 is not None
            return {"day": day, "token": credential.oauth2.access_token or ""}

        tool = AuthenticatedFunctionTool(func=agenda, auth_config=config)
        runner = runner_for(tool, [Call("agenda", day="mon"), "ok"])
        await runner.session_service.create_session(app_name="app", user_id="u", session_id="s")
        await turn(runner, "monday?")
        [asked] = await runner.list_pending_interrupts(user_id="u", session_id="s")
        sign_in = asked.payload["exchangedAuthCredential"]["oauth2"]
        redirected = provider.authorize(sign_in["authUri"])
        done = await turn(
            runner, answer(asked, {"oauth2": {**sign_in, "authResponseUri": redirected}})
        )
        assert {"day": "mon", "token": provider.issued[0]} in done
        assert CLIENT_SECRET not in json.dumps(asked.payload)


async def test_a_client_credentials_token_is_fetched_without_asking() -> None:
    with FakeProvider().running() as provider:
        config = AuthConfig(
            auth_scheme=OAuth2(
                flows=OAuthFlows(
                    client_credentials=OAuthFlowClientCredentials(token_url=provider.token_url)
                )
            ),
            raw_auth_credential=AuthCredential(
                auth_type=AuthCredentialTypes.OAUTH2,
                oauth2=OAuth2Auth(client_id=CLIENT_ID, client_secret=CLIENT_SECRET),
            ),
        )
        assert OAuthGrantType.from_flow(config.auth_scheme.flows) is (  # type: ignore[union-attr]
            OAuthGrantType.CLIENT_CREDENTIALS
        )
        credential = await CredentialManager(config).get_auth_credential(None)
        assert credential is not None and credential.oauth2 is not None
        assert credential.oauth2.access_token == provider.issued[0]
        assert [r.form["grant_type"] for r in provider.requests] == ["client_credentials"]


async def test_a_config_that_cannot_work_is_an_error_result_naming_the_fix() -> None:
    broken = AuthConfig(
        auth_scheme=OAuth2(
            flows=OAuthFlows(
                authorization_code=OAuthFlowAuthorizationCode(
                    authorization_url="https://id.example.com/auth",
                    token_url="https://id.example.com/token",
                )
            )
        )
    )
    tool = AuthenticatedFunctionTool(func=weather, auth_config=broken)
    result = await tool.run_async(args={"city": "x"}, tool_context=None)
    assert "names no OAuth2 client" in result["error"] and "client_id=" in result["error"]


class Greeter(BaseAuthenticatedTool):
    """A tool of one's own that needs a credential."""

    def __init__(self, auth_config: AuthConfig | None) -> None:
        super().__init__(name="greet", description="Greets.", auth_config=auth_config)

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(name=self.name, description=self.description)

    async def _run_async_impl(
        self, *, args: dict[str, Any], tool_context: Any, credential: AuthCredential | None
    ) -> Any:
        if credential is None:
            return "hello, stranger"
        assert credential.http is not None
        return f"hello, {credential.http.credentials.username}"


async def test_a_base_authenticated_tool_gets_its_credential_or_none() -> None:
    basic = AuthConfig(
        auth_scheme={"type": "http", "scheme": "basic"},
        raw_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.HTTP,
            http=HttpAuth(
                scheme="basic", credentials=HttpCredentials(username="ada", password="p")
            ),
        ),
    )
    assert await Greeter(basic).run_async(args={}, tool_context=None) == "hello, ada"
    assert await Greeter(None).run_async(args={}, tool_context=None) == "hello, stranger"
    # Called outside an agent, a tool that must ask the user says why it cannot.
    asking = Greeter(AuthConfig(auth_scheme={"type": "http", "scheme": "basic"}))
    result = await asking.run_async(args={}, tool_context=None)
    assert "without a tool context" in result["error"]


# -- custom schemes ------------------------------------------------------------------------------
class BadgeScheme(CustomAuthScheme):
    """A company badge system: the provider signs a short-lived token for the tool."""

    type_: str = Field(default="badge", alias="type")
    audience: str


class BadgeProvider(BaseAuthProvider):
    def __init__(self) -> None:
        self.asked: list[str] = []

    @property
    def supported_auth_schemes(self) -> tuple[type[Any], ...]:
        return (BadgeScheme,)

    async def get_auth_credential(self, auth_config: AuthConfig, context: Any) -> AuthCredential:
        scheme = auth_config.auth_scheme
        assert isinstance(scheme, BadgeScheme)
        self.asked.append(scheme.audience)
        return AuthCredential(
            auth_type=AuthCredentialTypes.HTTP,
            http=HttpAuth(
                scheme="bearer", credentials=HttpCredentials(token=f"badge-for-{scheme.audience}")
            ),
        )


async def test_a_custom_scheme_gets_its_credential_from_the_registered_provider() -> None:
    provider = BadgeProvider()
    CredentialManager.register_auth_provider(provider)
    config = AuthConfig(auth_scheme=BadgeScheme(audience="payroll"))
    assert config.credential_key is not None and config.credential_key.startswith("badge_")

    async def payroll(credential: AuthCredential) -> str:
        """Who is paid."""
        assert credential.http is not None
        return credential.http.credentials.token or ""

    tool = AuthenticatedFunctionTool(func=payroll, auth_config=config)
    assert await tool.run_async(args={}, tool_context=None) == "badge-for-payroll"
    # Read back from JSON (as a stored request is), the scheme finds its provider again.
    again = AuthConfig.model_validate_json(config.model_dump_json())
    assert type(again.auth_scheme) is CustomAuthScheme
    assert (await CredentialManager(again).get_auth_credential(None)) is not None
    assert provider.asked == ["payroll", "payroll"]


async def test_a_custom_scheme_without_a_provider_is_an_error_result() -> None:
    config = AuthConfig(auth_scheme={"type": "nobody-serves-this", "realm": "x"})
    tool = AuthenticatedFunctionTool(func=weather, auth_config=config)
    result = await tool.run_async(args={"city": "x"}, tool_context=None)
    assert "register_auth_provider" in result["error"]
    with pytest.raises(ValueError, match="supported_auth_schemes"):
        CredentialManager.register_auth_provider(_NoSchemes())


class _NoSchemes(BaseAuthProvider):
    async def get_auth_credential(self, auth_config: AuthConfig, context: Any) -> None:
        return None


def test_scheme_types_and_grant_types_are_adk_s() -> None:
    assert KEY_SCHEME.type_ == AuthSchemeType.apiKey
    assert {t.value for t in AuthSchemeType} == {"apiKey", "http", "oauth2", "openIdConnect"}
    assert OAuthGrantType.AUTHORIZATION_CODE == "authorization_code"
    flows = OAuthFlows(
        authorization_code=OAuthFlowAuthorizationCode(authorization_url="a", token_url="t")
    )
    assert OAuthGrantType.from_flow(flows) is OAuthGrantType.AUTHORIZATION_CODE
    assert OAuthGrantType.from_flow(OAuthFlows()) is None
