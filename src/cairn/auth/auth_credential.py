"""What a tool authenticates with: an API key, HTTP credentials or OAuth2 tokens (ADK's names).

Secret fields (keys, passwords, tokens, client secrets, codes) are left out of
``repr``, so logging a credential never prints them; they are in its JSON.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from cairn.events._base import CamelModel


class AuthCredentialTypes(StrEnum):
    """The kind of a credential; the values are the OpenAPI security scheme types."""

    API_KEY = "apiKey"
    HTTP = "http"
    OAUTH2 = "oauth2"
    OPEN_ID_CONNECT = "openIdConnect"
    SERVICE_ACCOUNT = "serviceAccount"


class HttpCredentials(CamelModel):
    """A user name and password (``basic``), or a token (``bearer`` and other schemes)."""

    username: str | None = None
    password: str | None = Field(default=None, repr=False)
    token: str | None = Field(default=None, repr=False)


class HttpAuth(CamelModel):
    """HTTP authentication; ``scheme`` is the Authorization header's (``bearer``, ``basic``)."""

    scheme: str
    credentials: HttpCredentials


class OAuth2Auth(CamelModel):
    """An OAuth2 (or OpenID Connect) client and, once exchanged, its tokens.

    The fields fill in over the authorization-code flow: the tool gives
    ``client_id`` (and ``client_secret``, ``redirect_uri``, ``scopes``);
    ``authorization_request`` adds ``auth_uri``, ``state`` and the PKCE
    ``code_verifier``; the user's browser comes back to ``auth_response_uri``
    (or the user pastes ``auth_code``); ``exchange`` turns that into
    ``access_token``, ``refresh_token`` and ``expires_at`` (epoch seconds).
    """

    client_id: str | None = None
    client_secret: str | None = Field(default=None, repr=False)
    auth_uri: str | None = None
    """Where to send the user to sign in and consent (built by ``authorization_request``)."""
    state: str | None = None
    redirect_uri: str | None = None
    auth_response_uri: str | None = Field(default=None, repr=False)
    """The full URL the provider redirected the user's browser to (``?code=...&state=...``)."""
    auth_code: str | None = Field(default=None, repr=False)
    access_token: str | None = Field(default=None, repr=False)
    refresh_token: str | None = Field(default=None, repr=False)
    id_token: str | None = Field(default=None, repr=False)
    """OpenID Connect: the identity token the provider returned with the access token."""
    expires_at: int | None = None
    """When ``access_token`` expires, in seconds since the epoch (None: unknown)."""
    expires_in: int | None = None
    scopes: list[str] | None = None
    code_verifier: str | None = Field(default=None, repr=False)
    """PKCE: the secret whose SHA-256 was sent in ``auth_uri``; the token request proves it."""
    token_endpoint_auth_method: Literal["client_secret_post", "client_secret_basic"] | None = None
    """How the client secret reaches the token endpoint: in the form (the default) or as
    HTTP basic authentication."""


class AuthCredential(CamelModel):
    """One credential of one kind: ``api_key``, ``http`` or ``oauth2`` is set, per ``auth_type``.

    ``resource_ref`` optionally names what the credential is for (cairn only
    keeps it; it is part of the derived credential key).
    """

    auth_type: AuthCredentialTypes
    resource_ref: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    http: HttpAuth | None = None
    oauth2: OAuth2Auth | None = None
