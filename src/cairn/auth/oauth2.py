"""OAuth2 for tools: the authorization-code flow with PKCE, client credentials, refresh.

``authorization_request`` prepares what a user is sent to; ``exchange`` turns
the user's answer into tokens; ``refresh`` renews them. Token requests are
form-encoded POSTs (RFC 6749) sent with ``httpx2``; pass ``http_client=`` to
reuse a client (proxies, timeouts, tests), otherwise each call opens one.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import secrets
import time
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import httpx2

from cairn.auth.auth_credential import AuthCredential, AuthCredentialTypes, OAuth2Auth
from cairn.auth.auth_schemes import OAuth2, OpenIdConnectWithConfig
from cairn.auth.auth_tool import AuthConfig
from cairn.auth.errors import (
    CredentialExchangeError,
    CredentialRefreshError,
    InvalidCredentialError,
)

EXPIRY_SKEW_SECONDS = 60
"""An access token this close to its expiry already counts as expired."""

DEFAULT_TIMEOUT_SECONDS = 30.0
"""Timeout of token requests made with a client of cairn's own."""

_DESCRIPTION_LIMIT = 300


@dataclasses.dataclass(frozen=True)
class _Flow:
    """Where a config's OAuth2 flow sends users and token requests."""

    authorization_url: str | None
    """None for the client-credentials flow (no user involved)."""
    token_url: str
    refresh_url: str
    scopes: list[str]


@dataclasses.dataclass(frozen=True)
class _Client:
    client_id: str
    client_secret: str | None
    method: str


def uses_oauth2(auth_config: AuthConfig) -> bool:
    """Whether the config's scheme is OAuth2 or OpenID Connect (tokens, not a fixed secret)."""
    return isinstance(auth_config.auth_scheme, OAuth2 | OpenIdConnectWithConfig)


def uses_client_credentials(auth_config: AuthConfig) -> bool:
    """Whether the config runs the client-credentials flow (no user to ask)."""
    return uses_oauth2(auth_config) and _flow(auth_config).authorization_url is None


def _flow(auth_config: AuthConfig) -> _Flow:
    scheme = auth_config.auth_scheme
    if isinstance(scheme, OpenIdConnectWithConfig):
        token = scheme.token_endpoint
        return _Flow(scheme.authorization_endpoint, token, token, list(scheme.scopes))
    if isinstance(scheme, OAuth2):
        code = scheme.flows.authorization_code
        if code is not None:
            refresh_url = code.refresh_url or code.token_url
            return _Flow(code.authorization_url, code.token_url, refresh_url, list(code.scopes))
        machine = scheme.flows.client_credentials
        if machine is not None:
            refresh_url = machine.refresh_url or machine.token_url
            return _Flow(None, machine.token_url, refresh_url, list(machine.scopes))
        raise InvalidCredentialError(
            f"the OAuth2 scheme of credential {auth_config.key!r} has neither an "
            "authorizationCode nor a clientCredentials flow, the two cairn runs. Add one to "
            "auth_scheme.flows (OAuthFlows(authorization_code=OAuthFlowAuthorizationCode(...)))."
        )
    raise InvalidCredentialError(
        f"credential {auth_config.key!r} uses a {scheme.type_!r} scheme, which has no OAuth2 "
        "flow; OAuth2 operations need an OAuth2 or OpenIdConnectWithConfig auth_scheme."
    )


def _client(auth_config: AuthConfig, *fallbacks: OAuth2Auth | None) -> _Client:
    """The OAuth2 client: the tool's raw credential first, then what the answer carried."""
    raw = auth_config.raw_auth_credential
    exchanged = auth_config.exchanged_auth_credential
    candidates = [
        raw.oauth2 if raw else None,
        exchanged.oauth2 if exchanged else None,
        *fallbacks,
    ]
    found = [c for c in candidates if c is not None]
    client_id = next((c.client_id for c in found if c.client_id), None)
    if client_id is None:
        raise InvalidCredentialError(
            f"credential {auth_config.key!r} names no OAuth2 client: set "
            "raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, "
            "oauth2=OAuth2Auth(client_id=..., client_secret=...)) in the tool's AuthConfig."
        )
    secret = next((c.client_secret for c in found if c.client_secret), None)
    method = next(
        (c.token_endpoint_auth_method for c in found if c.token_endpoint_auth_method),
        "client_secret_post",
    )
    return _Client(client_id, secret, method)


def _auth_type(auth_config: AuthConfig) -> AuthCredentialTypes:
    if isinstance(auth_config.auth_scheme, OpenIdConnectWithConfig):
        return AuthCredentialTypes.OPEN_ID_CONNECT
    return AuthCredentialTypes.OAUTH2


