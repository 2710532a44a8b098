"""``AuthProviderRegistry``: which ``BaseAuthProvider`` supplies each custom scheme's credential."""

from __future__ import annotations

from typing import Any

from cairn.auth.base_auth_provider import BaseAuthProvider


class AuthProviderRegistry:
    """Providers by the scheme class they serve (``CredentialManager`` keeps the one in use)."""

    def __init__(self) -> None:
        self._providers: dict[type[Any], BaseAuthProvider] = {}

    def register(self, auth_scheme_type: type[Any], provider_instance: BaseAuthProvider) -> None:
        """Let ``provider_instance`` supply the credentials of schemes of ``auth_scheme_type``."""
        self._providers[auth_scheme_type] = provider_instance

    def get_provider(self, auth_scheme: Any) -> BaseAuthProvider | None:
        """The provider of ``auth_scheme`` (a scheme, or a scheme class), or None."""
        kind = auth_scheme if isinstance(auth_scheme, type) else type(auth_scheme)
        return self._providers.get(kind)

    def class_for_type(self, type_: str) -> type[Any] | None:
        """The registered scheme class whose ``type_`` defaults to ``type_`` (to read a custom
        scheme back from JSON as that class), or None."""
        for kind in self._providers:
            field = getattr(kind, "model_fields", {}).get("type_")
            if field is not None and field.default == type_:
                return kind
        return None
