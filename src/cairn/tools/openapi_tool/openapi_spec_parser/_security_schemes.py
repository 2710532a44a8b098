"""An operation's security scheme, as the document declares it, in the form cairn runs."""

from __future__ import annotations

from typing import Any

from cairn.auth.auth_schemes import AuthScheme
from cairn.tools.openapi_tool.auth.auth_helpers import dict_to_auth_scheme

_RUNNABLE_FLOWS = ("authorizationCode", "clientCredentials")


def scheme_from_spec(name: str, declared: Any) -> tuple[AuthScheme | None, str | None]:
    """(the scheme, None), or (None, why cairn cannot use it): an OAuth2 scheme keeps the
    flows cairn runs (authorization code, client credentials); extensions (``x-...``) are
    dropped."""
    if not isinstance(declared, dict):
        return None, f"the operation names the security scheme {name!r}, which the document lacks"
    data = {k: v for k, v in declared.items() if not str(k).startswith("x-")}
    if data.get("type") == "oauth2":
        flows = data.get("flows") or {}
        kept = {k: _without_extensions(v) for k, v in flows.items() if k in _RUNNABLE_FLOWS}
        if not kept:
            return None, (
                f"its OAuth2 scheme {name!r} offers only the {', '.join(sorted(flows)) or 'no'} "
                "flow(s); cairn runs authorizationCode and clientCredentials. Pass "
                "auth_scheme=OAuth2(flows=OAuthFlows(...)) with one of them to OpenAPIToolset, "
                "or a token with token_to_scheme_credential('oauth2Token', ...)."
            )
        data["flows"] = kept
    if data.get("type") == "openIdConnect" and "authorizationEndpoint" in data:
        data.pop("openIdConnectUrl", None)
    elif data.get("type") == "openIdConnect":
        return None, (
            f"its OpenID Connect scheme {name!r} names only its discovery document "
            f"({data.get('openIdConnectUrl', '?')}); cairn does not fetch it. Pass "
            "auth_scheme=OpenIdConnectWithConfig(authorization_endpoint=..., "
            "token_endpoint=..., scopes=[...]) to OpenAPIToolset."
        )
    try:
        return dict_to_auth_scheme(data), None
    except ValueError as error:
        return None, f"its security scheme {name!r} cannot be used: {error}"


def _without_extensions(flow: Any) -> Any:
    if not isinstance(flow, dict):
        return flow
    return {k: v for k, v in flow.items() if not str(k).startswith("x-")}
