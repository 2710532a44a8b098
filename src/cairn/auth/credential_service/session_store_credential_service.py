"""Credentials kept in the session store's own database, beside the sessions."""

from __future__ import annotations

import time
import weakref

import httpx2
from sqlalchemy.exc import IntegrityError

from cairn.auth.auth_credential import AuthCredential
from cairn.auth.credential_service import _sql
from cairn.auth.credential_service._stored_form import EncryptionKey, StoredForm
from cairn.auth.credential_service.base_credential_service import BaseCredentialService, Owner
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.sql.store import SqlSessionStore

_WRITE_ATTEMPTS = 3

_IN_MEMORY_ROWS: weakref.WeakKeyDictionary[
    InMemorySessionService, dict[tuple[str, str, str], str]
] = weakref.WeakKeyDictionary()
"""The credentials of each in-memory session store, as stored text; they live as long as it."""


class SessionStoreCredentialService(BaseCredentialService):
    """Credentials per app and user in the session store's database (table ``cairn_credentials``).

    Works with ``SqliteSessionService`` and ``DatabaseSessionService``
    (PostgreSQL, MySQL/MariaDB, SQLite), whose migrations create the table;
    with an ``InMemorySessionService`` they live in memory as long as it does.

    **Without** ``encryption_key`` credentials (tokens, API keys, secrets) are
    stored as plain JSON: anyone who can read the database can read them.
    With it (a Fernet key from ``new_encryption_key()``, or a list of keys,
    newest first, while rotating) each is encrypted at rest together with its
    app, user and key. A wrong or missing key raises
    ``CredentialDecryptionError`` and changes nothing.
    """

    def __init__(
        self,
        session_service: BaseSessionService,
        *,
        encryption_key: EncryptionKey | None = None,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        super().__init__(http_client=http_client)
        if not isinstance(session_service, SqlSessionStore | InMemorySessionService):
            raise TypeError(
                "SessionStoreCredentialService keeps credentials in the session store's "
                f"database, and {type(session_service).__name__} is neither one of cairn's SQL "
                "stores nor InMemorySessionService. Use InMemoryCredentialService, or subclass "
                "BaseCredentialService for your store."
            )
        self.session_service = session_service
        self._stored_form = StoredForm(encryption_key)

    @property
    def encrypts(self) -> bool:
        """Whether credentials are encrypted at rest."""
        return self._stored_form.encrypts

    def _memory(self) -> dict[tuple[str, str, str], str] | None:
        if isinstance(self.session_service, InMemorySessionService):
            return _IN_MEMORY_ROWS.setdefault(self.session_service, {})
        return None

    async def _read(self, owner: Owner, credential_key: str) -> AuthCredential | None:
        memory = self._memory()
        if memory is not None:
            text = memory.get((*owner, credential_key))
        else:
            store = self.session_service
            assert isinstance(store, SqlSessionStore)
            text = await store.database.transaction(_sql.read, owner, credential_key, write=False)
        return None if text is None else self._stored_form.decode(owner, credential_key, text)

    async def _write(self, owner: Owner, credential_key: str, credential: AuthCredential) -> None:
        text = self._stored_form.encode(owner, credential_key, credential)

        def check_replaced(existing: str) -> None:
            # Refuse to replace what this service cannot read (another key): nothing is lost.
            self._stored_form.decode(owner, credential_key, existing)

        memory = self._memory()
        if memory is not None:
            existing = memory.get((*owner, credential_key))
            if existing is not None:
                check_replaced(existing)
            memory[(*owner, credential_key)] = text
            return
        store = self.session_service
        assert isinstance(store, SqlSessionStore)
        for attempt in range(_WRITE_ATTEMPTS):
            try:
                await store.database.transaction(
                    _sql.write, owner, credential_key, text, time.time(), check_replaced, write=True
                )
                return
            except IntegrityError:  # another writer inserted the same key first
                if attempt + 1 == _WRITE_ATTEMPTS:
                    raise

    async def _remove(self, owner: Owner, credential_key: str) -> None:
        memory = self._memory()
        if memory is not None:
            memory.pop((*owner, credential_key), None)
            return
        store = self.session_service
        assert isinstance(store, SqlSessionStore)
        await store.database.transaction(_sql.remove, owner, credential_key, write=True)

    async def _keys(self, owner: Owner) -> list[str]:
        memory = self._memory()
        if memory is not None:
            return sorted(key for app, user, key in memory if (app, user) == owner)
        store = self.session_service
        assert isinstance(store, SqlSessionStore)
        return await store.database.transaction(_sql.keys, owner, write=False)
