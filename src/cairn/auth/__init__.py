"""Credentials for tools: auth schemes, credentials, OAuth2, and where they are kept.

A tool describes what it needs with an ``AuthConfig`` (an OpenAPI-style
``auth_scheme`` plus what it was configured with). ``user_request``
prepares what a user is asked, without secrets; ``complete_credential`` turns
the answer into a usable ``AuthCredential``; a credential service keeps it per
app and user.

``SessionStoreCredentialService`` is imported when first asked for: it needs SQLAlchemy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cairn.auth.auth_credential import (
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HttpCredentials,
    OAuth2Auth,
)
from cairn.auth.auth_provider_registry import AuthProviderRegistry
from cairn.auth.auth_schemes import (
    APIKey,
    APIKeyIn,
    AuthScheme,
    AuthSchemeType,
    CustomAuthScheme,
    HTTPBase,
    HTTPBearer,
    OAuth2,
    OAuthFlowAuthorizationCode,
    OAuthFlowClientCredentials,
    OAuthFlows,
    OAuthGrantType,
    OpenIdConnectWithConfig,
)
from cairn.auth.auth_tool import AuthConfig, AuthToolArguments, derive_credential_key
from cairn.auth.base_auth_provider import BaseAuthProvider
from cairn.auth.credential_completion import (
    accept_auth_response,
    check_credential,
    complete_credential,
)
from cairn.auth.credential_manager import CredentialManager
from cairn.auth.credential_service import (
    BaseCredentialService,
    CallbackContextLike,
    EncryptionKey,
    InMemoryCredentialService,
    SessionStateCredentialService,
    new_encryption_key,
)
from cairn.auth.errors import (
    CredentialDecryptionError,
    CredentialError,
    CredentialExchangeError,
    CredentialFormatError,
    CredentialRefreshError,
    InvalidCredentialError,
    InvalidEncryptionKeyError,
)
from cairn.auth.oauth2 import (
    EXPIRY_SKEW_SECONDS,
    authorization_request,
    client_credentials_token,
    exchange,
    is_expired,
    refresh,
    uses_oauth2,
)
from cairn.auth.redaction import user_request, without_secrets
from cairn.lazy_names import lazy_names

if TYPE_CHECKING:
    from cairn.auth.credential_service import SessionStoreCredentialService

_LAZY = {
    "SessionStoreCredentialService": "cairn.auth.credential_service",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY)


__all__ = [
    "EXPIRY_SKEW_SECONDS",
    "APIKey",
    "APIKeyIn",
    "AuthConfig",
    "AuthCredential",
    "AuthCredentialTypes",
    "AuthProviderRegistry",
    "AuthScheme",
    "AuthSchemeType",
    "AuthToolArguments",
    "BaseAuthProvider",
    "BaseCredentialService",
    "CallbackContextLike",
    "CredentialDecryptionError",
    "CredentialError",
    "CredentialExchangeError",
    "CredentialFormatError",
    "CredentialManager",
    "CredentialRefreshError",
    "CustomAuthScheme",
    "EncryptionKey",
    "HTTPBase",
    "HTTPBearer",
    "HttpAuth",
    "HttpCredentials",
    "InMemoryCredentialService",
    "InvalidCredentialError",
    "InvalidEncryptionKeyError",
    "OAuth2",
    "OAuth2Auth",
    "OAuthFlowAuthorizationCode",
    "OAuthFlowClientCredentials",
    "OAuthFlows",
    "OAuthGrantType",
    "OpenIdConnectWithConfig",
    "SessionStateCredentialService",
    "SessionStoreCredentialService",
    "accept_auth_response",
    "authorization_request",
    "check_credential",
    "client_credentials_token",
    "complete_credential",
    "derive_credential_key",
    "exchange",
    "is_expired",
    "new_encryption_key",
    "refresh",
    "user_request",
    "uses_oauth2",
    "without_secrets",
]
