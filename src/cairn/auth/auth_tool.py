"""``AuthConfig``: what a tool needs (a scheme), what it has (a raw credential), what it got.

The same config travels from the tool to the user and back: a tool asks with
``ToolContext.request_credential(auth_config)``, the user's client fills
``exchanged_auth_credential``, and ``complete_credential`` turns that into a
usable credential, kept under ``credential_key`` by a credential service.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import field_validator, model_validator

from cairn.auth.auth_credential import AuthCredential
from cairn.auth.auth_schemes import (
    APIKey,
    AuthScheme,
    CustomAuthScheme,
    HTTPBase,
    OpenIdConnectWithConfig,
    scheme_from_foreign,
)
from cairn.events._base import CamelModel


def _scheme_identity(auth_scheme: AuthScheme) -> dict[str, Any]:
    """What identifies a scheme: where the secret goes, or which provider, client flow and
    scopes; not descriptions or hints, which may be reworded."""
    if isinstance(auth_scheme, APIKey):
        return {"type": "apiKey", "in": auth_scheme.in_.value, "name": auth_scheme.name}
    if isinstance(auth_scheme, HTTPBase):
        return {"type": "http", "scheme": auth_scheme.scheme.lower()}
    if isinstance(auth_scheme, OpenIdConnectWithConfig):
        return {
            "type": "openIdConnect",
            "authorizationEndpoint": auth_scheme.authorization_endpoint,
            "tokenEndpoint": auth_scheme.token_endpoint,
            "scopes": sorted(auth_scheme.scopes),
        }
    if isinstance(auth_scheme, CustomAuthScheme):
        fields = auth_scheme.model_dump(mode="json", by_alias=True, exclude_none=True)
        fields.pop("description", None)
        return {**fields, "type": auth_scheme.type_}
    flows: dict[str, Any] = {}
    code = auth_scheme.flows.authorization_code
    if code is not None:
        flows["authorizationCode"] = {
            "authorizationUrl": code.authorization_url,
            "tokenUrl": code.token_url,
            "scopes": sorted(code.scopes),
        }
    machine = auth_scheme.flows.client_credentials
    if machine is not None:
        flows["clientCredentials"] = {
            "tokenUrl": machine.token_url,
            "scopes": sorted(machine.scopes),
        }
    return {"type": "oauth2", "flows": flows}


def derive_credential_key(
    auth_scheme: AuthScheme, raw_auth_credential: AuthCredential | None = None
) -> str:
    """A stable key for a tool's auth needs, e.g. ``oauth2_5f0c1e9a2b7d4c38``.

    A SHA-256 prefix of what identifies the scheme (type; key location; HTTP
    scheme; OAuth2 endpoints and scope names) and of the raw credential's
    identifying fields (type, resource, client id, user name), never of a
    secret: the same tool config always maps to the same stored credential,
    and the key reveals nothing. The recipe is part of cairn's storage
    format; changing it would orphan stored credentials.
    """
    identity: dict[str, Any] = {"scheme": _scheme_identity(auth_scheme)}
    if raw_auth_credential is not None:
        raw = raw_auth_credential
        identity["credential"] = {
            "authType": raw.auth_type.value,
            "resourceRef": raw.resource_ref,
            "clientId": raw.oauth2.client_id if raw.oauth2 else None,
            "username": raw.http.credentials.username if raw.http else None,
        }
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return f"{identity['scheme']['type']}_{digest}"


class AuthConfig(CamelModel):
    """A tool's authentication: ``auth_scheme`` (required), ``raw_auth_credential`` (what the
    tool was configured with: an API key, or an OAuth2 client id and secret),
    ``exchanged_auth_credential`` (filled in by the authorization request, the user
    and the exchange) and ``credential_key`` (derived from the scheme and the raw
    credential when not given; see ``derive_credential_key``).
    """

    auth_scheme: AuthScheme
    raw_auth_credential: AuthCredential | None = None
    exchanged_auth_credential: AuthCredential | None = None
    credential_key: str | None = None

    @field_validator("auth_scheme", mode="before")
    @classmethod
    def _read_foreign_scheme(cls, value: Any) -> Any:
        return scheme_from_foreign(value)

    @model_validator(mode="after")
    def _fill_credential_key(self) -> AuthConfig:
        if self.credential_key is None:
            self.credential_key = derive_credential_key(self.auth_scheme, self.raw_auth_credential)
            # Derived, not given: an answer that did not name a key is not compared by it.
            self.__pydantic_fields_set__.discard("credential_key")
        return self

    @property
    def key(self) -> str:
        """``credential_key``, derived if it was left out (e.g. by ``model_construct``)."""
        return self.credential_key or derive_credential_key(
            self.auth_scheme, self.raw_auth_credential
        )


class AuthToolArguments(CamelModel):
    """The arguments of an ``adk_request_credential`` call: which tool call waits, for what."""

    function_call_id: str
    auth_config: AuthConfig
