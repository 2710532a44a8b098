"""Helpers that build an OpenAPI tool's ``auth_scheme`` and ``auth_credential`` (ADK's names),
and place a credential in a request."""

from __future__ import annotations

import base64
from typing import Any, Literal

from pydantic import BaseModel, TypeAdapter, ValidationError

from cairn.auth.auth_credential import (
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HttpCredentials,
    OAuth2Auth,
)
from cairn.auth.auth_schemes import (
    APIKey,
    APIKeyIn,
    AuthScheme,
    HTTPBearer,
    OpenIdConnectWithConfig,
)
from cairn.auth.errors import InvalidCredentialError
from cairn.tools.openapi_tool.common.common import ApiParameter

INTERNAL_AUTH_PREFIX = "_auth_prefix_vaf_"
"""Prefix of the argument names that carry a credential into a request (never declared to
the model, so it cannot fill or see them)."""

_SCHEME: TypeAdapter[AuthScheme] = TypeAdapter(AuthScheme)


class OpenIdConfig(BaseModel):
    """An OpenID Connect client: its id and secret, the provider's endpoints, the redirect URI."""

    client_id: str
    auth_uri: str
    token_uri: str
    client_secret: str
    redirect_uri: str | None = None


def token_to_scheme_credential(
    token_type: Literal["apikey", "oauth2Token"],
    location: Literal["header", "query", "cookie"] | None = None,
    name: str | None = None,
    credential_value: str | None = None,
) -> tuple[AuthScheme, AuthCredential | None]:
    """A scheme and credential for an API key (``"apikey"``, in the ``location`` named
    ``name``) or a bearer token (``"oauth2Token"``, always the Authorization header).
    Without ``credential_value`` the credential is None: the user is asked for it."""
    if token_type == "apikey":
        if location not in ("header", "query", "cookie"):
            raise ValueError(
                f"an API key goes in a 'header', 'query' or 'cookie', not {location!r}"
            )
        if not name:
            raise ValueError("an API key needs the name of its header, query parameter or cookie")
        scheme: AuthScheme = APIKey(in_=APIKeyIn(location), name=name)
        credential = (
            AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=credential_value)
            if credential_value
            else None
        )
        return scheme, credential
    if token_type == "oauth2Token":
        bearer = HTTPBearer(bearer_format="JWT")
        token = (
            AuthCredential(
                auth_type=AuthCredentialTypes.HTTP,
                http=HttpAuth(scheme="bearer", credentials=HttpCredentials(token=credential_value)),
            )
            if credential_value
            else None
        )
        return bearer, token
    raise ValueError(f"token_type is 'apikey' or 'oauth2Token', not {token_type!r}")


def openid_dict_to_scheme_credential(
    config_dict: dict[str, Any], scopes: list[str], credential_dict: dict[str, Any]
) -> tuple[OpenIdConnectWithConfig, AuthCredential]:
    """An OpenID Connect scheme from a provider's discovery document (``config_dict``: at
    least ``authorization_endpoint`` and ``token_endpoint``) and a client from
    ``credential_dict`` (``client_id``, ``client_secret``, optionally ``redirect_uri``; a
    client file with one top-level entry, as Google's, is read through that entry)."""
    fields = {k: v for k, v in config_dict.items() if k in OpenIdConnectWithConfig.model_fields}
    try:
        scheme = OpenIdConnectWithConfig.model_validate({**fields, "scopes": scopes})
    except ValidationError as error:
        raise ValueError(
            "the OpenID Connect configuration needs authorization_endpoint and "
            f"token_endpoint: {error.errors()[0]['msg']} at {error.errors()[0]['loc']}"
        ) from None
    if len(credential_dict) == 1:
        (only,) = credential_dict.values()
        if isinstance(only, dict) and {"client_id", "client_secret"} <= only.keys():
            credential_dict = only
    missing = [k for k in ("client_id", "client_secret") if k not in credential_dict]
    if missing:
        raise ValueError(f"credential_dict lacks {', '.join(missing)}")
    credential = AuthCredential(
        auth_type=AuthCredentialTypes.OPEN_ID_CONNECT,
        oauth2=OAuth2Auth(
            client_id=credential_dict["client_id"],
            client_secret=credential_dict["client_secret"],
            redirect_uri=credential_dict.get("redirect_uri"),
        ),
    )
    return scheme, credential


def dict_to_auth_scheme(data: dict[str, Any]) -> AuthScheme:
    """An OpenAPI security scheme object (e.g. from ``components.securitySchemes``) as a
    scheme model; ``ValueError`` naming what does not fit."""
    if "type" not in data:
        raise ValueError("a security scheme needs a 'type' (apiKey, http, oauth2, openIdConnect)")
    try:
        return _SCHEME.validate_python(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"][1:]) or "(scheme)"
        raise ValueError(
            f"the {data['type']!r} security scheme does not fit at {where}: {first['msg']}"
        ) from None


def _header(value: str, auth_scheme: Any, default: str) -> tuple[ApiParameter, dict[str, Any]]:
    parameter = ApiParameter(
        original_name="Authorization",
        param_location="header",
        param_schema={"type": "string"},
        description=getattr(auth_scheme, "description", None) or default,
        py_name=INTERNAL_AUTH_PREFIX + "Authorization",
    )
    return parameter, {parameter.name: value}


def credential_to_param(
    auth_scheme: AuthScheme, auth_credential: AuthCredential | None
) -> tuple[ApiParameter | None, dict[str, Any] | None]:
    """Where ``auth_credential`` goes in a request for ``auth_scheme``: the parameter (a
    header, query parameter or cookie) and its value, keyed by the parameter's name. An
    API key goes where its scheme says; an HTTP token or an OAuth2 / OpenID Connect access
    token goes in ``Authorization: Bearer``; a user name and password in ``Authorization:
    Basic``. (None, None) without a credential."""
    if auth_credential is None:
        return None, None
    if isinstance(auth_scheme, APIKey) and auth_credential.api_key:
        parameter = ApiParameter(
            original_name=auth_scheme.name,
            param_location=auth_scheme.in_.value,
            param_schema={"type": "string"},
            description=auth_scheme.description or "",
            py_name=INTERNAL_AUTH_PREFIX + auth_scheme.name,
        )
        return parameter, {parameter.name: auth_credential.api_key}
    http = auth_credential.http
    if http is not None:
        given = http.credentials
        if http.scheme.lower() == "basic":
            username = given.username or ""
            if ":" in username:
                raise InvalidCredentialError(
                    "an HTTP basic user name cannot contain ':' (it separates the password)"
                )
            pair = base64.b64encode(f"{username}:{given.password or ''}".encode()).decode("ascii")
            return _header(f"Basic {pair}", auth_scheme, "Basic authentication")
        if given.token:
            prefix = "Bearer" if http.scheme.lower() == "bearer" else http.scheme
            return _header(f"{prefix} {given.token}", auth_scheme, "Bearer token")
    if auth_credential.oauth2 is not None and auth_credential.oauth2.access_token:
        return _header(f"Bearer {auth_credential.oauth2.access_token}", auth_scheme, "Bearer token")
    raise InvalidCredentialError(
        f"a {auth_credential.auth_type.value!r} credential without a key, token or password "
        f"cannot authenticate a request for a {auth_scheme.type_!r} scheme"
    )
