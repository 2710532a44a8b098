"""OAuth2 against a real token endpoint on 127.0.0.1: authorization request, exchange, refresh."""

from __future__ import annotations

import base64
import hashlib
import socket
import time
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from tests.auth.conftest import oauth2_config
from tests.auth.token_server import CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, FakeProvider

from cairn.auth import (
    APIKey,
    APIKeyIn,
    AuthConfig,
    AuthCredential,
    AuthCredentialTypes,
    CredentialExchangeError,
    CredentialRefreshError,
    InvalidCredentialError,
    OAuth2,
    OAuth2Auth,
    OAuthFlowClientCredentials,
    OAuthFlows,
    OpenIdConnectWithConfig,
    accept_auth_response,
    authorization_request,
    complete_credential,
    exchange,
    is_expired,
    refresh,
)


def query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def answered(request: AuthConfig, redirect: str) -> AuthConfig:
    """What a client sends back: the request's config with the redirect URL filled in."""
    answer = request.model_dump(mode="json")
    answer["exchangedAuthCredential"]["oauth2"]["authResponseUri"] = redirect
    return accept_auth_response(request, answer)


def test_the_authorization_request_carries_pkce_and_a_fresh_state(
    provider: FakeProvider,
) -> None:
    config = oauth2_config(provider)
    request = authorization_request(config)
    assert request.credential_key == config.credential_key
    assert request.raw_auth_credential == config.raw_auth_credential
    oauth2 = request.exchanged_auth_credential.oauth2  # type: ignore[union-attr]
    assert oauth2 is not None and oauth2.auth_uri is not None
    params = query(oauth2.auth_uri)
    assert params == {
        "prompt": ["consent"],  # the authorization URL's own query is kept
        "response_type": ["code"],
        "client_id": [CLIENT_ID],
        "redirect_uri": [REDIRECT_URI],
        "scope": ["calendar.read offline"],
        "state": [oauth2.state],
        "code_challenge": params["code_challenge"],
        "code_challenge_method": ["S256"],
    }
    assert oauth2.auth_uri.startswith(f"{provider.base_url}/authorize?")
    assert oauth2.code_verifier is not None and 43 <= len(oauth2.code_verifier) <= 128
    digest = hashlib.sha256(oauth2.code_verifier.encode()).digest()
    expected = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert params["code_challenge"] == [expected]
    # Neither the verifier nor the client secret is in the URL the user visits; the secret
    # is not copied into what the client fills either (the exchange reads the tool's own).
    assert oauth2.code_verifier not in oauth2.auth_uri
    assert CLIENT_SECRET not in oauth2.auth_uri and oauth2.client_secret is None
    again = authorization_request(config).exchanged_auth_credential.oauth2  # type: ignore[union-attr]
    assert again is not None
    assert again.state != oauth2.state and again.code_verifier != oauth2.code_verifier
    assert config.exchanged_auth_credential is None  # the input is not changed


def test_requested_scopes_and_an_open_redirect_uri(provider: FakeProvider) -> None:
    config = oauth2_config(provider, redirect_uri=None, scopes=["calendar.read"])
    oauth2 = authorization_request(config).exchanged_auth_credential.oauth2  # type: ignore[union-attr]
    assert oauth2 is not None and oauth2.auth_uri is not None
    params = query(oauth2.auth_uri)
    assert params["scope"] == ["calendar.read"] and "redirect_uri" not in params


def test_schemes_without_a_user_step_are_returned_unchanged() -> None:
    config = AuthConfig(auth_scheme=APIKey(in_=APIKeyIn.query, name="key"))
    assert authorization_request(config) == config


