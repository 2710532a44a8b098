"""Artifacts kept in the session store's own database, beside the sessions."""

from __future__ import annotations

import time
from typing import Any

from google.genai import types

from cairn.artifacts import _sql
from cairn.artifacts.base_artifact_service import (
    ArtifactVersion,
    BaseArtifactService,
    check_filename,
    decode_part,
    encode_part,
    is_user_scoped,
)
from cairn.artifacts.errors import InvalidArtifactNameError
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.ids import check_ids
from cairn.sessions.sql.schema import ARTIFACT_NAME_LENGTH
from cairn.sessions.sql.store import SqlSessionStore

_USER_SCOPE = ""


class SessionStoreArtifactService(BaseArtifactService):
    """Artifacts in the session store's database (table ``cairn_artifacts``).

    Works with ``SqliteSessionService`` and ``DatabaseSessionService``
    (PostgreSQL, MySQL/MariaDB, SQLite), whose migrations create the table.
    Each version is one row holding the artifact's exact bytes; concurrent
    saves of one filename, from any number of processes, get distinct versions.
    """

    def __init__(self, session_service: BaseSessionService) -> None:
        if not isinstance(session_service, SqlSessionStore):
            raise TypeError(
                "SessionStoreArtifactService keeps artifacts in the session store's database, "
                f"and {type(session_service).__name__} is not one of cairn's SQL stores "
                "(SqliteSessionService, DatabaseSessionService). Use InMemoryArtifactService "
                "or FileArtifactService instead."
            )
        self.session_service = session_service

    @staticmethod
    def _owner(app_name: str, user_id: str, session_id: str | None, filename: str) -> _sql.Owner:
        check_filename(filename)
        if len(filename) > ARTIFACT_NAME_LENGTH:
            raise InvalidArtifactNameError(
                filename[:40] + "...",
                f"it is {len(filename)} characters and the store keeps at most "
                f"{ARTIFACT_NAME_LENGTH}",
            )
        scope = _USER_SCOPE if is_user_scoped(filename, session_id) else session_id
        assert scope is not None
        if scope == _USER_SCOPE:
            check_ids(app_name, user_id)
        else:
            check_ids(app_name, user_id, scope)
        return (app_name, user_id, scope)

    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        artifact: types.Part,
        session_id: str | None = None,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        owner = self._owner(app_name, user_id, session_id, filename)
        stored = encode_part(filename, artifact)
        version: int = await self.session_service.database.transaction(
            _sql.save,
            owner,
            filename,
            stored,
            dict(custom_metadata or {}),
            time.time(),
            write=True,
        )
        return version

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> types.Part | None:
        owner = self._owner(app_name, user_id, session_id, filename)
        found = await self.session_service.database.transaction(
            _sql.load, owner, filename, version, write=False
        )
        return None if found is None else decode_part(*found)

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str | None = None
    ) -> list[str]:
        scopes = [_USER_SCOPE] if session_id is None else [_USER_SCOPE, session_id]
        found = await self.session_service.database.transaction(
            _sql.keys, app_name, user_id, scopes, write=False
        )
        # A user-scoped save without the prefix (session_id=None) is listed under its name.
        return found

    async def delete_artifact(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> None:
        owner = self._owner(app_name, user_id, session_id, filename)
        await self.session_service.database.transaction(_sql.remove, owner, filename, write=True)

    async def list_artifact_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[ArtifactVersion]:
        owner = self._owner(app_name, user_id, session_id, filename)
        return await self.session_service.database.transaction(
            _sql.versions, owner, filename, write=False
        )
