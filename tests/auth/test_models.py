"""Auth models: camelCase JSON in and out, stable credential keys, and checks that name the fix."""

from __future__ import annotations

import json

import pytest

from cairn.auth import (
    APIKey,
    APIKeyIn,
    AuthConfig,
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HTTPBase,
    HTTPBearer,
    HttpCredentials,
    InvalidCredentialError,
    OAuth2,
    OAuth2Auth,
    OAuthFlowAuthorizationCode,
    OAuthFlows,
    accept_auth_response,
    check_credential,
    complete_credential,
    derive_credential_key,
)


def calendar_config(**oauth2: object) -> AuthConfig:
    fields: dict[str, object] = {"client_id": "client-1", "client_secret": "s3cret", **oauth2}
    return AuthConfig(
        auth_scheme=OAuth2(
            flows=OAuthFlows(
                authorization_code=OAuthFlowAuthorizationCode(
                    authorization_url="https://accounts.example.com/authorize",
                    token_url="https://accounts.example.com/token",
                    scopes={"calendar.read": "Read your calendar"},
                )
            )
        ),
        raw_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth.model_validate(fields)
        ),
    )


def api_key_config(key: str | None = "k-123") -> AuthConfig:
    return AuthConfig(
        auth_scheme=APIKey(in_=APIKeyIn.header, name="X-API-Key"),
        raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=key),
    )


def test_credential_types_have_the_openapi_values() -> None:
    assert [t.value for t in AuthCredentialTypes] == [
        "apiKey",
        "http",
        "oauth2",
        "openIdConnect",
        "serviceAccount",
    ]
    assert AuthCredentialTypes("oauth2") is AuthCredentialTypes.OAUTH2


def test_auth_config_json_is_camel_case_and_round_trips() -> None:
    config = calendar_config(redirect_uri="https://app.example.com/cb", scopes=["calendar.read"])
    text = config.model_dump_json(exclude_none=True)
    data = json.loads(text)
    assert set(data) == {"authScheme", "rawAuthCredential", "credentialKey"}
    flow = data["authScheme"]["flows"]["authorizationCode"]
    assert flow["authorizationUrl"] == "https://accounts.example.com/authorize"
    assert flow["tokenUrl"] == "https://accounts.example.com/token"
    assert data["authScheme"]["type"] == "oauth2"
    assert data["rawAuthCredential"]["authType"] == "oauth2"
    assert data["rawAuthCredential"]["oauth2"]["clientId"] == "client-1"
    assert data["rawAuthCredential"]["oauth2"]["redirectUri"] == "https://app.example.com/cb"
    assert AuthConfig.model_validate_json(text) == config
    # snake_case is accepted too, as in Python.
    snake = config.model_dump(by_alias=False, exclude_none=True)
    assert AuthConfig.model_validate(snake) == config


def test_schemes_read_openapi_security_schemes() -> None:
    header = AuthConfig.model_validate(
        {"authScheme": {"type": "apiKey", "in": "header", "name": "X-Key"}}
    )
    assert isinstance(header.auth_scheme, APIKey) and header.auth_scheme.in_ is APIKeyIn.header
    assert header.model_dump(exclude_none=True)["authScheme"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-Key",
    }
    bearer = AuthConfig.model_validate(
        {"authScheme": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}}
    )
    assert isinstance(bearer.auth_scheme, HTTPBearer)
    assert bearer.auth_scheme.bearer_format == "JWT"
    basic = AuthConfig.model_validate({"authScheme": {"type": "http", "scheme": "basic"}})
    assert type(basic.auth_scheme) is HTTPBase


def test_unknown_fields_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="clientSecrett"):
        OAuth2Auth.model_validate({"clientId": "c", "clientSecrett": "typo"})


def test_secrets_are_not_in_repr() -> None:
    credential = AuthCredential(
        auth_type=AuthCredentialTypes.OAUTH2,
        oauth2=OAuth2Auth(
            client_id="client-1",
            client_secret="s3cret",
            access_token="at-very-secret",
            refresh_token="rt-very-secret",
        ),
    )
    shown = repr(credential) + str(credential) + repr(api_key_config("k-secret"))
    assert "client-1" in shown
    for secret in ("s3cret", "at-very-secret", "rt-very-secret", "k-secret"):
        assert secret not in shown


def test_the_credential_key_is_stable_and_reveals_no_secret() -> None:
    config = calendar_config()
    # Pinned: the key is part of the storage format; changing it orphans stored credentials.
    assert config.credential_key == "oauth2_e2477447ca66fa6d"
    assert calendar_config().credential_key == config.credential_key
    # The same tool config maps to the same key, whatever its secrets ...
    assert calendar_config(client_secret="other").credential_key == config.credential_key
    assert api_key_config("one").credential_key == api_key_config("two").credential_key
    # ... and another client, scheme or scope set to another key.
    assert calendar_config(client_id="client-2").credential_key != config.credential_key
    other_scopes = config.model_copy(deep=True)
    assert isinstance(other_scopes.auth_scheme, OAuth2)
    flow = other_scopes.auth_scheme.flows.authorization_code
    assert flow is not None
    flow.scopes["calendar.write"] = "Change your calendar"
    assert (
        derive_credential_key(other_scopes.auth_scheme, other_scopes.raw_auth_credential)
        != config.credential_key
    )
    assert "s3cret" not in str(config.credential_key)
    # Rewording a description keeps the key.
    reworded = config.model_copy(deep=True)
    assert isinstance(reworded.auth_scheme, OAuth2)
    reworded.auth_scheme.description = "Calendar access"
    reworded_flow = reworded.auth_scheme.flows.authorization_code
    assert reworded_flow is not None
    reworded_flow.scopes["calendar.read"] = "See your events"
    assert derive_credential_key(reworded.auth_scheme, reworded.raw_auth_credential) == (
        config.credential_key
    )
    # A key given explicitly is kept, and every copy keeps the key it had.
    assert calendar_config(client_id="x").model_copy().credential_key == (
        calendar_config(client_id="x").credential_key
    )
    named = AuthConfig(auth_scheme=HTTPBearer(), credential_key="my_api")
    assert AuthConfig.model_validate_json(named.model_dump_json()).credential_key == "my_api"


