"""How a tool's API expects to be authenticated: OpenAPI security schemes as small models.

The JSON is the OpenAPI 3 spelling (``{"type": "apiKey", "in": "header",
"name": "X-Key"}``, ``{"type": "oauth2", "flows": {"authorizationCode":
{...}}}``), so a scheme can be copied from an API's OpenAPI document.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field

from cairn.events._base import CamelModel


class APIKeyIn(StrEnum):
    """Where an API key goes in a request."""

    query = "query"
    header = "header"
    cookie = "cookie"


class APIKey(CamelModel):
    """An API key sent in a header, query parameter or cookie named ``name``."""

    type_: Literal["apiKey"] = Field(default="apiKey", alias="type")
    in_: APIKeyIn = Field(alias="in")
    name: str
    description: str | None = None


class HTTPBase(CamelModel):
    """HTTP authentication with the Authorization header's ``scheme`` (e.g. ``basic``)."""

    type_: Literal["http"] = Field(default="http", alias="type")
    scheme: str
    description: str | None = None


class HTTPBearer(HTTPBase):
    """``Authorization: Bearer <token>``; ``bearer_format`` is a hint such as ``JWT``."""

    scheme: Literal["bearer"] = "bearer"
    bearer_format: str | None = None


class OAuthFlowAuthorizationCode(CamelModel):
    """The authorization-code flow: a user signs in at ``authorization_url`` and consents."""

    authorization_url: str
    token_url: str
    refresh_url: str | None = None
    """Where refresh tokens are redeemed (default: ``token_url``)."""
    scopes: dict[str, str] = Field(default_factory=dict)
    """Scope name -> what it allows (the names are requested)."""


class OAuthFlowClientCredentials(CamelModel):
    """The client-credentials flow: the tool's own identity, no user involved."""

    token_url: str
    refresh_url: str | None = None
    scopes: dict[str, str] = Field(default_factory=dict)


class OAuthFlows(CamelModel):
    """The OAuth2 flows an API supports (cairn runs these two)."""

    authorization_code: OAuthFlowAuthorizationCode | None = None
    client_credentials: OAuthFlowClientCredentials | None = None


class OAuth2(CamelModel):
    """OAuth2, with the flows the API supports."""

    type_: Literal["oauth2"] = Field(default="oauth2", alias="type")
    flows: OAuthFlows
    description: str | None = None


class OpenIdConnectWithConfig(CamelModel):
    """OpenID Connect, with the provider's endpoints written out (from its discovery document).

    Runs the authorization-code flow like ``OAuth2``; the token response may
    carry an ``id_token``.
    """

    type_: Literal["openIdConnect"] = Field(default="openIdConnect", alias="type")
    authorization_endpoint: str
    token_endpoint: str
    userinfo_endpoint: str | None = None
    revocation_endpoint: str | None = None
    token_endpoint_auth_methods_supported: list[str] | None = None
    grant_types_supported: list[str] | None = None
    scopes: list[str] = Field(default_factory=list)
    description: str | None = None


AuthScheme = APIKey | HTTPBearer | HTTPBase | OAuth2 | OpenIdConnectWithConfig
"""Any of the schemes above (HTTPBearer before HTTPBase, so a bearer scheme reads as one)."""


SCHEME_TYPES = (APIKey, HTTPBearer, HTTPBase, OAuth2, OpenIdConnectWithConfig)


def scheme_from_foreign(value: Any) -> Any:
    """A security scheme built with another library's models (``fastapi.openapi.models``'s
    ``OAuth2``, ``APIKey``, ``HTTPBearer``..., as ADK apps build them) as its OpenAPI JSON,
    which cairn's scheme models read; anything else unchanged."""
    if not isinstance(value, BaseModel) or isinstance(value, SCHEME_TYPES):
        return value
    data = value.model_dump(by_alias=True, exclude_none=True, mode="json")
    if data.get("type") == "openIdConnect" and "authorizationEndpoint" not in data:
        url = data.get("openIdConnectUrl", "its discovery document")
        raise ValueError(
            f"an OpenID Connect scheme that only names its discovery document ({url}) is not "
            "enough: cairn does not fetch it. Copy the endpoints from it into "
            "OpenIdConnectWithConfig(authorization_endpoint=..., token_endpoint=..., "
            "scopes=[...])."
        )
    return data
