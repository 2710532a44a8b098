"""``AuthenticatedFunctionTool``: a function tool whose function gets a ready credential."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from cairn.auth.auth_credential import AuthCredential
from cairn.auth.auth_tool import AuthConfig
from cairn.auth.credential_manager import CredentialManager
from cairn.tools.base_authenticated_tool import run_authenticated
from cairn.tools.function_tool import FunctionTool


class AuthenticatedFunctionTool(FunctionTool):
    """A ``FunctionTool`` that gets its credential first (see ``CredentialManager``): a
    ``credential`` parameter of the function receives it (the model never sees that
    parameter). While the user is asked, the model gets ``response_for_auth_required``
    and the call pauses; it runs again once the user has answered.
    """

    _supplied_parameters = frozenset({"credential"})

    def __init__(
        self,
        *,
        func: Callable[..., Any],
        auth_config: AuthConfig | None = None,
        response_for_auth_required: dict[str, Any] | str | None = None,
    ) -> None:
        super().__init__(func)
        self._auth_config = auth_config
        self._credentials_manager = CredentialManager(auth_config) if auth_config else None
        self._response_for_auth_required = response_for_auth_required
        try:
            self._takes_credential = "credential" in inspect.signature(func).parameters
        except (TypeError, ValueError):
            self._takes_credential = False

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        async def run(credential: AuthCredential | None) -> Any:
            supplied = {"credential": credential} if self._takes_credential else {}
            return await self._call_function(args, tool_context, supplied=supplied)

        return await run_authenticated(
            self._credentials_manager,
            tool_context,
            self.name,
            self._response_for_auth_required,
            run,
        )