def _with_query(url: str, params: dict[str, str]) -> str:
    """``url`` with ``params`` added to the query it may already have."""
    parts = urlsplit(url)
    query = [*parse_qsl(parts.query, keep_blank_values=True), *params.items()]
    return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))


def _derived_verifier(client_secret: str, state: str) -> str:
    """A confidential client's PKCE verifier: an HMAC of the request's ``state`` under the
    client secret, so the exchange can derive it again and the request need not carry it."""
    mac = hmac.new(client_secret.encode(), b"cairn-pkce-verifier:" + state.encode(), "sha256")
    return base64.urlsafe_b64encode(mac.digest()).rstrip(b"=").decode("ascii")


def _code_verifier(answer: OAuth2Auth, client: _Client, tool: OAuth2Auth | None) -> str | None:
    """The PKCE verifier of the sign-in ``answer`` answers: the one it carries (or the
    tool's own, with its own ``auth_uri``), or the one derived from the client secret
    when its ``auth_uri`` sent a challenge."""
    if answer.code_verifier:
        return answer.code_verifier
    if tool is not None and tool.code_verifier:
        return tool.code_verifier
    if not (client.client_secret and answer.state and answer.auth_uri):
        return None
    if "code_challenge" not in dict(parse_qsl(urlsplit(answer.auth_uri).query)):
        return None
    return _derived_verifier(client.client_secret, answer.state)


def _pkce_challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def authorization_request(auth_config: AuthConfig) -> AuthConfig:
    """A copy of ``auth_config`` with the sign-in prepared (it still holds the tool's
    secrets: what a user is shown is ``cairn.auth.user_request``).

    For the authorization-code flow, ``exchanged_auth_credential.oauth2`` gets
    ``auth_uri`` (the provider's sign-in page with ``response_type=code``, the
    client id, the redirect URI if the tool set one, the scopes, a fresh random
    ``state`` and a PKCE S256 ``code_challenge``), that ``state`` and the
    ``code_verifier`` the exchange will prove (with a client secret, derived from it and
    the ``state``, so the exchange can derive it again). A client that did not know the
    redirect URI appends ``&redirect_uri=...`` and returns it in its answer.
    If the tool's raw credential already has an ``auth_uri``, it is used as is.
    Other schemes (API key, HTTP, client credentials) need nothing prepared:
    the copy is unchanged and the user (or ``complete_credential``) fills it.
    """
    if not uses_oauth2(auth_config):
        return auth_config.model_copy(deep=True)
    flow = _flow(auth_config)
    if flow.authorization_url is None:
        return auth_config.model_copy(deep=True)
    client = _client(auth_config)
    raw = auth_config.raw_auth_credential
    given = raw.oauth2 if raw is not None and raw.oauth2 is not None else OAuth2Auth()
    if given.auth_uri:
        prepared = given.model_copy(update={"client_secret": None})
    else:
        state = secrets.token_urlsafe(32)
        if client.client_secret:
            verifier = _derived_verifier(client.client_secret, state)
        else:
            verifier = secrets.token_urlsafe(64)
        scopes = given.scopes if given.scopes is not None else flow.scopes
        params = {"response_type": "code", "client_id": client.client_id}
        if given.redirect_uri:
            params["redirect_uri"] = given.redirect_uri
        if scopes:
            params["scope"] = " ".join(scopes)
        params["state"] = state
        params["code_challenge"] = _pkce_challenge(verifier)
        params["code_challenge_method"] = "S256"
        prepared = given.model_copy(
            update={
                "client_id": client.client_id,
                # The exchange reads the secret from the tool's raw credential.
                "client_secret": None,
                "auth_uri": _with_query(flow.authorization_url, params),
                "state": state,
                "code_verifier": verifier,
                "scopes": list(scopes),
            }
        )
    exchanged = AuthCredential(
        auth_type=_auth_type(auth_config),
        resource_ref=raw.resource_ref if raw is not None else None,
        oauth2=prepared,
    )
    return auth_config.model_copy(deep=True, update={"exchanged_auth_credential": exchanged})


def _answer(auth_config: AuthConfig) -> OAuth2Auth:
    exchanged = auth_config.exchanged_auth_credential
    if exchanged is None or exchanged.oauth2 is None:
        raise InvalidCredentialError(
            f"credential {auth_config.key!r} has no answer from the user yet: "
            "exchanged_auth_credential.oauth2 must carry auth_response_uri (the URL the "
            "provider redirected to) or auth_code. Send the user to the auth_uri of "
            "authorization_request(auth_config) first."
        )
    return exchanged.oauth2


