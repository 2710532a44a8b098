"""How a tool's API expects to be authenticated: OpenAPI security schemes as small models.

The JSON is the OpenAPI 3 spelling (``{"type": "apiKey", "in": "header",
"name": "X-Key"}``, ``{"type": "oauth2", "flows": {"authorizationCode":
{...}}}``), so a scheme can be copied from an API's OpenAPI document.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, SerializeAsAny, Tag

from cairn.events._base import CamelModel


class AuthSchemeType(StrEnum):
    """The OpenAPI security scheme types (ADK's name; a scheme's ``type_`` is one of them)."""

    apiKey = "apiKey"
    http = "http"
    oauth2 = "oauth2"
    openIdConnect = "openIdConnect"


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


class OAuthGrantType(StrEnum):
    """An OAuth2 flow, by its grant type."""

    CLIENT_CREDENTIALS = "client_credentials"
    AUTHORIZATION_CODE = "authorization_code"
    IMPLICIT = "implicit"
    PASSWORD = "password"

    @staticmethod
    def from_flow(flow: OAuthFlows) -> OAuthGrantType | None:
        """The grant type of the flow ``flow`` offers (client credentials first, as ADK
        picks), or None if it offers none."""
        if flow.client_credentials is not None:
            return OAuthGrantType.CLIENT_CREDENTIALS
        if flow.authorization_code is not None:
            return OAuthGrantType.AUTHORIZATION_CODE
        return None


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


class CustomAuthScheme(BaseModel):
    """A scheme of your own, for credentials a ``BaseAuthProvider`` supplies (registered with
    ``CredentialManager.register_auth_provider``): subclass it with a default ``type_``
    (e.g. ``type_: str = Field(default="my-sso", alias="type")``) and your own fields."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, serialize_by_alias=True)

    type_: str = Field(alias="type")


def _scheme_tag(value: Any) -> str:
    """Which member of ``AuthScheme`` a value is (by its OpenAPI ``type``; any other type is a
    custom scheme), so that a scheme that does not fit gets that scheme's errors."""
    if isinstance(value, BaseModel):
        for tag, model in _TAGGED:
            if isinstance(value, model):
                return tag
        return "custom"
    if not isinstance(value, dict):
        return "custom"
    kind = value.get("type", value.get("type_"))
    if kind == "http":
        return "bearer" if str(value.get("scheme", "")).lower() == "bearer" else "http"
    return kind if kind in ("apiKey", "oauth2", "openIdConnect") else "custom"


AuthScheme = Annotated[
    Annotated[APIKey, Tag("apiKey")]
    | Annotated[HTTPBearer, Tag("bearer")]
    | Annotated[HTTPBase, Tag("http")]
    | Annotated[OAuth2, Tag("oauth2")]
    | Annotated[OpenIdConnectWithConfig, Tag("openIdConnect")]
    | Annotated[SerializeAsAny[CustomAuthScheme], Tag("custom")],
    Discriminator(_scheme_tag),
]
"""Any of the schemes above, told apart by their OpenAPI ``type`` (and an HTTP scheme's
``scheme``); any other ``type`` is a ``CustomAuthScheme``."""

_TAGGED: tuple[tuple[str, type[BaseModel]], ...] = (
    ("apiKey", APIKey),
    ("bearer", HTTPBearer),
    ("http", HTTPBase),
    ("oauth2", OAuth2),
    ("openIdConnect", OpenIdConnectWithConfig),
    ("custom", CustomAuthScheme),
)
SCHEME_TYPES = tuple(model for _, model in _TAGGED)


def scheme_from_foreign(value: Any) -> Any:
    """A security scheme built with another library's models (``fastapi.openapi.models``'s
    ``OAuth2``, ``APIKey``, ``HTTPBearer``..., as ADK apps build them) as its OpenAPI JSON,
    which cairn's scheme models read; anything else unchanged. An OpenID Connect scheme
    that names only its discovery document is refused, saying what to write instead."""
    if isinstance(value, SCHEME_TYPES):
        return value
    if isinstance(value, BaseModel):
        data = value.model_dump(by_alias=True, exclude_none=True, mode="json")
    elif isinstance(value, dict):
        data = value
    else:
        return value
    if data.get("type") == "openIdConnect" and "authorizationEndpoint" not in data:
        url = data.get("openIdConnectUrl", "its discovery document")
        raise ValueError(
            f"an OpenID Connect scheme that only names its discovery document ({url}) is not "
            "enough: cairn does not fetch it. Copy the endpoints from it into "
            "OpenIdConnectWithConfig(authorization_endpoint=..., token_endpoint=..., "
            "scopes=[...])."
        )
    return data