async def test_the_code_is_exchanged_for_tokens(provider: FakeProvider) -> None:
    request = authorization_request(oauth2_config(provider))
    oauth2 = request.exchanged_auth_credential.oauth2  # type: ignore[union-attr]
    assert oauth2 is not None and oauth2.auth_uri is not None
    redirect = provider.authorize(oauth2.auth_uri)
    before = int(time.time())
    credential = await complete_credential(answered(request, redirect))

    assert credential.auth_type is AuthCredentialTypes.OAUTH2
    tokens = credential.oauth2
    assert tokens is not None
    assert tokens.access_token == "at-2" and tokens.refresh_token == "rt-2"
    assert tokens.expires_in == 3600
    assert tokens.expires_at is not None and before + 3600 <= tokens.expires_at <= before + 3602
    assert tokens.scopes == ["calendar.read", "offline"]
    # One-time values of the sign-in are not kept.
    assert (tokens.auth_code, tokens.state, tokens.code_verifier, tokens.auth_response_uri) == (
        None,
        None,
        None,
        None,
    )
    assert not is_expired(credential)

    [sent] = provider.requests
    assert sent.path == "/token"
    assert sent.headers["content-type"] == "application/x-www-form-urlencoded"
    assert sent.form == {
        "grant_type": "authorization_code",
        "code": "code-1",
        "redirect_uri": REDIRECT_URI,
        "code_verifier": oauth2.code_verifier,
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
    }


async def test_client_secret_basic_sends_the_secret_in_the_header(provider: FakeProvider) -> None:
    config = oauth2_config(provider, token_endpoint_auth_method="client_secret_basic")
    request = authorization_request(config)
    redirect = provider.authorize(request.exchanged_auth_credential.oauth2.auth_uri)  # type: ignore[union-attr, arg-type]
    async with httpx2.AsyncClient() as client:
        credential = await exchange(answered(request, redirect), http_client=client)
    assert credential.oauth2 is not None and credential.oauth2.access_token
    [sent] = provider.requests
    assert sent.headers["authorization"].startswith("Basic ")
    assert "client_secret" not in sent.form and "client_id" not in sent.form


async def test_a_pasted_code_is_exchanged_too(provider: FakeProvider) -> None:
    request = authorization_request(oauth2_config(provider))
    redirect = provider.authorize(request.exchanged_auth_credential.oauth2.auth_uri)  # type: ignore[union-attr, arg-type]
    code = query(redirect)["code"][0]
    answer = request.model_dump(mode="json")
    answer["exchangedAuthCredential"]["oauth2"]["authCode"] = code
    credential = await complete_credential(accept_auth_response(request, answer))
    assert credential.oauth2 is not None and credential.oauth2.access_token == "at-2"


async def test_another_state_is_refused_before_any_request(provider: FakeProvider) -> None:
    request = authorization_request(oauth2_config(provider))
    redirect = provider.authorize(request.exchanged_auth_credential.oauth2.auth_uri)  # type: ignore[union-attr, arg-type]
    forged = redirect.replace("state=", "state=x")
    with pytest.raises(CredentialExchangeError, match="another state") as caught:
        await complete_credential(answered(request, forged))
    assert caught.value.error == "state_mismatch"
    assert provider.requests == []


async def test_a_user_who_declines_gets_the_providers_reason(provider: FakeProvider) -> None:
    request = authorization_request(oauth2_config(provider))
    redirect = provider.authorize(
        request.exchanged_auth_credential.oauth2.auth_uri,  # type: ignore[union-attr, arg-type]
        approve=False,
    )
    with pytest.raises(CredentialExchangeError, match=r"access_denied \(The user said no\)") as e:
        await complete_credential(answered(request, redirect))
    assert e.value.error == "access_denied" and provider.requests == []


async def test_the_providers_error_is_named(provider: FakeProvider) -> None:
    request = authorization_request(oauth2_config(provider))
    redirect = provider.authorize(request.exchanged_auth_credential.oauth2.auth_uri)  # type: ignore[union-attr, arg-type]
    answer = answered(request, redirect)
    await complete_credential(answer)
    with pytest.raises(CredentialExchangeError) as caught:
        await complete_credential(answer)  # a code is good for one exchange only
    error = caught.value
    assert (error.error, error.status_code) == ("invalid_grant", 400)
    assert error.error_description == "The code is unknown or was already used"
    message = str(error)
    assert provider.token_url in message and answer.key in message
    assert "invalid_grant (The code is unknown or was already used) [HTTP 400]" in message
    assert "sign in again" in message
    for secret in (CLIENT_SECRET, "code-1"):
        assert secret not in message