def _authorization_code(auth_config: AuthConfig, answer: OAuth2Auth) -> str:
    """The code the user's answer carries, after checking the provider's redirect."""
    key = auth_config.key
    if answer.auth_response_uri:
        params = dict(parse_qsl(urlsplit(answer.auth_response_uri).query))
        if "error" in params:
            error = params["error"]
            description = params.get("error_description")
            raise CredentialExchangeError(
                f"the provider did not authorize credential {key!r}: {error}"
                + (f" ({description[:_DESCRIPTION_LIMIT]})" if description else "")
                + ". The user declined, or the request was wrong; ask again with a new "
                "authorization request.",
                error=error,
                error_description=description,
            )
        if answer.state and params.get("state") != answer.state:
            raise CredentialExchangeError(
                f"the answer for credential {key!r} comes back with another state than the "
                "authorization request sent: it belongs to another sign-in (or was forged). "
                "Nothing was exchanged; ask the user again with a new authorization request.",
                error="state_mismatch",
            )
        code = params.get("code") or answer.auth_code
    else:
        code = answer.auth_code
    if not code:
        raise InvalidCredentialError(
            f"the answer for credential {key!r} carries no authorization code: its "
            "auth_response_uri has no ?code= parameter and auth_code is empty. Fill "
            "auth_response_uri with the full URL the provider redirected the browser to."
        )
    return code


async def exchange(
    auth_config: AuthConfig, *, http_client: httpx2.AsyncClient | None = None
) -> AuthCredential:
    """Trade the user's answer (``auth_response_uri`` or ``auth_code``) for tokens.

    Checks that the redirect's ``state`` is the one the authorization request
    sent, then POSTs ``grant_type=authorization_code`` with the code, redirect
    URI, client id (and secret) and PKCE verifier to the token URL. Returns an
    OAuth2 credential with ``access_token``, ``refresh_token`` and
    ``expires_at``; one-time values (code, state, verifier) are not kept.
    Raises ``CredentialExchangeError`` naming the provider's error.
    """
    flow = _flow(auth_config)
    answer = _answer(auth_config)
    code = _authorization_code(auth_config, answer)
    client = _client(auth_config)
    raw = auth_config.raw_auth_credential
    redirect_uri = answer.redirect_uri or (
        raw.oauth2.redirect_uri if raw is not None and raw.oauth2 is not None else None
    )
    form = {"grant_type": "authorization_code", "code": code}
    if redirect_uri:
        form["redirect_uri"] = redirect_uri
    verifier = _code_verifier(answer, client, raw.oauth2 if raw is not None else None)
    if verifier:
        form["code_verifier"] = verifier
    tokens = await _token_request(
        auth_config, flow.token_url, form, client, http_client, CredentialExchangeError
    )
    requested = answer.scopes if answer.scopes is not None else flow.scopes
    granted = OAuth2Auth(
        client_id=client.client_id,
        redirect_uri=redirect_uri,
        token_endpoint_auth_method=answer.token_endpoint_auth_method,
    )
    return AuthCredential(
        auth_type=_auth_type(auth_config),
        resource_ref=raw.resource_ref if raw is not None else None,
        oauth2=_apply_tokens(granted, tokens, requested),
    )


async def client_credentials_token(
    auth_config: AuthConfig, *, http_client: httpx2.AsyncClient | None = None
) -> AuthCredential:
    """A token for the tool itself (``grant_type=client_credentials``), no user involved."""
    flow = _flow(auth_config)
    client = _client(auth_config)
    form = {"grant_type": "client_credentials"}
    raw = auth_config.raw_auth_credential
    given = raw.oauth2 if raw is not None else None
    scopes = given.scopes if given is not None and given.scopes is not None else flow.scopes
    if scopes:
        form["scope"] = " ".join(scopes)
    tokens = await _token_request(
        auth_config, flow.token_url, form, client, http_client, CredentialExchangeError
    )
    return AuthCredential(
        auth_type=_auth_type(auth_config),
        resource_ref=raw.resource_ref if raw is not None else None,
        oauth2=_apply_tokens(OAuth2Auth(client_id=client.client_id), tokens, scopes),
    )


async def refresh(
    credential: AuthCredential,
    auth_config: AuthConfig,
    *,
    http_client: httpx2.AsyncClient | None = None,
) -> AuthCredential:
    """A copy of ``credential`` with a new access token (``grant_type=refresh_token``).

    The refresh token is replaced only if the provider sends a new one (it
    may rotate it, or not). Raises ``CredentialRefreshError``; its ``error`` is
    ``invalid_grant`` when the refresh token is no longer accepted (the user
    must sign in again).
    """
    given = credential.oauth2
    if given is None or not given.refresh_token:
        raise InvalidCredentialError(
            f"credential {auth_config.key!r} has no refresh token, so it cannot be refreshed; "
            "ask the user to sign in again (a new authorization request)."
        )
    flow = _flow(auth_config)
    client = _client(auth_config, given)
    form = {"grant_type": "refresh_token", "refresh_token": given.refresh_token}
    tokens = await _token_request(
        auth_config, flow.refresh_url, form, client, http_client, CredentialRefreshError
    )
    renewed = _apply_tokens(given, tokens, given.scopes)
    return credential.model_copy(deep=True, update={"oauth2": renewed})


