"""What of an auth config may leave the server: everything but its secrets.

A credential request event and a user's stored answer carry an auth config
without secrets: the scheme, the credential key (the reference to the tool's
own config), the client id, redirect URI and scopes, and, for OAuth2, the
sign-in request (``auth_uri``, ``state``) and the user's redirect or code
(single-use, minutes-long, useless without the client secret). Never the
client secret, an API key, a password or token, access, refresh or ID tokens,
or a confidential client's PKCE verifier: the exchange reads the secret from
the tool's config in the process that runs it, and obtained tokens live in the
credential service.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from cairn.auth.auth_credential import AuthCredential, HttpAuth, HttpCredentials, OAuth2Auth
from cairn.auth.auth_tool import AuthConfig
from cairn.auth.errors import InvalidCredentialError
from cairn.auth.oauth2 import authorization_request

_SHAREABLE_OAUTH2 = (
    "client_id",
    "auth_uri",
    "state",
    "redirect_uri",
    "auth_response_uri",
    "auth_code",
    "expires_at",
    "expires_in",
    "scopes",
    "token_endpoint_auth_method",
)
"""The OAuth2 fields that are no secret (the code is single-use and needs the client)."""


def _shareable_credential(
    credential: AuthCredential | None, *, keep_code_verifier: bool
) -> AuthCredential | None:
    if credential is None:
        return None
    oauth2 = None
    if credential.oauth2 is not None:
        fields = {name: getattr(credential.oauth2, name) for name in _SHAREABLE_OAUTH2}
        if keep_code_verifier:
            fields["code_verifier"] = credential.oauth2.code_verifier
        oauth2 = OAuth2Auth(**fields)
    http = None
    if credential.http is not None:
        username = credential.http.credentials.username
        http = HttpAuth(
            scheme=credential.http.scheme, credentials=HttpCredentials(username=username)
        )
    return AuthCredential(
        auth_type=credential.auth_type,
        resource_ref=credential.resource_ref,
        http=http,
        oauth2=oauth2,
    )


def _secrets(auth_config: AuthConfig) -> set[str]:
    """Every secret string ``auth_config`` holds."""
    found: set[str] = set()
    for credential in (auth_config.raw_auth_credential, auth_config.exchanged_auth_credential):
        if credential is None:
            continue
        found.add(credential.api_key or "")
        if credential.http is not None:
            given = credential.http.credentials
            found |= {given.password or "", given.token or ""}
        if credential.oauth2 is not None:
            oauth2 = credential.oauth2
            found |= {
                oauth2.client_secret or "",
                oauth2.access_token or "",
                oauth2.refresh_token or "",
                oauth2.id_token or "",
            }
    found.discard("")
    return found


def without_secrets(auth_config: AuthConfig, *, keep_code_verifier: bool = False) -> AuthConfig:
    """A copy of ``auth_config`` that may be stored in the log and sent to clients.

    Keeps the scheme, the credential key and every field above that is no secret;
    drops keys, passwords, tokens and the client secret. ``keep_code_verifier``
    keeps the PKCE verifier (a public client's request, see ``user_request``).
    """
    return AuthConfig(
        auth_scheme=auth_config.auth_scheme.model_copy(deep=True),
        raw_auth_credential=_shareable_credential(
            auth_config.raw_auth_credential, keep_code_verifier=False
        ),
        exchanged_auth_credential=_shareable_credential(
            auth_config.exchanged_auth_credential, keep_code_verifier=keep_code_verifier
        ),
        credential_key=auth_config.key,
    )


def user_request(auth_config: AuthConfig) -> AuthConfig:
    """What a user is asked for a tool's ``auth_config``: its authorization request
    (``authorization_request``) without secrets.

    A confidential client's PKCE verifier is derived from its client secret and
    the request's ``state``, so the exchange re-derives it from the tool's config
    and the request carries none; a public client (no client secret) has nothing
    to derive it from, so its request keeps the verifier, as a public client holds
    it. Raises ``InvalidCredentialError`` if a secret of the tool's config still
    shows (e.g. written into a given ``auth_uri``).
    """
    asked = authorization_request(auth_config)
    confidential = any(
        credential is not None and credential.oauth2 is not None and credential.oauth2.client_secret
        for credential in (auth_config.raw_auth_credential, auth_config.exchanged_auth_credential)
    )
    shown = without_secrets(asked, keep_code_verifier=not confidential)
    oauth2 = shown.exchanged_auth_credential.oauth2 if shown.exchanged_auth_credential else None
    if oauth2 is not None and oauth2.auth_uri:
        query = parse_qsl(urlsplit(oauth2.auth_uri).query)
        if any(name == "client_secret" or value in _secrets(auth_config) for name, value in query):
            raise InvalidCredentialError(
                f"the sign-in URL of credential {auth_config.key!r} carries a secret of the "
                "tool's auth config (the client secret, a key or a token): it would be shown "
                "to the user and stored in the log. Remove it from auth_uri; the token request "
                "sends the client secret itself."
            )
    return shown