def test_an_api_key_scheme_needs_an_api_key() -> None:
    config = api_key_config(None)
    with pytest.raises(InvalidCredentialError) as caught:
        check_credential(config, config.raw_auth_credential)  # type: ignore[arg-type]
    message = str(caught.value)
    assert config.key in message and "'X-API-Key'" in message
    assert "api_key is empty" in message and "AuthCredential(auth_type=" in message


async def test_static_credentials_complete_without_exchange() -> None:
    config = api_key_config("k-123")
    assert (await complete_credential(config)).api_key == "k-123"
    # The user's answer wins over the tool's own value.
    answered = config.model_copy(
        update={
            "exchanged_auth_credential": AuthCredential(
                auth_type=AuthCredentialTypes.API_KEY, api_key="k-user"
            )
        }
    )
    assert (await complete_credential(answered)).api_key == "k-user"

    bearer = AuthConfig(
        auth_scheme=HTTPBearer(),
        exchanged_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.HTTP,
            http=HttpAuth(scheme="Bearer", credentials=HttpCredentials(token="t-1")),
        ),
    )
    credential = await complete_credential(bearer)
    assert credential.http is not None and credential.http.credentials.token == "t-1"

    basic = AuthConfig(
        auth_scheme=HTTPBase(scheme="basic"),
        raw_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.HTTP,
            http=HttpAuth(scheme="basic", credentials=HttpCredentials(username="ann")),
        ),
    )
    with pytest.raises(InvalidCredentialError, match="lacks the user name or the password"):
        await complete_credential(basic)
    with pytest.raises(InvalidCredentialError, match="needs HTTP bearer authentication and none"):
        await complete_credential(AuthConfig(auth_scheme=HTTPBearer()))
    wrong_kind = bearer.model_copy(update={"exchanged_auth_credential": config.raw_auth_credential})
    with pytest.raises(InvalidCredentialError, match="it is a 'apiKey' credential"):
        await complete_credential(wrong_kind)


async def test_service_accounts_are_refused_with_what_to_do_instead() -> None:
    config = AuthConfig(
        auth_scheme=HTTPBearer(),
        raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.SERVICE_ACCOUNT),
    )
    with pytest.raises(InvalidCredentialError, match="does not run service-account flows"):
        await complete_credential(config)


async def test_oauth2_without_an_answer_says_what_to_do() -> None:
    with pytest.raises(InvalidCredentialError, match=r"send the user to the auth_uri"):
        await complete_credential(calendar_config())


def test_an_answer_supplies_only_what_a_user_can() -> None:
    requested = calendar_config().model_copy(
        update={
            "exchanged_auth_credential": AuthCredential(
                auth_type=AuthCredentialTypes.OAUTH2,
                oauth2=OAuth2Auth(
                    client_id="client-1", state="st-1", code_verifier="v-1", auth_uri="https://a"
                ),
            )
        }
    )
    answer = json.loads(requested.model_dump_json(exclude_none=True))
    answer["exchangedAuthCredential"]["oauth2"].update(
        {
            "authResponseUri": "https://app.example.com/cb?code=c-1&state=st-1",
            "redirectUri": "https://app.example.com/cb",
            "clientId": "attacker",
            "codeVerifier": "attacker-verifier",
            "state": "attacker-state",
        }
    )
    merged = accept_auth_response(requested, answer)
    oauth2 = merged.exchanged_auth_credential.oauth2  # type: ignore[union-attr]
    assert oauth2 is not None
    assert oauth2.auth_response_uri == "https://app.example.com/cb?code=c-1&state=st-1"
    assert oauth2.redirect_uri == "https://app.example.com/cb"  # the request left it open
    assert (oauth2.client_id, oauth2.state, oauth2.code_verifier) == ("client-1", "st-1", "v-1")
    assert merged.raw_auth_credential == requested.raw_auth_credential

    answer["credentialKey"] = "someone_else"
    with pytest.raises(InvalidCredentialError, match="answer is for credential 'someone_else'"):
        accept_auth_response(requested, answer)
    with pytest.raises(InvalidCredentialError, match="has no exchangedAuthCredential"):
        accept_auth_response(requested, {"authScheme": answer["authScheme"]})


def test_an_api_key_answer_is_taken_whole() -> None:
    requested = AuthConfig(auth_scheme=APIKey(in_=APIKeyIn.query, name="key"))
    answer = {
        "authScheme": {"type": "apiKey", "in": "query", "name": "key"},
        "exchangedAuthCredential": {"authType": "apiKey", "apiKey": "k-user"},
    }
    merged = accept_auth_response(requested, answer)
    assert merged.exchanged_auth_credential is not None
    assert merged.exchanged_auth_credential.api_key == "k-user"
    assert merged.credential_key == requested.credential_key