def is_expired(
    credential: AuthCredential, now: float | None = None, *, skew: float = EXPIRY_SKEW_SECONDS
) -> bool:
    """Whether the credential's access token expires within ``skew`` seconds of ``now``.

    False for credentials without an expiry (API keys, HTTP, tokens whose
    lifetime the provider did not say).
    """
    oauth = credential.oauth2
    if oauth is None or oauth.expires_at is None:
        return False
    return (time.time() if now is None else now) >= oauth.expires_at - skew


def _apply_tokens(
    base: OAuth2Auth, tokens: dict[str, Any], requested_scopes: list[str] | None
) -> OAuth2Auth:
    expires_in = _as_int(tokens.get("expires_in"))
    scope = tokens.get("scope")
    return base.model_copy(
        update={
            "access_token": tokens["access_token"],
            "refresh_token": _as_str(tokens.get("refresh_token")) or base.refresh_token,
            "id_token": _as_str(tokens.get("id_token")) or base.id_token,
            "expires_in": expires_in,
            "expires_at": int(time.time()) + expires_in if expires_in is not None else None,
            "scopes": scope.split() if isinstance(scope, str) else requested_scopes,
        }
    )


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _as_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


_FIXES = {
    "invalid_grant": "The code or refresh token is expired, already used or revoked: ask the "
    "user to sign in again (a new authorization request).",
    "invalid_client": "Check the client id and secret, and token_endpoint_auth_method "
    "(client_secret_post or client_secret_basic).",
    "unauthorized_client": "The client may not use this grant type; check its settings at the "
    "provider.",
    "invalid_scope": "Request only scopes the provider knows and the client may use.",
}


async def _token_request(
    auth_config: AuthConfig,
    token_url: str,
    form: dict[str, str],
    client: _Client,
    http_client: httpx2.AsyncClient | None,
    error_class: type[CredentialExchangeError],
) -> dict[str, Any]:
    """POST ``form`` to the token endpoint: its answer, or ``error_class`` saying why not."""
    key = auth_config.key
    what = {
        "authorization_code": "exchange the authorization code",
        "refresh_token": "refresh the access token",
        "client_credentials": "issue a client-credentials token",
    }[form["grant_type"]]
    headers = {"Accept": "application/json"}
    body = dict(form)
    if client.client_secret and client.method == "client_secret_basic":
        # RFC 6749 section 2.3.1: both parts form-encoded, then base64.
        pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    else:
        body["client_id"] = client.client_id
        if client.client_secret:
            body["client_secret"] = client.client_secret
    try:
        if http_client is None:
            async with httpx2.AsyncClient(timeout=DEFAULT_TIMEOUT_SECONDS) as own:
                response = await own.post(token_url, data=body, headers=headers)
        else:
            response = await http_client.post(token_url, data=body, headers=headers)
    except httpx2.HTTPError as exc:
        raise error_class(
            f"cannot reach the token endpoint {token_url} to {what} for credential {key!r}: "
            f"{type(exc).__name__}: {exc}. Check the token URL and the network, then retry.",
            error="unreachable",
            token_url=token_url,
        ) from exc
    answer = _response_fields(response)
    status = response.status_code
    if status >= 400 or "error" in answer:
        error = str(answer.get("error") or f"http_{status}")
        description = _as_str(answer.get("error_description"))
        detail = f" ({description[:_DESCRIPTION_LIMIT]})" if description else ""
        fix = _FIXES.get(error, "Check the auth config against the provider's documentation.")
        raise error_class(
            f"the token endpoint {token_url} refused to {what} for credential {key!r}: "
            f"{error}{detail} [HTTP {status}]. {fix}",
            error=error,
            error_description=description,
            status_code=status,
            token_url=token_url,
        )
    if not _as_str(answer.get("access_token")):
        raise error_class(
            f"the token endpoint {token_url} answered [HTTP {status}] without an access_token "
            f"when asked to {what} for credential {key!r}; is the token URL right?",
            error="invalid_response",
            status_code=status,
            token_url=token_url,
        )
    return answer


def _response_fields(response: httpx2.Response) -> dict[str, Any]:
    """The token response's fields: JSON, or form-encoded (some providers still answer so)."""
    content_type = response.headers.get("content-type", "")
    text = response.text
    if "x-www-form-urlencoded" in content_type:
        return dict(parse_qsl(text))
    try:
        parsed = response.json()
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
