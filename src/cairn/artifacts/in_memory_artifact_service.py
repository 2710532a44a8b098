"""Artifacts kept in this process's memory: for tests and trying things out."""

from __future__ import annotations

import copy
import time
from typing import Any

from google.genai import types

from cairn.artifacts.base_artifact_service import (
    ArtifactVersion,
    BaseArtifactService,
    check_filename,
    decode_part,
    encode_part,
    is_user_scoped,
)

_Key = tuple[str, str, str | None, str]
_Stored = tuple[str, str | None, bytes, ArtifactVersion]


class InMemoryArtifactService(BaseArtifactService):
    """Artifacts in a dictionary; they live as long as this object."""

    def __init__(self) -> None:
        self._versions: dict[_Key, list[_Stored]] = {}

    @staticmethod
    def _key(app_name: str, user_id: str, session_id: str | None, filename: str) -> _Key:
        check_filename(filename)
        scope = None if is_user_scoped(filename, session_id) else session_id
        return (app_name, user_id, scope, filename)

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
        key = self._key(app_name, user_id, session_id, filename)
        kind, mime_type, data = encode_part(filename, artifact)
        versions = self._versions.setdefault(key, [])
        version = versions[-1][3].version + 1 if versions else 0
        info = ArtifactVersion(
            version=version,
            custom_metadata=copy.deepcopy(custom_metadata or {}),
            create_time=time.time(),
            mime_type=mime_type,
            canonical_uri=f"memory://apps/{app_name}/users/{user_id}/{filename}/versions/{version}",
        )
        versions.append((kind, mime_type, data, info))
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
        versions = self._versions.get(self._key(app_name, user_id, session_id, filename), [])
        for kind, mime_type, data, info in reversed(versions):
            if version is None or info.version == version:
                return decode_part(kind, mime_type, data)
        return None

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str | None = None
    ) -> list[str]:
        return sorted(
            filename
            for (app, user, scope, filename), versions in self._versions.items()
            if versions and (app, user) == (app_name, user_id) and scope in (None, session_id)
        )

    async def delete_artifact(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> None:
        self._versions.pop(self._key(app_name, user_id, session_id, filename), None)

    async def list_artifact_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[ArtifactVersion]:
        versions = self._versions.get(self._key(app_name, user_id, session_id, filename), [])
        return [info.model_copy(deep=True) for *_, info in versions]