async def test_a_wrong_client_secret_is_named(provider: FakeProvider) -> None:
    request = authorization_request(oauth2_config(provider, client_secret="wrong"))
    redirect = provider.authorize(request.exchanged_auth_credential.oauth2.auth_uri)  # type: ignore[union-attr, arg-type]
    with pytest.raises(CredentialExchangeError, match=r"invalid_client.*client id and secret"):
        await complete_credential(answered(request, redirect))


async def test_a_wrong_verifier_fails_pkce(provider: FakeProvider) -> None:
    request = authorization_request(oauth2_config(provider))
    redirect = provider.authorize(request.exchanged_auth_credential.oauth2.auth_uri)  # type: ignore[union-attr, arg-type]
    answer = answered(request, redirect)
    assert answer.exchanged_auth_credential is not None
    assert answer.exchanged_auth_credential.oauth2 is not None
    answer.exchanged_auth_credential.oauth2.code_verifier = "x" * 64
    with pytest.raises(CredentialExchangeError, match="PKCE verification failed"):
        await exchange(answer)


async def test_a_broken_or_unreachable_endpoint_is_a_typed_error(provider: FakeProvider) -> None:
    request = authorization_request(oauth2_config(provider))
    redirect = provider.authorize(request.exchanged_auth_credential.oauth2.auth_uri)  # type: ignore[union-attr, arg-type]
    answer = answered(request, redirect)
    provider.next_failure = (502, "text/html", "<html>Bad gateway</html>")
    with pytest.raises(CredentialExchangeError, match=r"http_502 \[HTTP 502\]") as caught:
        await exchange(answer)
    assert caught.value.status_code == 502
    provider.next_failure = (200, "application/json", '{"token_type": "Bearer"}')
    with pytest.raises(CredentialExchangeError, match="without an access_token") as caught:
        await exchange(answer)
    assert caught.value.error == "invalid_response"

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    nowhere = oauth2_config(provider).model_copy(deep=True)
    assert isinstance(nowhere.auth_scheme, OAuth2)
    flow = nowhere.auth_scheme.flows.authorization_code
    assert flow is not None
    flow.token_url = f"http://127.0.0.1:{port}/token"
    unreachable = answer.model_copy(update={"auth_scheme": nowhere.auth_scheme})
    with pytest.raises(CredentialExchangeError, match="cannot reach the token endpoint") as caught:
        await exchange(unreachable)
    assert caught.value.error == "unreachable"


async def test_form_encoded_token_responses_are_read(provider: FakeProvider) -> None:
    provider.form_encoded_responses = True
    request = authorization_request(oauth2_config(provider))
    redirect = provider.authorize(request.exchanged_auth_credential.oauth2.auth_uri)  # type: ignore[union-attr, arg-type]
    credential = await complete_credential(answered(request, redirect))
    assert credential.oauth2 is not None
    assert (credential.oauth2.access_token, credential.oauth2.expires_in) == ("at-2", 3600)


async def signed_in(provider: FakeProvider, config: AuthConfig) -> AuthCredential:
    request = authorization_request(config)
    redirect = provider.authorize(request.exchanged_auth_credential.oauth2.auth_uri)  # type: ignore[union-attr, arg-type]
    return await complete_credential(answered(request, redirect))


async def test_refresh_renews_the_access_token(provider: FakeProvider) -> None:
    config = oauth2_config(provider)
    credential = await signed_in(provider, config)
    renewed = await refresh(credential, config)
    assert renewed.oauth2 is not None and credential.oauth2 is not None
    assert renewed.oauth2.access_token == "at-3" and renewed.oauth2.refresh_token == "rt-3"
    assert renewed.oauth2.client_id == CLIENT_ID
    assert provider.requests[-1].form == {
        "grant_type": "refresh_token",
        "refresh_token": "rt-2",
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
    }
    # The old refresh token was rotated away by the provider.
    with pytest.raises(CredentialRefreshError, match="invalid_grant") as caught:
        await refresh(credential, config)
    assert caught.value.error == "invalid_grant"


