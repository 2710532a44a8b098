"""``BaseAuthenticatedTool``: a tool that gets its credential before it runs (ADK's name)."""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from cairn.auth.auth_credential import AuthCredential
from cairn.auth.auth_tool import AuthConfig
from cairn.auth.credential_manager import CredentialManager
from cairn.auth.errors import CredentialError
from cairn.tools.base_tool import BaseTool

PENDING_AUTHORIZATION = "Pending User Authorization."
"""What the model sees while the user is asked for a credential (ADK's words)."""


@dataclasses.dataclass(frozen=True)
class CredentialProblem:
    """Why a call got no credential, as the model is told (no secret in it)."""

    message: str

    def as_result(self) -> dict[str, str]:
        return {"error": self.message}


async def credential_for_call(
    manager: CredentialManager, tool_context: Any, tool_name: str
) -> AuthCredential | CredentialProblem | None:
    """The credential for this call; None once the user has been asked for it (the call
    pauses); a ``CredentialProblem`` if it cannot be had (the config is wrong, or the
    provider refused)."""
    try:
        credential = await manager.get_auth_credential(tool_context)
        if credential is None:
            if tool_context is None:
                return CredentialProblem(
                    f"tool {tool_name!r} needs a credential from the user and was called "
                    "without a tool context to ask in: run it through an agent."
                )
            await manager.request_credential(tool_context)
        return credential
    except CredentialError as error:
        return CredentialProblem(f"tool {tool_name!r} could not get its credential: {error}")


async def run_authenticated(
    manager: CredentialManager | None,
    tool_context: Any,
    tool_name: str,
    pending_response: Any,
    run: Callable[[AuthCredential | None], Awaitable[Any]],
) -> Any:
    """``run(credential)`` once the call has its credential (``run(None)`` without a
    ``manager``); ``pending_response`` while the user is asked; an error result if the
    credential cannot be had."""
    if manager is None:
        return await run(None)
    found = await credential_for_call(manager, tool_context, tool_name)
    if isinstance(found, CredentialProblem):
        return found.as_result()
    if found is None:
        return pending_response or PENDING_AUTHORIZATION
    return await run(found)


class BaseAuthenticatedTool(BaseTool):
    """A tool that needs a credential: ``run_async`` finds it (see ``CredentialManager``), or
    asks the user for it and returns ``response_for_auth_required`` meanwhile; then calls
    ``_run_async_impl(args=..., tool_context=..., credential=...)``, which subclasses write.
    Without an ``auth_config`` the tool runs with ``credential=None``.
    """

    def __init__(
        self,
        *,
        name: str,
        description: str,
        auth_config: AuthConfig | None = None,
        response_for_auth_required: dict[str, Any] | str | None = None,
    ) -> None:
        super().__init__(name=name, description=description)
        self._auth_config = auth_config
        self._credentials_manager = CredentialManager(auth_config) if auth_config else None
        self._response_for_auth_required = response_for_auth_required

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        async def run(credential: AuthCredential | None) -> Any:
            return await self._run_async_impl(
                args=args, tool_context=tool_context, credential=credential
            )

        return await run_authenticated(
            self._credentials_manager,
            tool_context,
            self.name,
            self._response_for_auth_required,
            run,
        )

    @abc.abstractmethod
    async def _run_async_impl(
        self, *, args: dict[str, Any], tool_context: Any, credential: AuthCredential | None
    ) -> Any:
        """Do the tool's work with ``credential`` (None without an ``auth_config``)."""
