"""What a user is shown of a tool's auth config: no secret, and still enough to sign in and
to exchange the code with the tool's own config (against the real local token endpoint)."""

from __future__ import annotations

import pytest
from tests.auth.conftest import oauth2_config
from tests.auth.token_server import CLIENT_SECRET, FakeProvider

from cairn.auth import (
    APIKey,
    APIKeyIn,
    AuthConfig,
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HTTPBase,
    HttpCredentials,
    InvalidCredentialError,
    accept_auth_response,
    complete_credential,
    user_request,
    without_secrets,
)


def exchanged_with_the_tool(tool: AuthConfig, shown: AuthConfig, redirect: str) -> AuthConfig:
    """The answer to ``shown``, completed with the tool's own config (as on resume)."""
    answer = shown.model_dump(mode="json", exclude_none=True)
    answer["exchangedAuthCredential"]["oauth2"]["authResponseUri"] = redirect
    answered = accept_auth_response(shown, answer)
    return answered.model_copy(update={"raw_auth_credential": tool.raw_auth_credential})


async def test_a_confidential_client_is_shown_no_secret_and_still_proves_pkce(
    provider: FakeProvider,
) -> None:
    tool = oauth2_config(provider)
    shown = user_request(tool)
    text = shown.model_dump_json(exclude_none=True)
    assert CLIENT_SECRET not in text and "codeVerifier" not in text
    assert shown.credential_key == tool.credential_key
    sign_in = shown.exchanged_auth_credential.oauth2  # type: ignore[union-attr]
    assert sign_in is not None and sign_in.auth_uri and sign_in.state
    redirect = provider.authorize(sign_in.auth_uri)
    credential = await complete_credential(exchanged_with_the_tool(tool, shown, redirect))
    assert credential.oauth2 is not None and credential.oauth2.access_token
    [sent] = provider.requests
    assert sent.form["client_secret"] == CLIENT_SECRET and sent.form["code_verifier"]


async def test_a_public_client_keeps_its_verifier_in_the_request(provider: FakeProvider) -> None:
    provider.client_secret = None  # type: ignore[assignment]  # a public client: none
    tool = oauth2_config(provider, client_secret=None)
    shown = user_request(tool)
    sign_in = shown.exchanged_auth_credential.oauth2  # type: ignore[union-attr]
    assert sign_in is not None and sign_in.code_verifier  # nothing to derive it from
    redirect = provider.authorize(sign_in.auth_uri or "")
    answer = shown.model_dump(mode="json", exclude_none=True)
    answer["exchangedAuthCredential"]["oauth2"]["authResponseUri"] = redirect
    credential = await complete_credential(accept_auth_response(shown, answer))
    assert credential.oauth2 is not None and credential.oauth2.access_token
    assert provider.requests[0].form["code_verifier"] == sign_in.code_verifier


def test_a_sign_in_url_carrying_the_secret_is_refused(provider: FakeProvider) -> None:
    leaky = oauth2_config(provider, auth_uri=f"{provider.base_url}/a?client_secret={CLIENT_SECRET}")
    with pytest.raises(InvalidCredentialError, match=r"sign-in URL .* carries a secret"):
        user_request(leaky)


@pytest.mark.parametrize(
    "credential",
    [
        AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key="k-secret"),
        AuthCredential(
            auth_type=AuthCredentialTypes.HTTP,
            http=HttpAuth(
                scheme="basic", credentials=HttpCredentials(username="ann", password="k-secret")
            ),
        ),
    ],
)
def test_keys_and_passwords_are_left_out(credential: AuthCredential) -> None:
    scheme = (
        APIKey(in_=APIKeyIn.header, name="X-Key")
        if credential.api_key
        else HTTPBase(scheme="basic")
    )
    config = AuthConfig(
        auth_scheme=scheme, raw_auth_credential=credential, exchanged_auth_credential=credential
    )
    shown = without_secrets(config)
    assert "k-secret" not in shown.model_dump_json()
    assert shown.credential_key == config.credential_key
    if credential.http is not None:  # the user name identifies the credential: it stays
        assert shown.raw_auth_credential.http.credentials.username == "ann"  # type: ignore[union-attr]
