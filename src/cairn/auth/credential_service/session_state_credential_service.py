"""ADK's ``SessionStateCredentialService``: credentials that belong to one session.

ADK keeps them in the session's state. In cairn every state change is an event
in the session's log, and a secret never enters the log, so this service keeps
each session's credentials in this process's memory instead: tools that save a
credential in one invocation load it in the session's later ones, and another
session of the same user does not see it. They are gone when the process
exits (as with ``InMemoryCredentialService``); for credentials that last, use
``SessionStoreCredentialService`` (per user, encrypted at rest).
"""

from __future__ import annotations

from typing import Protocol

import httpx2

from cairn.auth.auth_credential import AuthCredential
from cairn.auth.auth_tool import AuthConfig
from cairn.auth.credential_service.in_memory_credential_service import InMemoryCredentialService


class _Session(Protocol):
    @property
    def id(self) -> str: ...


class _Invocation(Protocol):
    @property
    def app_name(self) -> str: ...

    @property
    def user_id(self) -> str: ...

    @property
    def session(self) -> _Session: ...


class _SessionContext(Protocol):
    @property
    def invocation_context(self) -> _Invocation: ...


class SessionStateCredentialService(InMemoryCredentialService):
    """Credentials per session, kept in this process's memory and never in the session's
    state or log (see the module docstring for why this differs from ADK).

    ``load_credential``/``save_credential``/``delete_credential`` (a tool's context)
    work on the context's session; the ``*_user_*`` methods, which name no session,
    work on credentials kept for the user as a whole.
    """

    def __init__(self, *, http_client: httpx2.AsyncClient | None = None) -> None:
        super().__init__(http_client=http_client)
        self._sessions: dict[tuple[str, str, str], InMemoryCredentialService] = {}

    def _of_session(self, context: _SessionContext) -> tuple[InMemoryCredentialService, str, str]:
        invocation = context.invocation_context
        key = (invocation.app_name, invocation.user_id, invocation.session.id)
        store = self._sessions.get(key)
        if store is None:
            store = self._sessions[key] = InMemoryCredentialService(http_client=self.http_client)
        return store, invocation.app_name, invocation.user_id

    async def load_credential(  # type: ignore[override]
        self, auth_config: AuthConfig, callback_context: _SessionContext
    ) -> AuthCredential | None:
        """The credential saved in this session for the config (renewed if it expired)."""
        store, app_name, user_id = self._of_session(callback_context)
        return await store.load_user_credential(
            app_name=app_name, user_id=user_id, auth_config=auth_config
        )

    async def save_credential(  # type: ignore[override]
        self, auth_config: AuthConfig, callback_context: _SessionContext
    ) -> None:
        """Keep ``auth_config.exchanged_auth_credential`` for this session."""
        store, app_name, user_id = self._of_session(callback_context)
        await store.save_user_credential(
            app_name=app_name, user_id=user_id, auth_config=auth_config
        )

    async def delete_credential(  # type: ignore[override]
        self, auth_config: AuthConfig, callback_context: _SessionContext
    ) -> None:
        """Forget this session's credential for the config."""
        store, app_name, user_id = self._of_session(callback_context)
        await store.delete_user_credential(
            app_name=app_name, user_id=user_id, auth_config=auth_config
        )
