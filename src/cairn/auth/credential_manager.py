"""``CredentialManager``: the credential a tool's ``AuthConfig`` leads to in one call, or None
when the user must be asked (ADK's name; ``AuthenticatedFunctionTool``, ``BaseAuthenticatedTool``
and ``RestApiTool`` get theirs through it)."""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from cairn.auth.auth_credential import AuthCredential, AuthCredentialTypes
from cairn.auth.auth_provider_registry import AuthProviderRegistry
from cairn.auth.auth_schemes import CustomAuthScheme
from cairn.auth.auth_tool import AuthConfig
from cairn.auth.base_auth_provider import BaseAuthProvider
from cairn.auth.credential_completion import check_credential, complete_credential
from cairn.auth.errors import InvalidCredentialError
from cairn.auth.oauth2 import uses_client_credentials, uses_oauth2

logger = logging.getLogger(__name__)

_READY_TYPES = (AuthCredentialTypes.API_KEY, AuthCredentialTypes.HTTP)
"""Raw credentials that are used as they are (no exchange, no user)."""


class CredentialManager:
    """Finds the credential for ``auth_config`` in a tool call, in this order:

    1. a custom scheme (``CustomAuthScheme``): its registered ``BaseAuthProvider``;
    2. an API key or HTTP credential the tool was configured with: that one;
    3. the user's answer to this call's credential request (``get_auth_response``);
    4. the credential saved for this app and user (``load_credential``; refreshed if it
       expired);
    5. a client-credentials flow, or an OAuth2 token the tool was given: a token, fetched
       (or refreshed) and saved.

    None means the user must be asked: call ``request_credential(tool_context)`` and
    return; the call runs again with the answer once the user has given it.
    """

    _auth_provider_registry: ClassVar[AuthProviderRegistry] = AuthProviderRegistry()

    def __init__(self, auth_config: AuthConfig) -> None:
        self._auth_config = auth_config

    @property
    def auth_config(self) -> AuthConfig:
        """The tool's auth config (its secrets included: never log or store it)."""
        return self._auth_config

    @classmethod
    def register_auth_provider(cls, provider: BaseAuthProvider) -> None:
        """Let ``provider`` supply the credentials of the schemes it supports (for every
        tool in this process; the first provider registered for a scheme is kept)."""
        schemes = provider.supported_auth_schemes
        if not schemes:
            raise ValueError(
                f"{type(provider).__name__} names no scheme it supports: override "
                "supported_auth_schemes to return its CustomAuthScheme subclasses."
            )
        for scheme in schemes:
            existing = cls._auth_provider_registry.get_provider(scheme)
            if existing is not None and existing is not provider:
                logger.warning(
                    "a provider is already registered for %s; keeping it, not %s",
                    scheme.__name__,
                    type(provider).__name__,
                )
                continue
            cls._auth_provider_registry.register(scheme, provider)

    async def request_credential(self, context: Any) -> None:
        """Ask the user for the credential (the call pauses; see ``ToolContext``)."""
        request = getattr(context, "request_credential", None)
        if request is None:
            raise TypeError(
                "request_credential needs the ToolContext of a tool call (it pauses that "
                f"call); got {type(context).__name__}."
            )
        request(self._auth_config)

    async def get_auth_credential(self, context: Any) -> AuthCredential | None:
        """The credential to use now, or None if the user must be asked (see the class).

        Raises ``InvalidCredentialError`` when the config cannot work (an OAuth2 scheme
        without the tool's client), ``CredentialExchangeError`` when a provider refused a
        token request; messages never quote a secret.
        """
        config = self._auth_config
        if isinstance(config.auth_scheme, CustomAuthScheme):
            return await self._from_provider(config.auth_scheme, context)
        raw = config.raw_auth_credential
        self._check_config(raw)
        if raw is not None and raw.auth_type in _READY_TYPES:
            check_credential(config, raw)
            return raw.model_copy(deep=True)
        if context is not None:
            answered: AuthCredential | None = context.get_auth_response(config)
            if answered is not None:
                return answered
            loaded: AuthCredential | None = await context.load_credential(config)
            if loaded is not None:
                return loaded
        given_token = raw is not None and raw.oauth2 is not None and raw.oauth2.access_token
        if uses_oauth2(config) and (uses_client_credentials(config) or given_token):
            credential = await complete_credential(config)
            await self.save_credential(context, credential)
            return credential
        return None

    async def save_credential(self, context: Any, credential: AuthCredential) -> None:
        """Keep ``credential`` for this app and user with the Runner's credential service
        (nothing without one)."""
        invocation = getattr(context, "invocation_context", None)
        if getattr(invocation, "credential_service", None) is None:
            return
        await context.save_credential(
            self._auth_config.model_copy(update={"exchanged_auth_credential": credential})
        )

    def _check_config(self, raw: AuthCredential | None) -> None:
        config = self._auth_config
        if uses_oauth2(config) and (raw is None or raw.oauth2 is None):
            raise InvalidCredentialError(
                f"credential {config.key!r} uses {config.auth_scheme.type_} but the tool names "
                "no OAuth2 client: give auth_credential=AuthCredential(auth_type="
                "AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(client_id=..., "
                "client_secret=...))."
            )

    async def _from_provider(self, scheme: CustomAuthScheme, context: Any) -> AuthCredential | None:
        registry = self._auth_provider_registry
        provider = registry.get_provider(scheme)
        if provider is None:
            registered = registry.class_for_type(scheme.type_)
            if registered is not None:  # read back from JSON: the registered class's own
                scheme = registered.model_validate(scheme.model_dump(by_alias=True))
                self._auth_config = self._auth_config.model_copy(update={"auth_scheme": scheme})
                provider = registry.get_provider(registered)
        if provider is None:
            raise InvalidCredentialError(
                f"no auth provider is registered for the custom scheme {scheme.type_!r}: call "
                "CredentialManager.register_auth_provider(YourProvider()) before the agent runs."
            )
        supplied = await provider.get_auth_credential(self._auth_config, context)
        if supplied is not None:
            return supplied
        if context is not None:
            answered: AuthCredential | None = context.get_auth_response(self._auth_config)
            return answered
        return None
