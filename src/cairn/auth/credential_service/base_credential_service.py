"""The credential-service contract: each user's credentials, per app, under a credential key."""

from __future__ import annotations

import abc
import logging
from typing import Protocol

import httpx2

from cairn.auth.auth_credential import AuthCredential
from cairn.auth.auth_tool import AuthConfig
from cairn.auth.credential_completion import check_credential
from cairn.auth.errors import CredentialRefreshError, InvalidCredentialError
from cairn.auth.oauth2 import client_credentials_token, is_expired, refresh, uses_client_credentials
from cairn.errors import LimitExceededError
from cairn.sessions.ids import CREDENTIAL_KEY_LENGTH
from cairn.sessions.ids import MAX_ID_LENGTH as KEY_LENGTH

logger = logging.getLogger(__name__)

_ONE_TIME_FIELDS = {"auth_uri", "state", "auth_response_uri", "auth_code", "code_verifier"}
"""OAuth2 values used once, during the sign-in; never stored."""
_TOOL_FIELDS = {"client_secret"}
"""The tool's own secret: read from its auth config when needed, never stored per user."""


class _Owner(Protocol):
    @property
    def app_name(self) -> str: ...

    @property
    def user_id(self) -> str: ...


class CallbackContextLike(Protocol):
    """What ``load_credential`` needs of a tool's context: ``Context`` / ``ToolContext`` fit."""

    @property
    def invocation_context(self) -> _Owner: ...


Owner = tuple[str, str]
"""(app_name, user_id)"""


def _owner(app_name: str, user_id: str, credential_key: str | None = None) -> Owner:
    for what, value, limit in (
        ("app name", app_name, KEY_LENGTH),
        ("user id", user_id, KEY_LENGTH),
        ("credential key", credential_key, CREDENTIAL_KEY_LENGTH),
    ):
        if value is None:
            continue
        if not value:
            raise ValueError(f"the {what} of a credential must not be empty")
        if len(value) > limit:
            raise LimitExceededError(
                f"the {what} {value[:40]!r}... is {len(value)} characters; credential services "
                f"keep at most {limit}. Use a shorter one (or a hash of it)."
            )
    return app_name, user_id


