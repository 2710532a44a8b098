"""From an auth config to a credential a tool can use, whatever its scheme needs.

``complete_credential`` is the one entry point: an API key or HTTP
credential is checked and returned; OAuth2 exchanges the user's answer,
refreshes an expired token, or fetches a client-credentials token.
``accept_auth_response`` merges a user's answer into the request it answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx2

from cairn.auth.auth_credential import AuthCredential, AuthCredentialTypes
from cairn.auth.auth_schemes import APIKey, CustomAuthScheme, HTTPBase
from cairn.auth.auth_tool import AuthConfig
from cairn.auth.errors import InvalidCredentialError
from cairn.auth.oauth2 import (
    client_credentials_token,
    exchange,
    is_expired,
    refresh,
    uses_client_credentials,
    uses_oauth2,
)


def _describe(auth_config: AuthConfig) -> str:
    scheme = auth_config.auth_scheme
    if isinstance(scheme, APIKey):
        return f"an API key in the {scheme.in_.value} {scheme.name!r}"
    if isinstance(scheme, HTTPBase):
        return f"HTTP {scheme.scheme} authentication"
    if isinstance(scheme, CustomAuthScheme):
        return f"a credential for the custom scheme {scheme.type_!r}"
    return "OAuth2"


def check_credential(auth_config: AuthConfig, credential: AuthCredential) -> None:
    """Raise ``InvalidCredentialError`` unless ``credential`` is usable for the config's scheme.

    API key: ``api_key`` set. HTTP ``basic``: user name and password;
    other HTTP schemes (``bearer`` ...): a token. OAuth2: an access token. A custom
    scheme's credential is whatever its ``BaseAuthProvider`` supplies: not checked here.
    """
    key = auth_config.key
    scheme = auth_config.auth_scheme
    wants = _describe(auth_config)
    if isinstance(scheme, CustomAuthScheme):
        return
    if credential.auth_type is AuthCredentialTypes.SERVICE_ACCOUNT:
        raise InvalidCredentialError(
            f"credential {key!r} is a service-account credential; cairn does not run "
            "service-account flows. Obtain an access token with the provider's library and "
            "pass it as AuthCredential(auth_type=AuthCredentialTypes.HTTP, "
            "http=HttpAuth(scheme='bearer', credentials=HttpCredentials(token=...)))."
        )
    problem: str | None = None
    if isinstance(scheme, APIKey):
        if credential.auth_type is not AuthCredentialTypes.API_KEY:
            problem = f"it is a {credential.auth_type.value!r} credential"
        elif not credential.api_key:
            problem = "its api_key is empty"
        fix = "AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=...)"
    elif isinstance(scheme, HTTPBase):
        wanted = scheme.scheme.lower()
        http = credential.http
        if credential.auth_type is not AuthCredentialTypes.HTTP or http is None:
            problem = f"it is a {credential.auth_type.value!r} credential without http"
        elif http.scheme.lower() != wanted:
            problem = f"its http scheme is {http.scheme!r}"
        elif wanted == "basic" and not (http.credentials.username and http.credentials.password):
            problem = "it lacks the user name or the password"
        elif wanted != "basic" and not http.credentials.token:
            problem = "its token is empty"
        if wanted == "basic":
            fields = "HttpCredentials(username=..., password=...)"
        else:
            fields = "HttpCredentials(token=...)"
        fix = (
            f"AuthCredential(auth_type=AuthCredentialTypes.HTTP, http=HttpAuth(scheme="
            f"{wanted!r}, credentials={fields}))"
        )
    else:
        if credential.auth_type not in (
            AuthCredentialTypes.OAUTH2,
            AuthCredentialTypes.OPEN_ID_CONNECT,
        ):
            problem = f"it is a {credential.auth_type.value!r} credential"
        elif credential.oauth2 is None or not credential.oauth2.access_token:
            problem = "it has no access token yet"
        fix = "the credential complete_credential(auth_config) returns"
    if problem is not None:
        raise InvalidCredentialError(f"credential {key!r} needs {wants}, but {problem}. Use {fix}.")


async def complete_credential(
    auth_config: AuthConfig, *, http_client: httpx2.AsyncClient | None = None
) -> AuthCredential:
    """The credential ``auth_config`` leads to, doing whatever its scheme needs.

    - API key and HTTP: the user's answer (``exchanged_auth_credential``) or
      else the tool's ``raw_auth_credential``, checked (``check_credential``).
    - OAuth2 / OpenID Connect: exchange the user's ``auth_response_uri`` or
      ``auth_code``; or return a token already given (refreshed if expired);
      or, for the client-credentials flow, fetch a token.

    Raises ``InvalidCredentialError`` when something is missing (the message
    says what to fill), ``CredentialExchangeError`` when the provider refuses.
    """
    if uses_oauth2(auth_config):
        return await _complete_oauth2(auth_config, http_client)
    credential = auth_config.exchanged_auth_credential or auth_config.raw_auth_credential
    if credential is None:
        raise InvalidCredentialError(
            f"credential {auth_config.key!r} needs {_describe(auth_config)} and none was given: "
            "the user's answer fills exchanged_auth_credential, or the tool sets "
            "raw_auth_credential."
        )
    check_credential(auth_config, credential)
    return credential.model_copy(deep=True)


async def _complete_oauth2(
    auth_config: AuthConfig, http_client: httpx2.AsyncClient | None
) -> AuthCredential:
    answer = auth_config.exchanged_auth_credential
    if (
        answer is not None
        and answer.oauth2 is not None
        and (answer.oauth2.auth_response_uri or answer.oauth2.auth_code)
    ):
        return await exchange(auth_config, http_client=http_client)
    for given in (answer, auth_config.raw_auth_credential):
        if given is None or given.oauth2 is None or not given.oauth2.access_token:
            continue
        if not is_expired(given):
            return given.model_copy(deep=True)
        if given.oauth2.refresh_token:
            return await refresh(given, auth_config, http_client=http_client)
    if uses_client_credentials(auth_config):
        return await client_credentials_token(auth_config, http_client=http_client)
    raise InvalidCredentialError(
        f"credential {auth_config.key!r} uses OAuth2 and has no answer from the user yet: send "
        "the user to the auth_uri of authorization_request(auth_config), then fill "
        "exchanged_auth_credential.oauth2.auth_response_uri with the URL the provider "
        "redirected to (or auth_code with the code)."
    )


_USER_SUPPLIED = (
    "auth_response_uri",
    "auth_code",
    "access_token",
    "refresh_token",
    "id_token",
    "expires_at",
    "expires_in",
)
"""The OAuth2 fields an answer may set; the rest (client, state, verifier) stay as requested."""


def accept_auth_response(
    requested: AuthConfig, answer: AuthConfig | Mapping[str, Any]
) -> AuthConfig:
    """``requested`` (the config the user was asked with) with the user's answer filled in.

    For OAuth2 only what a user supplies is taken from the answer (the
    redirect URL or code, a redirect URI the request left open, or tokens),
    never the client, ``state`` or PKCE verifier, so an answer cannot swap
    them. For other schemes the answer's ``exchanged_auth_credential`` is
    taken. An answer naming another ``credential_key`` is refused.
    """
    given = answer if isinstance(answer, AuthConfig) else AuthConfig.model_validate(answer)
    if "credential_key" in given.model_fields_set and given.key != requested.key:
        raise InvalidCredentialError(
            f"the answer is for credential {given.key!r} but {requested.key!r} was requested; "
            "answer with the auth config of the request, its exchangedAuthCredential filled in."
        )
    supplied = given.exchanged_auth_credential
    if supplied is None:
        raise InvalidCredentialError(
            f"the answer for credential {requested.key!r} has no exchangedAuthCredential; "
            f"fill it with {_describe(requested)} (OAuth2: oauth2.authResponseUri)."
        )
    asked = requested.exchanged_auth_credential
    if (
        uses_oauth2(requested)
        and asked is not None
        and asked.oauth2 is not None
        and supplied.oauth2 is not None
    ):
        updates = {
            name: value
            for name in _USER_SUPPLIED
            if (value := getattr(supplied.oauth2, name)) is not None
        }
        if not asked.oauth2.redirect_uri and supplied.oauth2.redirect_uri:
            updates["redirect_uri"] = supplied.oauth2.redirect_uri
        merged = asked.model_copy(
            deep=True, update={"oauth2": asked.oauth2.model_copy(deep=True, update=updates)}
        )
    else:
        merged = supplied.model_copy(deep=True)
    return requested.model_copy(deep=True, update={"exchanged_auth_credential": merged})
