"""``BaseAuthProvider``: supplies the credentials of a scheme of your own (``CustomAuthScheme``)."""

from __future__ import annotations

import abc
from typing import Any

from cairn.auth.auth_credential import AuthCredential
from cairn.auth.auth_tool import AuthConfig


class BaseAuthProvider(abc.ABC):
    """Gets a credential for the custom schemes it supports, e.g. by signing a token with a
    key only the server holds. Register an instance with
    ``CredentialManager.register_auth_provider(provider)``; tools whose ``auth_scheme`` is
    one of ``supported_auth_schemes`` then get their credential from it."""

    @property
    def supported_auth_schemes(self) -> tuple[type[Any], ...]:
        """The ``CustomAuthScheme`` subclasses this provider supplies credentials for."""
        return ()

    @abc.abstractmethod
    async def get_auth_credential(
        self, auth_config: AuthConfig, context: Any
    ) -> AuthCredential | None:
        """The credential for ``auth_config`` in this call's ``context`` (a ``ToolContext``),
        or None if there is none to be had (the tool then asks the user for it)."""