class BaseCredentialService(abc.ABC):
    """Keeps each user's credentials per app, under ``auth_config.credential_key``.

    ADK's ``load_credential`` and ``save_credential`` take a tool's context
    (the app and user are its invocation's); ``load_user_credential`` and the
    other ``*_user_*`` methods take them directly (CLIs, tests, servers).
    Loading an expired OAuth2 credential refreshes it (refresh token, or a
    new client-credentials token) and saves the result; ``http_client`` is
    used for those requests. Subclasses implement four storage methods.
    """

    def __init__(self, *, http_client: httpx2.AsyncClient | None = None) -> None:
        self.http_client = http_client

    # -- storage, per backend ---------------------------------------------------------------
    @abc.abstractmethod
    async def _read(self, owner: Owner, credential_key: str) -> AuthCredential | None:
        """The stored credential, or None."""

    @abc.abstractmethod
    async def _write(self, owner: Owner, credential_key: str, credential: AuthCredential) -> None:
        """Store ``credential``, replacing what was stored under the key."""

    @abc.abstractmethod
    async def _remove(self, owner: Owner, credential_key: str) -> None:
        """Forget the credential (no error if there is none)."""

    @abc.abstractmethod
    async def _keys(self, owner: Owner) -> list[str]:
        """The user's credential keys in the app, sorted."""

    # -- ADK's API ----------------------------------------------------------------------------
    async def load_credential(
        self, auth_config: AuthConfig, callback_context: CallbackContextLike
    ) -> AuthCredential | None:
        """The credential saved for the context's app and user under the config's key.

        None if there is none, or if it expired and cannot be renewed (the user
        must sign in again).
        """
        invocation = callback_context.invocation_context
        return await self.load_user_credential(
            app_name=invocation.app_name, user_id=invocation.user_id, auth_config=auth_config
        )

    async def save_credential(
        self, auth_config: AuthConfig, callback_context: CallbackContextLike
    ) -> None:
        """Save ``auth_config.exchanged_auth_credential`` for the context's app and user."""
        invocation = callback_context.invocation_context
        await self.save_user_credential(
            app_name=invocation.app_name, user_id=invocation.user_id, auth_config=auth_config
        )

    async def delete_credential(
        self, auth_config: AuthConfig, callback_context: CallbackContextLike
    ) -> None:
        """Forget the context's user's credential for this config (e.g. after the API said 401)."""
        invocation = callback_context.invocation_context
        await self.delete_user_credential(
            app_name=invocation.app_name, user_id=invocation.user_id, auth_config=auth_config
        )

    # -- by app and user ----------------------------------------------------------------------
    async def load_user_credential(
        self, *, app_name: str, user_id: str, auth_config: AuthConfig
    ) -> AuthCredential | None:
        """``load_credential`` for ``app_name`` and ``user_id``."""
        key = auth_config.key
        owner = _owner(app_name, user_id, key)
        found = await self._read(owner, key)
        if found is None or not is_expired(found):
            return found
        return await self._renew(owner, auth_config, found)

    async def save_user_credential(
        self, *, app_name: str, user_id: str, auth_config: AuthConfig
    ) -> None:
        """``save_credential`` for ``app_name`` and ``user_id``.

        The credential must be usable for the scheme (``check_credential``: an
        API key, HTTP credentials, an OAuth2 access token); OAuth2 values used
        only during the sign-in (code, state, PKCE verifier) and the tool's client
        secret (read from its auth config when needed) are not stored.
        """
        key = auth_config.key
        owner = _owner(app_name, user_id, key)
        credential = auth_config.exchanged_auth_credential
        if credential is None:
            raise InvalidCredentialError(
                f"nothing to save for credential {key!r} of user {user_id!r} in app "
                f"{app_name!r}: its exchanged_auth_credential is empty. Save the config with "
                "the credential complete_credential(...) returned: auth_config.model_copy("
                "update={'exchanged_auth_credential': credential})."
            )
        check_credential(auth_config, credential)
        await self._write(owner, key, _without_one_time_values(credential))

    async def delete_user_credential(
        self, *, app_name: str, user_id: str, auth_config: AuthConfig
    ) -> None:
        """``delete_credential`` for ``app_name`` and ``user_id``."""
        key = auth_config.key
        await self._remove(_owner(app_name, user_id, key), key)

    async def list_credential_keys(self, *, app_name: str, user_id: str) -> list[str]:
        """The keys of the credentials saved for the user in the app, sorted."""
        return await self._keys(_owner(app_name, user_id))

    # -- renewal ------------------------------------------------------------------------------
    async def _renew(
        self, owner: Owner, auth_config: AuthConfig, expired: AuthCredential
    ) -> AuthCredential | None:
        key = auth_config.key
        where = f"credential {key!r} of user {owner[1]!r} in app {owner[0]!r}"
        try:
            if expired.oauth2 is not None and expired.oauth2.refresh_token:
                renewed = await refresh(expired, auth_config, http_client=self.http_client)
            elif uses_client_credentials(auth_config):
                renewed = await client_credentials_token(auth_config, http_client=self.http_client)
            else:
                logger.info("%s expired, no refresh token: the user must sign in again", where)
                return None
        except CredentialRefreshError as exc:
            if exc.error != "invalid_grant":
                raise
            # Another process may have refreshed it first (a rotated refresh token is
            # accepted once): use what it saved.
            latest = await self._read(owner, key)
            if latest is not None and latest != expired and not is_expired(latest):
                return latest
            logger.warning("%s: the provider no longer accepts its refresh token (%s)", where, exc)
            return None
        await self._write(owner, key, renewed)
        return renewed


def _without_one_time_values(credential: AuthCredential) -> AuthCredential:
    if credential.oauth2 is None:
        return credential.model_copy(deep=True)
    kept = credential.oauth2.model_copy(update=dict.fromkeys(_ONE_TIME_FIELDS | _TOOL_FIELDS))
    return credential.model_copy(deep=True, update={"oauth2": kept})
