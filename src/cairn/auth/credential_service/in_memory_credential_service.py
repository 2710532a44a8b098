"""Credentials in this process's memory: for tests, demos and single-process tools."""

from __future__ import annotations

import httpx2

from cairn.auth.auth_credential import AuthCredential
from cairn.auth.credential_service.base_credential_service import BaseCredentialService, Owner


class InMemoryCredentialService(BaseCredentialService):
    """Credentials kept in this process's memory, gone when it exits.

    Each credential is kept as its JSON, so what is loaded is always a fresh
    object (changing it changes nothing stored).
    """

    def __init__(self, *, http_client: httpx2.AsyncClient | None = None) -> None:
        super().__init__(http_client=http_client)
        self._credentials: dict[Owner, dict[str, str]] = {}

    async def _read(self, owner: Owner, credential_key: str) -> AuthCredential | None:
        found = self._credentials.get(owner, {}).get(credential_key)
        return None if found is None else AuthCredential.model_validate_json(found)

    async def _write(self, owner: Owner, credential_key: str, credential: AuthCredential) -> None:
        self._credentials.setdefault(owner, {})[credential_key] = credential.model_dump_json(
            exclude_none=True
        )

    async def _remove(self, owner: Owner, credential_key: str) -> None:
        self._credentials.get(owner, {}).pop(credential_key, None)

    async def _keys(self, owner: Owner) -> list[str]:
        return sorted(self._credentials.get(owner, {}))