async def test_refresh_keeps_a_refresh_token_that_is_not_rotated(provider: FakeProvider) -> None:
    provider.rotate_refresh_tokens = False
    config = oauth2_config(provider)
    credential = await signed_in(provider, config)
    renewed = await refresh(credential, config)
    again = await refresh(renewed, config)
    assert renewed.oauth2 is not None and again.oauth2 is not None
    assert renewed.oauth2.refresh_token == again.oauth2.refresh_token == "rt-2"
    assert again.oauth2.access_token == "at-4"


async def test_an_expired_answer_is_refreshed_by_complete(provider: FakeProvider) -> None:
    config = oauth2_config(provider)
    credential = await signed_in(provider, config)
    assert credential.oauth2 is not None
    credential.oauth2.expires_at = int(time.time()) - 5
    assert is_expired(credential)
    completed = await complete_credential(
        config.model_copy(update={"exchanged_auth_credential": credential})
    )
    assert completed.oauth2 is not None and completed.oauth2.access_token == "at-3"


async def test_refresh_needs_a_refresh_token() -> None:
    credential = AuthCredential(
        auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(access_token="at")
    )
    config = AuthConfig(
        auth_scheme=OpenIdConnectWithConfig(
            authorization_endpoint="https://id.example.com/a", token_endpoint="https://id/t"
        )
    )
    with pytest.raises(InvalidCredentialError, match="has no refresh token"):
        await refresh(credential, config)


def test_expiry_counts_a_skew() -> None:
    def expiring_at(at: int | None) -> AuthCredential:
        return AuthCredential(
            auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(access_token="a", expires_at=at)
        )

    assert not is_expired(expiring_at(1000), now=900)
    assert is_expired(expiring_at(1000), now=950)  # within the default 60 s skew
    assert not is_expired(expiring_at(1000), now=950, skew=0)
    assert is_expired(expiring_at(1000), now=1000, skew=0)
    assert not is_expired(expiring_at(None), now=10**12)
    assert not is_expired(AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key="k"))


async def test_client_credentials_need_no_user(provider: FakeProvider) -> None:
    config = AuthConfig(
        auth_scheme=OAuth2(
            flows=OAuthFlows(
                client_credentials=OAuthFlowClientCredentials(
                    token_url=provider.token_url, scopes={"reports": "Read reports"}
                )
            )
        ),
        raw_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.OAUTH2,
            oauth2=OAuth2Auth(client_id=CLIENT_ID, client_secret=CLIENT_SECRET),
        ),
    )
    assert authorization_request(config) == config
    credential = await complete_credential(config)
    assert credential.oauth2 is not None and credential.oauth2.access_token == "at-1"
    assert credential.oauth2.refresh_token is None
    assert provider.requests[-1].form == {
        "grant_type": "client_credentials",
        "scope": "reports",
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
    }


async def test_openid_connect_returns_an_id_token(provider: FakeProvider) -> None:
    config = AuthConfig(
        auth_scheme=OpenIdConnectWithConfig(
            authorization_endpoint=f"{provider.base_url}/authorize",
            token_endpoint=provider.token_url,
            scopes=["openid", "email"],
        ),
        raw_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.OPEN_ID_CONNECT,
            oauth2=OAuth2Auth(
                client_id=CLIENT_ID, client_secret=CLIENT_SECRET, redirect_uri=REDIRECT_URI
            ),
        ),
    )
    credential = await signed_in(provider, config)
    assert credential.auth_type is AuthCredentialTypes.OPEN_ID_CONNECT
    assert credential.oauth2 is not None and credential.oauth2.id_token == "idt-2"
